package layout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

var (
	topFields     = []string{"version", "name", "target", "target_version", "world_size", "cluster", "batch", "training", "modules"}
	clusterFields = []string{"nodes", "gpus_per_node", "gpu_memory"}
	batchFields   = []string{"micro_batch_size", "global_batch_size"}
	moduleFields  = []string{"name", "num_ranks", "rank_offset", "tp", "gtp_remat", "cp", "pp", "dp", "ep", "expt_tp", "expt_gtp_remat", "num_experts", "vpp", "model"}
	// sizeFields are the parallel sizes: positive, default 1, at most world_size.
	sizeFields = []string{"tp", "gtp_remat", "cp", "pp", "ep", "expt_tp", "expt_gtp_remat"}

	moduleName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	yamlLine   = regexp.MustCompile(`line (\d+)(?:, column (\d+))?:? ?`)
	// wholeDigits matches integers too large for YAML's int, which it then
	// tags as floats.
	wholeDigits = regexp.MustCompile(`^[-+]?[0-9]+$`)
	// decimal is how a layout writes an integer.
	decimal       = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
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
	return parse(file, data, false)
}

func parse(file string, data []byte, spec bool) (*Layout, *diag.List) {
	p := &parser{
		l:    &Layout{File: file, Target: TargetCore, TargetVersion: upstream.Latest(), pos: map[string]diag.Pos{"": {Line: 1, Column: 1}}},
		d:    &diag.List{File: file},
		spec: spec,
	}
	root, ok := p.document(data)
	if ok {
		p.top(root)
	}
	p.d.Sort()
	return p.l, p.d
}

func (p *parser) document(data []byte) (n *yaml.Node, ok bool) {
	start := diag.Pos{Line: 1, Column: 1}
	switch {
	case len(data) > MaxFileSize:
		p.d.Add(diag.RuleYAMLSyntax, start, "", "split the layout or remove what is not a layout", "file is larger than %d bytes; a layout is a few hundred", MaxFileSize)
		return nil, false
	case !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0:
		p.d.Add(diag.RuleYAMLSyntax, start, "", "a layout is YAML text: check that the right file was given", "file is not UTF-8 text")
		return nil, false
	}
	defer func() {
		// The YAML library is not ours; whatever it does with hostile input
		// must end as a diagnostic, never a crash.
		if r := recover(); r != nil {
			p.d.Add(diag.RuleYAMLSyntax, start, "", "", "cannot parse YAML: %v", r)
			n, ok = nil, false
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.d.Add(diag.RuleYAMLSyntax, start, "", "start from a layout in layouts/ or docs/layout.md", "file is empty")
		} else {
			p.d.Add(diag.RuleYAMLSyntax, errorPos(err, data), "", "", "%s", yamlMessage(err))
		}
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		var pos diag.Pos
		if err == nil {
			pos = nodePos(&extra)
		} else {
			pos = errorPos(err, data)
		}
		p.d.Add(diag.RuleYAMLSyntax, pos, "", "keep one layout per file, without a second '---'", "file holds more than one YAML document")
		return nil, false
	}
	if len(doc.Content) == 0 {
		p.d.Add(diag.RuleYAMLSyntax, start, "", "start from a layout in layouts/ or docs/layout.md", "file is empty")
		return nil, false
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		p.d.Add(diag.RuleYAMLSyntax, nodePos(root), "", "a layout starts with 'version: 1' and has keys such as world_size and modules", "layout must be a YAML mapping, got %s", describe(root))
		return nil, false
	}
	return root, true
}

// errorPos extracts the line (and column, where given) from a YAML error.
// yaml.v3 counts lines from 0 in its parser's errors ("did not find
// expected ...") and from 1 in its scanner's, and gives no line at all for
// an unknown anchor, which is then found in the text.
func errorPos(err error, data []byte) diag.Pos {
	msg := err.Error()
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			return offsetPos(data, i)
		}
	}
	if strings.Contains(msg, "control characters are not allowed") {
		if i := bytes.IndexFunc(data, forbidden); i >= 0 {
			return offsetPos(data, i)
		}
	}
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return diag.Pos{Line: 1, Column: 1}
	}
	line, _ := strconv.Atoi(m[1])
	col := 1
	if m[2] != "" {
		col, _ = strconv.Atoi(m[2])
	}
	if strings.Contains(msg, "did not find expected") {
		// A parser error gives the 0-based line of the collection the
		// problem is in, not of the problem.
		line++
		if p := problemLine(data, line); p > line {
			line = p
		}
		col = firstColumn(data, line)
	}
	return diag.Pos{Line: max(line, 1), Column: max(col, 1)}
}

// offsetPos is the line and column (in characters, as yaml.v3 counts
// them) of byte offset i.
func offsetPos(data []byte, i int) diag.Pos {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	return diag.Pos{Line: bytes.Count(data[:i], []byte("\n")) + 1, Column: utf8.RuneCount(data[start:i]) + 1}
}

// forbidden reports the characters YAML does not allow in a stream: C0
// and C1 controls other than tab, line feed, carriage return and NEL,
// DEL, and U+FFFE/U+FFFF.
func forbidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff:
		return true
	}
	return false
}

// maxRefine bounds the text problemLine searches: real layouts are a few
// hundred bytes, and each step parses a prefix.
const maxRefine = 128 << 10

// problemLine returns the first line, from line from on, at which the text
// stops being YAML that parses: the line of a parser error that yaml.v3
// reports at the start of its collection. It returns 0 when it cannot tell.
func problemLine(data []byte, from int) int {
	if len(data) > maxRefine {
		return 0
	}
	ends := []int{} // ends[k-1] is the offset just past line k
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	fails := func(k int) bool {
		var n yaml.Node
		err := yaml.NewDecoder(bytes.NewReader(data[:ends[k-1]])).Decode(&n)
		return err != nil && !errors.Is(err, io.EOF)
	}
	lo, hi := max(from, 1), len(ends)
	if lo > hi || !fails(hi) {
		return 0
	}
	for lo < hi { // the smallest failing prefix, if failing is monotonic
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// firstColumn is the column of the first character on a line that is not
// a space or a tab.
func firstColumn(data []byte, line int) int {
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return 1
		}
		data = data[i+1:]
	}
	for i, c := range data {
		if c != ' ' && c != '\t' {
			return i + 1
		}
	}
	return 1
}

// yamlMessage drops the library's prefix and the position, which the
// diagnostic already carries.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if loc := yamlLine.FindStringIndex(msg); loc != nil && loc[0] == 0 {
		msg = msg[loc[1]:]
	}
	return msg
}

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

// fields checks that n is a mapping of known keys and returns the values by
// key. module is the module the mapping belongs to ("" for none).
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
			p.d.Add(diag.RuleUnknownField, nodePos(k), module, "keys are plain names such as "+known[0], "%s has a key that is %s", what, describe(k))
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
		if !slices.Contains(known, k.Value) {
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
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", "target is one of core, megatron-lm, megatron-bridge", "target must be one of core, megatron-lm, megatron-bridge, got %s", describe(v))
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

func (p *parser) modules(fs map[string]field) {
	f, ok := fs["modules"]
	if !ok {
		p.d.Add(diag.RuleInvalidValue, diag.Pos{Line: 1, Column: 1}, "", "add a 'modules:' list with at least the module named language", "modules is required")
		return
	}
	seq := resolve(f.value)
	if seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
		p.d.Add(diag.RuleInvalidValue, nodePos(seq), "", "list modules as '- name: language' items", "modules must be a non-empty list, got %s", describe(seq))
		return
	}
	limit := p.l.WorldSize
	if limit == 0 {
		limit = MaxWorldSize
	}
	names := map[string]int{}
	for i, n := range seq.Content {
		m := p.module(n, i, limit)
		if m.Name != "" {
			if line, dup := names[m.Name]; dup {
				p.d.Add(diag.RuleDuplicateModule, m.Pos("name"), m.Name, "give each module its own name", "module name %q is already used at line %d", m.Name, line)
				m.Broken = true
			} else {
				names[m.Name] = m.Pos("name").Line
			}
		}
		if !m.Given("rank_offset") && !p.spec { // a spec's offsets are the planner's to choose
			if i > 0 {
				prev := p.l.Modules[i-1]
				m.RankOffset = prev.End()
				if prev.Broken || prev.Unplaced || prev.NumRanks == 0 {
					m.Unplaced = true
				}
			}
		}
		p.l.Modules = append(p.l.Modules, m)
	}
}

func (p *parser) module(n *yaml.Node, index, limit int) Module {
	n = resolve(n)
	m := Module{TP: 1, GTPRemat: 1, CP: 1, PP: 1, EP: 1, ExptTP: 1, ExptGTPRemat: 1,
		pos: map[string]diag.Pos{"": nodePos(n)}}
	what, module := fmt.Sprintf("modules[%d]", index), peekName(n)
	if module != "" {
		what = fmt.Sprintf("module %q", module)
	}
	fs, ok := p.fields(n, what, module, p.known(moduleFields, specModuleFields))
	if !ok {
		m.Broken = true
		return m
	}
	suggested := p.suggested
	for k, f := range fs {
		m.pos[k] = nodePos(resolve(f.value))
	}
	if f, ok := fs["name"]; ok {
		v := resolve(f.value)
		switch {
		case v.Kind != yaml.ScalarNode || v.Tag != "!!str":
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", "a module name is lower-case letters, digits and _", "%s.name must be text, got %s", what, describe(v))
			m.Broken = true
		case len(v.Value) > 64 || !moduleName.MatchString(v.Value):
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", "a module name matches [a-z][a-z0-9_]*, e.g. vision or language", "%s.name %q is not a valid module name", what, clip(v.Value))
			m.Broken = true
		default:
			m.Name = v.Value
		}
	} else {
		p.d.Add(diag.RuleInvalidValue, nodePos(n), "", "add 'name: ...'; exactly one module is named language", "%s has no name", what)
		m.Broken = true
	}
	sizes := map[string]*int{"tp": &m.TP, "gtp_remat": &m.GTPRemat, "cp": &m.CP, "pp": &m.PP, "ep": &m.EP, "expt_tp": &m.ExptTP, "expt_gtp_remat": &m.ExptGTPRemat, "dp": &m.DP, "num_ranks": &m.NumRanks}
	for _, k := range append(slices.Clone(sizeFields), "dp", "num_ranks") {
		f, ok := fs[k]
		if !ok {
			continue
		}
		v, ok := p.integer(f, k, m.Name, 1, limit, sizeHint(k, limit))
		if !ok {
			m.Broken = true
			continue
		}
		*sizes[k] = v
	}
	if f, ok := fs["rank_offset"]; ok {
		v, ok := p.integer(f, "rank_offset", m.Name, 0, MaxWorldSize, "the first global rank of the module")
		if ok {
			m.RankOffset = v
		} else {
			m.Broken = true
		}
	}
	if f, ok := fs["num_experts"]; ok {
		v, ok := p.integer(f, "num_experts", m.Name, 1, MaxWorldSize, "the number of MoE experts; leave it out for a dense module")
		if ok {
			m.NumExperts = v
		} else {
			m.Broken = true
		}
	}
	p.moduleModel(&m, fs)
	p.specModule(&m, fs)
	if !m.Broken && !p.spec {
		p.ranks(&m, fs, limit, suggested)
	}
	return m
}

// peekName returns a module mapping's name when it is a valid one, so that
// diagnostics about its other keys can name the module.
func peekName(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Value == "name" && v.Kind == yaml.ScalarNode && v.Tag == "!!str" && len(v.Value) <= 64 && moduleName.MatchString(v.Value) {
			return v.Value
		}
	}
	return ""
}

func sizeHint(field string, limit int) string {
	switch field {
	case "num_ranks":
		return fmt.Sprintf("num_ranks is the number of GPUs of the module, at most world_size (%d)", limit)
	case "dp":
		return "dp is the data-parallel size; give num_ranks instead to have dp derived"
	}
	return fmt.Sprintf("%s is a parallel size: 1 means none, at most world_size (%d)", field, limit)
}

// ranks settles num_ranks from dp, or checks that both agree.
func (p *parser) ranks(m *Module, fs map[string]field, limit int, suggested map[string]bool) {
	dense, ok := mul(limit, m.TP, m.GTPRemat, m.CP, m.PP)
	_, hasN := fs["num_ranks"]
	_, hasDP := fs["dp"]
	switch {
	case !hasN && !hasDP:
		if suggested["num_ranks"] || suggested["dp"] {
			m.Broken = true // the misspelt key is already reported
			return
		}
		p.d.Add(diag.RuleInvalidValue, m.Pos(""), m.Name, "add 'num_ranks: N' (dp is then derived) or 'dp: N'", "module needs num_ranks or dp")
		m.Broken = true
	case hasN && hasDP:
		if want, ok2 := mul(limit, dense, m.DP); !ok || !ok2 || want != m.NumRanks {
			p.d.Add(diag.RuleDPMismatch, m.Pos("dp"), m.Name,
				"give only num_ranks and let dp be derived, or fix one of them",
				"num_ranks %d != tp*gtp_remat*cp*pp*dp = %d*%d*%d*%d*%d", m.NumRanks, m.TP, m.GTPRemat, m.CP, m.PP, m.DP)
			m.Broken = true
		}
	case hasN: // dp is derived later, by validate
	default: // dp alone
		n, ok2 := mul(limit, dense, m.DP)
		if !ok || !ok2 {
			p.d.Add(diag.RuleInvalidValue, m.Pos("dp"), m.Name, "lower dp or the other sizes",
				"tp*gtp_remat*cp*pp*dp = %d*%d*%d*%d*%d is more than world_size (%d)", m.TP, m.GTPRemat, m.CP, m.PP, m.DP, limit)
			m.Broken = true
			return
		}
		m.NumRanks = n
	}
}

// mul multiplies positive factors, reporting false when the product
// exceeds limit.
func mul(limit int, xs ...int) (int, bool) {
	p := 1
	for _, x := range xs {
		if x <= 0 || p > limit/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}
