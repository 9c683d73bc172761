// Package english holds the few word forms mimoplan's messages share.
package english

import "strconv"

// Plural is n with noun, in the plural unless n is 1: "1 GPU", "8 GPUs".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
