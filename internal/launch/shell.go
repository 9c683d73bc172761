package launch

import (
	"strings"
)

// Quote returns s as one POSIX shell word. Words made only of characters
// no shell treats specially are left bare so that plans stay readable;
// everything else is single-quoted, each ' inside it becoming
//
//	'\''
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, unsafe) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func unsafe(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune("_-+=:,./@%", r)
}

// QuoteArgv renders argv as one shell command line.
func QuoteArgv(argv []string) string {
	ws := make([]word, len(argv))
	for i, a := range argv {
		ws[i] = lit(a)
	}
	return shellLine(ws)
}

// part is a piece of one argv element: literal text, or a reference the
// scheduler expands at run time ($SLURM_NODEID, $(MASTER_ADDR)).
type part struct {
	s   string
	ref bool
}

// word is one argv element, made of parts.
type word []part

func lit(s string) word { return word{{s: s}} }

// plain joins the parts as they are; only meaningful when no part is a
// reference.
func (w word) plain() string {
	var b strings.Builder
	for _, p := range w {
		b.WriteString(p.s)
	}
	return b.String()
}

// shell renders the word for a POSIX shell: literal parts quoted,
// references double-quoted so that they expand to exactly one word.
func (w word) shell() string {
	var b strings.Builder
	for _, p := range w {
		if p.ref {
			b.WriteString(`"` + p.s + `"`)
		} else {
			b.WriteString(Quote(p.s))
		}
	}
	return b.String()
}

// kube renders the word for a Kubernetes container command, where the
// kubelet expands $(VAR) and reduces $$ to $: every $ of literal text is
// doubled so that program arguments are passed exactly as given.
func (w word) kube() string {
	var b strings.Builder
	for _, p := range w {
		if p.ref {
			b.WriteString(p.s)
		} else {
			b.WriteString(strings.ReplaceAll(p.s, "$", "$$"))
		}
	}
	return b.String()
}

func shellLine(ws []word) string { return strings.Join(shellWords(ws), " ") }

// shellWords renders a command's words. The first is quoted when it holds
// '=', which a shell would otherwise take for a variable assignment.
func shellWords(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.shell()
		if i == 0 && out[i] == w.plain() && strings.Contains(out[i], "=") {
			out[i] = "'" + out[i] + "'"
		}
	}
	return out
}

// comment makes free text (a layout name, a host) safe to put after a #:
// a newline in it would otherwise end the comment and start a command.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == 0x85 {
			return ' '
		}
		return r
	}, s)
}
