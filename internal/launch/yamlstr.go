package launch

import (
	"regexp"

	"go.yaml.in/yaml/v3"
)

// YAMLString is a string that every YAML 1.1 and 1.2 loader reads back as
// the same string: it is written double-quoted whenever a loader could
// take the plain scalar for something else. go.yaml.in/yaml/v3 quotes what
// YAML 1.2 would resolve otherwise, but not YAML 1.1's extra forms, which
// PyYAML and Kubernetes' older tools still use: "=" (the value key, which
// PyYAML cannot construct), "<<", yes/no/on/off/y/n, 0b101, 017, 1_000,
// 1:20 (base 60), 2001-12-14 (a timestamp), .5.
type YAMLString string

// MarshalYAML implements yaml.Marshaler.
func (s YAMLString) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(s)}
	if yamlAmbiguous(string(s)) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n, nil
}

// yamlNonString matches the plain scalars that YAML 1.1's types
// (yaml.org/type: bool, null, int, float, timestamp, value, merge) or the
// YAML 1.2 core schema resolve to something other than a string.
var yamlNonString = regexp.MustCompile(`^(?:` +
	// bool, 1.1 and 1.2
	`y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
	// null
	`|~|null|Null|NULL` +
	// int: binary, octal (1.1 0 prefix, 1.2 0o), decimal, hex, base 60
	`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?0o[0-7]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
	// float: 1.1 (a dot required), 1.2 (exponent without a dot), base 60, inf, nan
	`|[-+]?(?:[0-9][0-9_]*)?\.[0-9._]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*` +
	`|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
	// timestamp
	`|[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?` +
	// value and merge keys
	`|=|<<` +
	`)$`)

// yamlAmbiguous reports whether s must be quoted to stay a string.
func yamlAmbiguous(s string) bool {
	return s == "" || yamlNonString.MatchString(s)
}
