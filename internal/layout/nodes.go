package layout

// Node readers: positions, descriptions, mappings of known fields and
// integers as a layout writes them.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
)

func nodePos(n *yaml.Node) diag.Pos { return diag.Pos{Line: n.Line, Column: n.Column} }

// resolve follows aliases. Anchored nodes are shared, never copied, so even
// an alias bomb costs no more than the text it is written in.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if quotedStyle(n) {
			return fmt.Sprintf("the string %q", clip(n.Value))
		}
		switch n.Tag {
		case "!!null":
			return "no value"
		case "!!str":
			return fmt.Sprintf("the string %q", clip(n.Value))
		case "!!float":
			return fmt.Sprintf("the floating-point number %s", clip(n.Value))
		case "!!bool":
			return fmt.Sprintf("the boolean %s", clip(n.Value))
		}
		return clip(n.Value)
	}
	return "an unresolved alias"
}

// quotedStyle reports whether a scalar was written in quotes or as a block
// (| or >), which makes it text whatever it looks like.
func quotedStyle(n *yaml.Node) bool {
	return n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

type field struct {
	key, value *yaml.Node
}

// fields checks that n is a mapping of known keys (any plain key where
// known is nil) and returns the values by key. module is the module the
// mapping belongs to ("" for none).
func (p *parser) fields(n *yaml.Node, what, module string, known []string) (map[string]field, bool) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.d.Add(diag.RuleInvalidValue, nodePos(n), module, "", "%s must be a mapping, got %s", what, describe(n))
		return nil, false
	}
	out := make(map[string]field, len(n.Content)/2)
	p.suggested = map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			hint := "keys are plain names"
			if len(known) > 0 {
				hint += " such as " + known[0]
			}
			p.d.Add(diag.RuleUnknownField, nodePos(k), module, hint, "%s has a key that is %s", what, describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			p.d.Add(diag.RuleYAMLSyntax, nodePos(k), module, "write the keys out; an alias (*name) may still stand for a whole value",
				"YAML merge keys (<<) are not supported")
			continue
		}
		if prev, dup := out[k.Value]; dup {
			where := what + ": "
			if module != "" { // the diagnostic names the module already
				where = ""
			}
			p.d.Add(diag.RuleYAMLSyntax, nodePos(k), module, "remove one of the two", "%skey %q is given twice (first at line %d)", where, clip(k.Value), prev.key.Line)
			continue
		}
		if known != nil && !slices.Contains(known, k.Value) {
			hint := "known keys: " + strings.Join(known, ", ")
			if s := suggest(k.Value, known); s != "" {
				hint = fmt.Sprintf("did you mean %q? (%s)", s, hint)
				p.suggested[s] = true
			}
			if module != "" { // the diagnostic names the module already
				p.d.Add(diag.RuleUnknownField, nodePos(k), module, hint, "unknown field %q", clip(k.Value))
			} else {
				p.d.Add(diag.RuleUnknownField, nodePos(k), module, hint, "unknown field %q in %s", clip(k.Value), what)
			}
			continue
		}
		out[k.Value] = field{key: k, value: v}
	}
	return out, true
}

// integer reads a whole number in [lo, hi], written as a plain decimal.
// YAML also reads 0x10, 0o10, 0b10, 1_000 and, as YAML 1.1 does, 010 (as
// octal 8) as integers; other YAML readers disagree on several of them, so
// a layout must say what it means in decimal.
func (p *parser) integer(f field, name, module string, lo, hi int, hint string) (int, bool) {
	v := resolve(f.value)
	pos := nodePos(v)
	quoted := quotedStyle(v)
	plainInt := v.Tag == "!!int" && v.Style&yaml.TaggedStyle == 0
	// yaml.v3 tags digits too large for an int64 as a float, and a number
	// too large for a float64 (1e400) as a string.
	tooLarge := false
	if v.Kind == yaml.ScalarNode && !quoted && v.Style&yaml.TaggedStyle == 0 && v.Tag != "!!int" {
		if wholeDigits.MatchString(v.Value) {
			tooLarge = true
		} else if _, err := strconv.ParseFloat(v.Value, 64); errors.Is(err, strconv.ErrRange) {
			tooLarge = true
		}
	}
	switch {
	case tooLarge && strings.HasPrefix(v.Value, "-"):
		p.d.Add(diag.RuleInvalidValue, pos, module, hint, "%s must be at least %d, got %s", name, lo, clip(v.Value))
		return 0, false
	case tooLarge:
		p.d.Add(diag.RuleInvalidValue, pos, module, hint, "%s must be at most %d, got %s", name, hi, clip(v.Value))
		return 0, false
	case v.Kind != yaml.ScalarNode || quoted || !plainInt && v.Tag != "!!int":
		h := hint
		if v.Kind == yaml.ScalarNode && quoted {
			if _, err := strconv.Atoi(v.Value); err == nil {
				h = "remove the quotes: " + name + " is a number"
			}
		}
		p.d.Add(diag.RuleInvalidValue, pos, module, h, "%s must be a whole number, got %s", name, describe(v))
		return 0, false
	case !decimal.MatchString(v.Value):
		var x int64
		what := clip(v.Value)
		if err := v.Decode(&x); err == nil {
			what = fmt.Sprintf("%s, which YAML reads as %d", what, x)
		}
		p.d.Add(diag.RuleInvalidValue, pos, module, "write the number in plain decimal digits, without a leading zero, prefix or '_'",
			"%s must be a decimal number, got %s", name, what)
		return 0, false
	}
	x, err := strconv.ParseInt(v.Value, 10, 64)
	switch {
	case err != nil && strings.HasPrefix(v.Value, "-"), err == nil && x < int64(lo):
		if err != nil {
			p.d.Add(diag.RuleInvalidValue, pos, module, hint, "%s must be at least %d, got %s", name, lo, clip(v.Value))
		} else {
			p.d.Add(diag.RuleInvalidValue, pos, module, hint, "%s must be at least %d, got %d", name, lo, x)
		}
		return 0, false
	case err != nil || x > int64(hi):
		p.d.Add(diag.RuleInvalidValue, pos, module, hint, "%s must be at most %d, got %s", name, hi, clip(v.Value))
		return 0, false
	}
	return int(x), true
}

// positive reads a number above 0 and at most hi, written as a plain
// decimal (1, 1.5, 2e0).
func (p *parser) positive(f field, name, module string, hi float64, hint string) (float64, bool) {
	v := resolve(f.value)
	pos := nodePos(v)
	numeric := v.Kind == yaml.ScalarNode && !quotedStyle(v) && v.Style&yaml.TaggedStyle == 0 &&
		(v.Tag == "!!int" || v.Tag == "!!float")
	if !numeric {
		h := hint
		if v.Kind == yaml.ScalarNode && quotedStyle(v) && plainNumber.MatchString(v.Value) {
			h = "remove the quotes: " + name + " is a number"
		}
		p.d.Add(diag.RuleInvalidValue, pos, module, h, "%s must be a number, got %s", name, describe(v))
		return 0, false
	}
	x, err := strconv.ParseFloat(v.Value, 64)
	switch {
	case strings.HasPrefix(v.Value, "-") || x == 0 && (err == nil || errors.Is(err, strconv.ErrRange)): // 0, or below float64's least (1e-400)
		p.d.Add(diag.RuleInvalidValue, pos, module, hint, "%s must be above 0, got %s", name, clip(v.Value))
		return 0, false
	case !plainNumber.MatchString(strings.TrimPrefix(v.Value, "+")):
		p.d.Add(diag.RuleInvalidValue, pos, module, "write the number in plain decimal digits (1, 1.25, 2e0)",
			"%s must be a decimal number, got %s", name, clip(v.Value))
		return 0, false
	case err != nil || x > hi:
		p.d.Add(diag.RuleInvalidValue, pos, module, hint, "%s must be at most %g, got %s", name, hi, clip(v.Value))
		return 0, false
	}
	return x, true
}
