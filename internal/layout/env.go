package layout

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
)

// EnvVar is a variable of the layout's env block: the environment every
// rank of the job gets, as a recipe states it (Megatron-Bridge's
// performance recipes keep theirs in env_vars, e.g.
// perf_recipes/llama/h100/llama3.py:139-155 at 067f987), which every
// launch plan sets and the estimate reads where it changes memory.
type EnvVar struct{ Name, Value string }

// AllocConf is PyTorch's caching allocator configuration: comma-separated
// option:value pairs (c10 AllocatorConfig::parseArgs).
const AllocConf = "PYTORCH_CUDA_ALLOC_CONF"

// EnvNamePattern is what a shell, torchrun and Kubernetes all take as a
// variable name.
var EnvNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (p *parser) env(fs map[string]field) {
	f, ok := fs["env"]
	if !ok {
		return
	}
	ef, ok := p.fields(f.value, "env", "", nil)
	if !ok {
		return
	}
	// In the layout's order, which the plans keep.
	vars := make([]field, 0, len(ef))
	for _, v := range ef {
		vars = append(vars, v)
	}
	slices.SortFunc(vars, func(a, b field) int {
		return cmp.Or(cmp.Compare(a.key.Line, b.key.Line), cmp.Compare(a.key.Column, b.key.Column))
	})
	for _, kv := range vars {
		name, v := kv.key.Value, resolve(kv.value)
		pos := nodePos(v)
		if !EnvNamePattern.MatchString(name) {
			p.d.Add(diag.RuleInvalidValue, nodePos(kv.key), "", "a variable name is letters, digits and _, not starting with a digit",
				"env: %q is not a variable name", clip(name))
			continue
		}
		// A number or a boolean is set as written (CUDA_DEVICE_MAX_CONNECTIONS: 1).
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			p.d.Add(diag.RuleInvalidValue, pos, "", "give the value as text: "+name+": \"...\"", "env.%s must be text, a number or a boolean, got %s", name, describe(v))
			continue
		}
		if strings.ContainsRune(v.Value, 0) {
			p.d.Add(diag.RuleInvalidValue, pos, "", "", "env.%s holds a NUL byte", name)
			continue
		}
		if name == AllocConf {
			if bad := badExpandable(v.Value); bad != "" {
				p.d.Add(diag.RuleInvalidValue, pos, "", "PyTorch takes expandable_segments:True or expandable_segments:False and raises on anything else (c10 AllocatorConfig::parseExpandableSegments)",
					"env.%s: expandable_segments must be True or False, got %q", name, clip(bad))
				continue
			}
		}
		p.l.pos["env."+name] = pos
		p.l.Env = append(p.l.Env, EnvVar{name, v.Value})
	}
}

// allocOptions are the option:value pairs of a PYTORCH_CUDA_ALLOC_CONF
// value, in order.
func allocOptions(conf string) [][2]string {
	var out [][2]string
	for _, opt := range strings.Split(conf, ",") {
		k, v, _ := strings.Cut(opt, ":")
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}

// badExpandable is the value conf gives expandable_segments when PyTorch
// would refuse it ("" when it takes it or conf does not set it).
func badExpandable(conf string) string {
	for _, o := range allocOptions(conf) {
		if o[0] == "expandable_segments" && o[1] != "True" && o[1] != "False" {
			if o[1] == "" {
				return "nothing"
			}
			return o[1]
		}
	}
	return ""
}

// EnvValue is the env block's value of name, and whether it sets it.
func (l *Layout) EnvValue(name string) (string, bool) {
	for _, e := range l.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// ExpandableSegments reports whether the env block turns on PyTorch's
// expandable segments (PYTORCH_CUDA_ALLOC_CONF's expandable_segments:True,
// the last such option winning, as PyTorch reads them in order), which
// changes the allocator's reserve above its peak (docs/estimate.md).
func (l *Layout) ExpandableSegments() bool {
	conf, ok := l.EnvValue(AllocConf)
	on := false
	if ok {
		for _, o := range allocOptions(conf) {
			if o[0] == "expandable_segments" {
				on = o[1] == "True"
			}
		}
	}
	return on
}

// EnvPos is where the env block states name.
func (l *Layout) EnvPos(name string) diag.Pos { return l.Pos("env." + name) }
