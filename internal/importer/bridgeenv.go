package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
)

// mimoVar is one of the llava examples' variables: MIMO_<PREFIX>_<SUFFIX>.
var mimoVar = regexp.MustCompile(`^` + megatron.BridgeEnvPrefix + `([A-Z][A-Z0-9_]*)_(` + strings.Join(megatron.BridgeSuffixes, "|") + `)$`)

// BridgeEnv reads the MIMO_<PREFIX>_TP, _PP, _DP and _OFFSET variables of
// Megatron-Bridge's llava examples (LLM the language module, VISION,
// AUDIO, ... the encoders) into a megatron-bridge layout. Every module
// needs all four: the examples' defaults differ from one to the other.
func BridgeEnv(env map[string]string) (*Layout, error) {
	grids := map[string]map[string]int{}
	for k, v := range env {
		m := mimoVar.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s=%q is not a whole number", k, v)
		}
		if grids[m[1]] == nil {
			grids[m[1]] = map[string]int{}
		}
		grids[m[1]][m[2]] = n
	}
	if len(grids) == 0 {
		return nil, fmt.Errorf("no MIMO_<MODULE>_TP/_PP/_DP/_OFFSET variables")
	}
	l := &Layout{Target: "megatron-bridge"}
	for prefix, g := range grids {
		for _, s := range megatron.BridgeSuffixes {
			if _, ok := g[s]; !ok {
				return nil, fmt.Errorf("MIMO_%s_%s is missing (the llava examples' defaults differ, so every module needs TP, PP, DP and OFFSET)", prefix, s)
			}
		}
		for _, s := range []string{"TP", "PP", "DP"} {
			if g[s] < 1 {
				return nil, fmt.Errorf("MIMO_%s_%s must be 1 or more, got %d", prefix, s, g[s])
			}
		}
		n, err := product(fmt.Sprintf("MIMO_%s_TP x _PP x _DP", prefix), g["TP"], g["PP"], g["DP"])
		if err != nil {
			return nil, err
		}
		if g["OFFSET"] > layout.MaxWorldSize {
			return nil, fmt.Errorf("MIMO_%s_OFFSET %d is more than %d, the most a layout allows", prefix, g["OFFSET"], layout.MaxWorldSize)
		}
		l.Modules = append(l.Modules, Module{Name: megatron.BridgeModuleName(prefix), NumRanks: n,
			RankOffset: g["OFFSET"], TP: g["TP"], PP: g["PP"], GTPRemat: 1, CP: 1, EP: 1, ExptTP: 1, ExptGTPRemat: 1})
	}
	sort.Slice(l.Modules, func(i, j int) bool {
		a, b := l.Modules[i], l.Modules[j]
		return a.RankOffset < b.RankOffset || a.RankOffset == b.RankOffset && a.Name < b.Name
	})
	for _, m := range l.Modules {
		l.WorldSize = max(l.WorldSize, m.RankOffset+m.NumRanks)
	}
	return l, nil
}

// ScriptEnv reads the variable assignments of a shell script without
// running it: NAME=VALUE words at the start of a command, after an
// optional export (export MIMO_LLM_TP=4; MIMO_LLM_TP=2 MIMO_LLM_DP=2
// torchrun ...), their values unquoted as the shell would for plain,
// single- and double-quoted text. A later assignment wins.
func ScriptEnv(r io.Reader) (map[string]string, error) {
	env, _, err := readScript(r, "")
	return env, err
}

// topologyHeredoc ends the here-document in which launch-plan's sh and
// slurm plans carry the layout's topology (internal/launch heredocEnd; the
// round-trip test holds the two together).
const topologyHeredoc = "MIMOPLAN_TOPOLOGY_JSON"

// maxTopology bounds the topology here-document read back: launch-plan's
// topology holds the modules' sizes and the training settings, a few
// kilobytes.
const maxTopology = 16 << 20

// readScript reads a script's variable assignments (ScriptEnv), only
// those whose names start with prefix ("" for all), and the text of a
// launch-plan topology here-document in it, nil when none. Memory stays
// bounded whatever the script's size (a line, the here-document and the
// variables kept); a line without prefix and without the here-document is
// skipped unread, so that a 175 MB script of other variables takes a
// second, not 36 s and 580 MB.
func readScript(r io.Reader, prefix string) (env map[string]string, topology []byte, err error) {
	env = map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	inDoc := false
	for sc.Scan() {
		raw := sc.Bytes()
		if inDoc {
			if string(raw) == topologyHeredoc {
				inDoc = false
			} else if topology = append(append(topology, raw...), '\n'); len(topology) > maxTopology {
				return nil, nil, fmt.Errorf("the %s here-document is larger than %d bytes: not a topology launch-plan wrote", topologyHeredoc, maxTopology)
			}
			continue
		}
		if prefix != "" && !bytes.Contains(raw, []byte(prefix)) && !bytes.Contains(raw, []byte(topologyHeredoc)) {
			continue
		}
		line := strings.TrimSpace(string(raw))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.Contains(line, "<<'"+topologyHeredoc+"'") {
			inDoc, topology = true, nil
		}
		words := shellWords(line)
		if len(words) > 0 && words[0] == "export" {
			words = words[1:]
		}
		for _, w := range words {
			name, val, ok := strings.Cut(w, "=")
			if !ok || !layout.EnvNamePattern.MatchString(name) {
				break
			}
			if strings.HasPrefix(name, prefix) {
				env[name] = val
			}
		}
	}
	return env, topology, sc.Err()
}

// topologyTraining reads the training object of a launch-plan topology
// back into training settings, in the layout's key order (a key the
// layout does not know goes last, for validate to name).
func topologyTraining(topology []byte) ([]Setting, error) {
	var t struct {
		Training map[string]json.RawMessage `json:"training"`
	}
	if err := json.Unmarshal(topology, &t); err != nil {
		return nil, fmt.Errorf("the plan's topology: %w", err)
	}
	var out []Setting
	for _, k := range layout.TrainingKeys() {
		if v, ok := t.Training[k.Name]; ok {
			out = append(out, Setting{k.Name, string(v)})
			delete(t.Training, k.Name)
		}
	}
	rest := make([]string, 0, len(t.Training))
	for k := range t.Training {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, Setting{k, string(t.Training[k])})
	}
	return out, nil
}

// topologyEnv reads the env object of a launch-plan topology back into
// the layout's env block, in its order (json's maps keep none).
func topologyEnv(topology []byte) ([]layout.EnvVar, error) {
	var t struct {
		Env json.RawMessage `json:"env"`
	}
	if err := json.Unmarshal(topology, &t); err != nil {
		return nil, fmt.Errorf("the plan's topology: %w", err)
	}
	if t.Env == nil {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t.Env))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("the plan's topology: env is not an object")
	}
	var out []layout.EnvVar
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("the plan's topology: env: %w", err)
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("the plan's topology: env.%v: %w", tok, err)
		}
		out = append(out, layout.EnvVar{Name: tok.(string), Value: v})
	}
	return out, nil
}

// shellWords splits one line into words, removing quotes; it stops at an
// unquoted # (a comment) or ; and ignores what it cannot read.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return words
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			in = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case (c == '#' && !in) || c == ';':
			if in {
				words = append(words, cur.String())
			}
			return words
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
