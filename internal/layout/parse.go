package layout

import (
	"fmt"
	"regexp"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

var (
	topFields     = []string{"version", "name", "target", "target_version", "world_size", "cluster", "batch", "training", "env", "modules"}
	clusterFields = []string{"nodes", "gpus_per_node", "gpu_memory"}
	batchFields   = []string{"micro_batch_size", "global_batch_size"}

	moduleName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	yamlLine   = regexp.MustCompile(`line (\d+)(?:, column (\d+))?:? ?`)
	// wholeDigits matches integers too large for YAML's int, which it then
	// tags as floats.
	wholeDigits = regexp.MustCompile(`^[-+]?[0-9]+$`)
	// decimal is how a layout writes an integer.
	decimal = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
	// plainNumber is how a layout writes a fractional number: decimal
	// digits with an optional fraction and exponent (YAML's .inf, .nan and
	// hexadecimal forms are not numbers here).
	plainNumber   = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$|^\.[0-9]+([eE][-+]?[0-9]+)?$`)
	unknownAnchor = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)
)

// maxBatch bounds batch sizes well below any overflow of their products.
const maxBatch = 1 << 31

type parser struct {
	l *Layout
	d *diag.List
	// spec is set when reading a suggest spec (ParseSpec): sizes may be
	// left open and the constraint keys of spec.go are known.
	spec bool
	// machine, when not nil, replaces the spec's world_size and cluster
	// (ParseSpecOn).
	machine *Machine
	// suggested holds the field names offered for the unknown keys of the
	// last mapping read, so that a misspelt num_ranks is reported once, not
	// also as a missing one.
	suggested map[string]bool
	// read reads a file the layout names (hf_config); nil reads the disk.
	read func(path string, limit int64) ([]byte, error)
}

// Parse parses layout text. It never fails: everything wrong with the input
// is a diagnostic, and the Layout holds what could be read.
func Parse(file string, data []byte) (*Layout, *diag.List) {
	return parse(&parser{}, file, data)
}

func parse(p *parser, file string, data []byte) (*Layout, *diag.List) {
	p.l = &Layout{File: file, Target: TargetCore, TargetVersion: upstream.Latest(), pos: map[string]diag.Pos{"": {Line: 1, Column: 1}}}
	p.d = &diag.List{File: file}
	root, ok := p.document(data)
	if ok {
		p.top(root)
	}
	p.d.Sort()
	return p.l, p.d
}

func (p *parser) top(root *yaml.Node) {
	fs, _ := p.fields(root, "the layout", "", p.known(topFields, specTopFields))
	for k, f := range fs {
		p.l.pos[k] = nodePos(resolve(f.value))
	}
	p.version(fs)
	if f, ok := fs["name"]; ok {
		v := resolve(f.value)
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", "", "name must be text, got %s", describe(v))
		} else {
			p.l.Name = v.Value
		}
	}
	if f, ok := fs["target"]; ok {
		v := resolve(f.value)
		t := Target(v.Value)
		if v.Kind != yaml.ScalarNode || !slices.Contains(Targets, t) {
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", didYouMean(v, []string{"core", "megatron-lm", "megatron-bridge"}, "target is one of core, megatron-lm, megatron-bridge"),
				"target must be one of core, megatron-lm, megatron-bridge, got %s", describe(v))
		} else {
			p.l.Target = t
		}
	}
	if f, ok := fs["target_version"]; ok {
		v := resolve(f.value)
		ver, err := upstream.Parse(v.Value)
		switch {
		case v.Kind != yaml.ScalarNode || v.Tag == "!!null":
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", "target_version is "+upstream.Help(), "target_version must be a date or a PR number, got %s", describe(v))
		case err != nil:
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", "target_version is "+upstream.Help(), "%v", err)
		default:
			p.l.TargetVersion = ver
		}
	}
	p.world(fs)
	p.batch(fs)
	p.training(fs)
	p.env(fs)
	p.modules(fs)
	p.specTop(fs)
}

func (p *parser) version(fs map[string]field) {
	f, ok := fs["version"]
	if !ok {
		p.d.Add(diag.RuleInvalidValue, diag.Pos{Line: 1, Column: 1}, "", "add 'version: 1' as the first line", "version is required")
		return
	}
	v := resolve(f.value)
	if v.Kind == yaml.ScalarNode && v.Tag == "!!int" && v.Value == "1" && !quotedStyle(v) {
		p.l.Version = 1
		return
	}
	p.d.Add(diag.RuleUnsupportedVersion, nodePos(v), "", "this mimoplan reads 'version: 1'", "layout version %s is not supported", describe(v))
}

func (p *parser) world(fs map[string]field) {
	ws := 0
	if f, ok := fs["world_size"]; ok {
		ws, _ = p.integer(f, "world_size", "", 1, MaxWorldSize, "world_size is the total number of ranks (GPUs)")
	}
	cw := 0
	if f, ok := fs["cluster"]; ok {
		cf, ok := p.fields(f.value, "cluster", "", clusterFields)
		if ok {
			for k, c := range cf {
				p.l.pos["cluster."+k] = nodePos(resolve(c.value))
			}
			if g, ok := cf["gpu_memory"]; ok {
				p.gpuMemory(g)
			}
			c := &Cluster{}
			okN, okG := false, false
			if nf, ok := cf["nodes"]; ok {
				c.Nodes, okN = p.integer(nf, "cluster.nodes", "", 1, MaxWorldSize, "the number of machines")
			} else {
				p.d.Add(diag.RuleInvalidValue, nodePos(resolve(f.value)), "", "add 'nodes: N'", "cluster.nodes is required")
			}
			if gf, ok := cf["gpus_per_node"]; ok {
				c.GPUsPerNode, okG = p.integer(gf, "cluster.gpus_per_node", "", 1, MaxWorldSize, "the number of GPUs on each machine")
			} else {
				p.d.Add(diag.RuleInvalidValue, nodePos(resolve(f.value)), "", "add 'gpus_per_node: G'", "cluster.gpus_per_node is required")
			}
			if okN && okG {
				if c.Nodes > MaxWorldSize/c.GPUsPerNode {
					p.d.Add(diag.RuleInvalidValue, nodePos(resolve(f.value)), "", "", "cluster has %d*%d ranks, more than %d", c.Nodes, c.GPUsPerNode, MaxWorldSize)
				} else {
					cw = c.Nodes * c.GPUsPerNode
					p.l.Cluster = c
				}
			}
		}
	}
	if p.machine != nil {
		p.onMachine(ws)
		return
	}
	_, hasWS := fs["world_size"]
	_, hasCluster := fs["cluster"]
	switch {
	case !hasWS && !hasCluster:
		p.d.Add(diag.RuleInvalidValue, diag.Pos{Line: 1, Column: 1}, "", "add 'world_size: N', or 'cluster: {nodes: N, gpus_per_node: G}'", "layout needs world_size or cluster")
	case ws > 0 && cw > 0 && ws != cw:
		p.d.Add(diag.RuleWorldSizeMismatch, p.l.pos["world_size"], "",
			fmt.Sprintf("set world_size to %d, or change the cluster", cw),
			"world_size %d != cluster.nodes * cluster.gpus_per_node = %d * %d = %d", ws, p.l.Cluster.Nodes, p.l.Cluster.GPUsPerNode, cw)
		p.l.WorldSize = ws
	case ws > 0:
		p.l.WorldSize = ws
	default:
		p.l.WorldSize = cw
	}
}

func (p *parser) batch(fs map[string]field) {
	f, ok := fs["batch"]
	if !ok {
		return
	}
	bf, ok := p.fields(f.value, "batch", "", batchFields)
	if !ok {
		return
	}
	for k, b := range bf {
		p.l.pos["batch."+k] = nodePos(resolve(b.value))
	}
	b := &Batch{}
	good := true
	if mf, ok := bf["micro_batch_size"]; ok {
		b.MicroBatchSize, ok = p.integer(mf, "batch.micro_batch_size", "", 1, maxBatch, "samples per micro-batch")
		good = good && ok
	} else {
		p.d.Add(diag.RuleInvalidValue, nodePos(resolve(f.value)), "", "add 'micro_batch_size: N'", "batch.micro_batch_size is required")
		good = false
	}
	if gf, ok := bf["global_batch_size"]; ok {
		b.GlobalBatchSize, ok = p.integer(gf, "batch.global_batch_size", "", 1, maxBatch, "samples per optimizer step")
		good = good && ok
	}
	if good {
		p.l.Batch = b
	}
}
