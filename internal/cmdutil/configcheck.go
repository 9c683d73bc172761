package cmdutil

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/safetext"
)

// Check reports the config file's keys that name no flag of any command
// (top level) or of their command (in a command's section): a typo there
// would otherwise be ignored in silence.
func (c *Config) Check(root *cobra.Command) error {
	if c.File == "" {
		return nil
	}
	flags := map[string]map[string]bool{} // command -> its flags
	all := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			fs := map[string]bool{}
			sub.Flags().VisitAll(func(f *pflag.Flag) {
				if !slices.Contains(notConfigured, f.Name) {
					fs[f.Name], all[f.Name] = true, true
				}
			})
			flags[sub.Name()] = fs
			walk(sub)
		}
	}
	walk(root)
	var unknown, local []string
	for _, k := range c.v.AllKeys() {
		if !c.v.InConfig(k) {
			continue // a variable, not a key of the file
		}
		command, flag, nested := strings.Cut(k, ".")
		switch {
		case !nested && all[k]:
		case nested && flags[command] != nil && flags[command][flag]:
		default:
			unknown = append(unknown, k)
			continue
		}
		if !nested {
			flag = k
		}
		if c.Local && !slices.Contains(LocalFlags, flag) {
			local = append(local, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		var names []string
		for name := range all {
			names = append(names, name)
		}
		for command := range flags {
			names = append(names, command)
		}
		for i, k := range unknown {
			command, flag, nested := strings.Cut(k, ".")
			var guess string
			switch {
			case !nested:
				guess = closest(k, names)
			case flags[command] == nil:
				if g := closest(command, names); g != "" {
					guess = g + "." + flag
				}
			default:
				guess = command + "." + closest(flag, slices.Collect(maps.Keys(flags[command])))
				if guess == command+"." {
					guess = ""
				}
			}
			if guess != "" {
				unknown[i] += fmt.Sprintf(" (did you mean %s?)", guess)
			}
		}
		return exitcode.Usagef("config file %s: unknown key %s: keys are flag names, at the top level or under a command's name", safetext.Text(c.File), strings.Join(unknown, ", "))
	}
	if len(local) > 0 {
		slices.Sort(local)
		return exitcode.Usagef("config file %s: %s: a config file found in the working directory may not set what runs, where output goes or what is read (--%s); pass the flag, or put it in --config FILE or the user's config file", safetext.Text(c.File), strings.Join(local, ", "), flagOf(local[0]))
	}
	return nil
}

// closest is the name within edit distance 2 of s (and less than half of
// s's length), the nearest first, or "".
func closest(s string, names []string) string {
	best, bestD := "", 3
	slices.Sort(names)
	for _, n := range names {
		if d := editDistance(s, n); d < bestD && 2*d < len(s) {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	// Optimal string alignment: a swap of two neighbours ("tpo") is one
	// edit, as a typo is.
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func flagOf(key string) string {
	if _, flag, ok := strings.Cut(key, "."); ok {
		return flag
	}
	return key
}
