package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/safetext"
)

// hostileSeeds are text a CI log or a terminal would act on.
var hostileSeeds = []string{
	"::error title=INJ::x", "a\n::error::x", "\x1b[31mred\x1b[0m", "del\x7fx", "nel\u0085::warning::x", "ls\u2028::x",
	"<img src=x onerror=alert(1)>", "[a](javascript:alert(1))", "\xff\xfe", "name:", ":x", "\r::notice::y", "a|b`c`*d*",
	"x \t ::error::tabbed", strings.Repeat("w ", 50) + "::error::late",
}

// FuzzHumanOutput holds safetext's rule over every human-readable printer:
// text from input (a layout's name, its file name, an hf_config path and
// the values of a config.json) never starts a line a CI runner reads as a
// workflow command ("::", after blanks) and never reaches the output as a
// control character; Markdown carries no raw HTML or link from it, svg
// stays well-formed XML and render yaml reads the name back unchanged.
func FuzzHumanOutput(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dir := t.TempDir()
		fileName := strings.Map(func(r rune) rune {
			if r == '/' || r == 0 {
				return '_'
			}
			return r
		}, s)
		if len(fileName) > 200 || fileName == "." || fileName == ".." {
			fileName = "layout"
		}
		name := safetext.JSONQuote(s) // a YAML double-quoted scalar
		valid := "version: 1\nname: " + string(name) + "\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n" +
			"  - {name: vision, num_ranks: 4, dp: 4}\n  - {name: language, rank_offset: 4, num_ranks: 4, tp: 2, model: {preset: llama3-8b}}\n"
		cfg, _ := json.Marshal(map[string]any{"architectures": []string{s}, "num_hidden_layers": s, "hidden_size": 64})
		broken := "version: 1\nname: " + string(name) + "\nworld_size: 8\nmodules:\n" +
			"  - {name: vision, num_ranks: 3, tp: " + string(name) + "}\n" +
			"  - {name: language, num_ranks: 4, model: {hf_config: " + string(name) + "}}\n" +
			"  - {name: audio, num_ranks: 1, model: {hf_config: config.json}}\n"
		write := func(base, src string) string {
			p := filepath.Join(dir, base)
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Skip() // a name the file system refuses
			}
			return p
		}
		write("config.json", string(cfg))
		good := write(fileName+".yaml", valid)
		bad := write("bad-"+fileName+".yaml", broken)
		other := write("other.yaml", strings.Replace(valid, "dp: 4}", "tp: 2}", 1))

		run := func(args ...string) (string, string) {
			var out, errb bytes.Buffer
			execute(args, strings.NewReader(""), &out, &errb)
			return out.String(), errb.String()
		}
		check := func(what, out string, commands bool) {
			t.Helper()
			for _, line := range strings.Split(out, "\n") {
				trimmed := strings.TrimLeft(line, " \t")
				if strings.HasPrefix(trimmed, "::") && !(commands && ownCommand(line)) {
					t.Fatalf("%s: a line starts a workflow command: %q\n%s", what, line, out)
				}
				for _, r := range line {
					if r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029) {
						t.Fatalf("%s: control character %U in %q", what, r, line)
					}
				}
			}
		}
		for _, args := range [][]string{
			{"validate", good}, {"validate", bad}, {"validate", good, bad, "--format", "github"},
			{"render", good}, {"render", good, "--full"}, {"render", good, "--rank", "5"}, {"render", good, "--by", "rank"},
			{"render", bad}, {"estimate", good}, {"estimate", bad}, {"diff", good, other}, {"render", good, "--format", "markdown"},
			{"launch-plan", bad},
		} {
			out, errOut := run(args...)
			github := len(args) > 3 && args[len(args)-1] == "github"
			check(strings.Join(args[:1], " ")+" stdout", out, github)
			check(strings.Join(args[:1], " ")+" stderr", errOut, false)
		}
		md, _ := run("render", good, "--format", "markdown")
		unescaped := regexp.MustCompile(`\\.`).ReplaceAllString(md, "")
		for _, raw := range []string{"<img", "](javascript", "<a ", "<script"} {
			if strings.Contains(unescaped, raw) {
				t.Fatalf("render markdown carries %q:\n%s", raw, md)
			}
		}
		svg, _ := run("render", good, "--format", "svg")
		dec := xml.NewDecoder(strings.NewReader(svg))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("render svg is not well-formed XML: %v\n%s", err, svg)
			}
		}
		y, _ := run("render", good, "--format", "yaml")
		var doc struct{ Name string }
		if err := yaml.Unmarshal([]byte(y), &doc); err != nil {
			t.Fatalf("render yaml does not parse: %v\n%s", err, y)
		}
		if want := string([]rune(s)); doc.Name != want {
			t.Fatalf("render yaml reads back name %q, want %q", doc.Name, want)
		}
	})
}

// ownCommand reports whether line is one of validate --format github's
// own workflow commands.
func ownCommand(line string) bool {
	for _, p := range []string{"::error file=", "::warning file=", "::notice file="} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
