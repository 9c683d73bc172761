package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/english"
)

// Formats are the plan formats, in the order the CLI lists them.
var Formats = []string{"sh", "json", "slurm", "k8s", "pytorchjob", "megatron-specs", "bridge"}

// Write writes p in one of Formats.
func Write(w io.Writer, format string, p *Plan) error {
	if err := Check(format, p); err != nil {
		return err
	}
	switch format {
	case "sh":
		return WriteSh(w, p)
	case "json":
		return WriteJSON(w, p)
	case "slurm":
		return WriteSlurm(w, p)
	case "k8s":
		return WriteK8s(w, p)
	case "pytorchjob":
		return WritePyTorchJob(w, p)
	case "megatron-specs":
		return WriteMegatronSpecs(w, p)
	case "bridge":
		return WriteBridge(w, p)
	}
	return fmt.Errorf("unknown plan format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// FileMode is the mode of a plan file: scripts are executable.
func FileMode(format string) os.FileMode {
	if format == "sh" || format == "slurm" {
		return 0o755
	}
	return 0o644
}

var (
	errNoHosts = errors.New("the plan has no hosts: give one per node (--hosts or --hostfile)")
	errNoImage = errors.New("a Kubernetes plan needs a container image (--image)")
)

func (p *Plan) header(w io.Writer, how, master string) {
	name := p.Name
	if name == "" {
		name = "(unnamed layout)"
	}
	fmt.Fprintf(w, "# Launch plan for %s, written by mimoplan launch-plan.\n", comment(name))
	fmt.Fprintf(w, "# %d ranks: %s x %s, %s\n", p.WorldSize, english.Plural(p.NNodes, "node"), english.Plural(p.NProcPerNode, "GPU"), p.rdzvText(comment(master)))
	fmt.Fprintln(w, "#")
	for _, l := range strings.Split(how, "\n") {
		fmt.Fprintf(w, "# %s\n", l)
	}
	for _, n := range p.Notes {
		fmt.Fprintln(w, "#")
		for _, l := range wrap("note: "+comment(n), 76) {
			fmt.Fprintf(w, "# %s\n", l)
		}
	}
	fmt.Fprintln(w, "#")
}

// rdzvText describes the rendezvous at master.
func (p *Plan) rdzvText(master string) string {
	r := p.Rendezvous
	if r.Backend == C10d {
		return fmt.Sprintf("c10d rendezvous at %s, port %d (id %s)", master, r.MasterPort, comment(r.ID))
	}
	return fmt.Sprintf("static rendezvous at %s, port %d", master, r.MasterPort)
}

func span(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

func (p *Plan) exports(w io.Writer) {
	for _, e := range p.Env {
		fmt.Fprintf(w, "export %s=%s\n", e.Name, Quote(e.Value))
	}
}

// continued writes a command with the launcher's flags one per line and
// the program's arguments after them (see programLines).
func continued(p *Plan, nodeRank, master word) string {
	return strings.Join(shellWords(p.launcher(nodeRank, master)), " \\\n  ") + " \\\n  " + programLines(p.Program)
}

// programLines quotes the program and its arguments, starting a new line
// before each --flag so that a flag stays with its value.
func programLines(prog []string) string {
	var b strings.Builder
	for i, a := range prog {
		if i > 0 {
			if strings.HasPrefix(a, "--") {
				b.WriteString(" \\\n    ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(Quote(a))
	}
	return b.String()
}

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, f := range strings.Fields(s) {
		if line != "" && len(line)+1+len(f) > width {
			lines = append(lines, line)
			line = "  " + f
			continue
		}
		if line == "" {
			line = f
		} else {
			line += " " + f
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// jobName makes a scheduler-safe name from free text: lower-case letters,
// digits and the characters of allowed, anything else becoming '-', at most
// max characters, starting and ending with a letter or digit; "mimoplan"
// when nothing is left.
func jobName(name string, max int, allowed string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || strings.ContainsRune(allowed, r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > max {
		s = s[:max]
	}
	s = strings.TrimFunc(s, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
	if s == "" {
		return "mimoplan"
	}
	return s
}
