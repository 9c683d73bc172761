package diag_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mimoplan/mimoplan/internal/diag"
)

func TestSort(t *testing.T) {
	t.Parallel()
	l := &diag.List{File: "layout.yaml"}
	add := func(rule diag.RuleID, line, col int, msg string) {
		l.Add(rule, diag.Pos{Line: line, Column: col}, "", "", "%s", msg)
	}
	add("world-gap", 4, 2, "a")
	add("loopback-rendezvous", 0, 0, "b")
	add("dense-not-divisible", 4, 2, "c")
	add("invalid-value", 3, 9, "d")
	add("dense-not-divisible", 4, 2, "e") // equal to c's key: stays after c
	add("duplicate-host", 0, 0, "f")
	add("invalid-value", 4, 1, "g")
	add("invalid-value", 10, 1, "h") // line 10 after line 4: numbers, not text
	l.Sort()
	var got []string
	for _, d := range l.Items {
		got = append(got, d.Message)
	}
	// No position first (about the file as a whole), then by line, column
	// and rule; equal keys keep the order they were added in.
	assert.Equal(t, []string{"f", "b", "d", "g", "c", "e", "a", "h"}, got)
}
