package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// docExample is one "$ mimoplan ..." line of the documentation.
type docExample struct {
	file    string
	line    int
	command string // after "$ mimoplan ", continuation lines joined, the comment cut
	exit    int    // "# exit N" in the comment; 0 without
	gpus    int    // "on N x H100" (or H200) in the comment: --probe finds them
	gpuName string
}

var (
	exitNote = regexp.MustCompile(`\bexit (\d+)\b`)
	gpusNote = regexp.MustCompile(`\bon (\d+) x (H100|H200)\b`)
)

// docExamples reads every "$ mimoplan" line of README.md and docs/*.md.
// A line ending in a backslash goes on; a comment ("  # ...") after the
// command may give its exit code ("exit 1") when it is not 0, and, for a
// --probe, the machine it ran on ("on 2 x H200").
func docExamples(t *testing.T, root string) []docExample {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []docExample
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "$ mimoplan ")
			if !ok {
				continue
			}
			ex := docExample{file: filepath.Base(f), line: i + 1}
			for strings.HasSuffix(rest, "\\") && i+1 < len(lines) {
				i++
				rest = strings.TrimSuffix(rest, "\\") + " " + strings.TrimSpace(lines[i])
			}
			command, comment := cutComment(rest)
			ex.command = strings.TrimSpace(command)
			if m := exitNote.FindStringSubmatch(comment); m != nil {
				ex.exit, _ = strconv.Atoi(m[1])
			}
			if m := gpusNote.FindStringSubmatch(comment); m != nil {
				ex.gpus, _ = strconv.Atoi(m[1])
				ex.gpuName = m[2]
			}
			out = append(out, ex)
		}
	}
	return out
}

// cutComment splits a shell line at its comment: a # after a blank,
// outside quotes.
func cutComment(s string) (command, comment string) {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// shellWords splits a command as sh would, for what the docs use: blanks,
// quotes, globs (expanded in the current directory), "> FILE" and
// "< FILE". Anything else of the shell's (pipes, $, ;, &&) is an error.
func shellWords(s string) (args []string, in, out string, err error) {
	var words []string
	var w strings.Builder
	inWord, globbed, quote := false, false, rune(0)
	var globs []bool
	end := func() {
		if inWord {
			words, globs = append(words, w.String()), append(globs, globbed)
		}
		w.Reset()
		inWord, globbed = false, false
	}
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			end()
		case strings.ContainsRune("|;&$`()", r):
			return nil, "", "", fmt.Errorf("the test runs no %q", r)
		default:
			if strings.ContainsRune("*?[", r) {
				globbed = true
			}
			w.WriteRune(r)
			inWord = true
		}
	}
	end()
	for i := 0; i < len(words); i++ {
		switch word := words[i]; {
		case (word == ">" || word == "<") && i+1 < len(words):
			if word == ">" {
				out = words[i+1]
			} else {
				in = words[i+1]
			}
			i++
		case strings.HasPrefix(word, ">") || strings.HasPrefix(word, "<") || strings.HasPrefix(word, "2>"):
			return nil, "", "", fmt.Errorf("write redirections as > FILE or < FILE: %q", word)
		case globs[i]:
			m, err := filepath.Glob(word)
			if err != nil || len(m) == 0 {
				return nil, "", "", fmt.Errorf("%q matches nothing", word)
			}
			args = append(args, m...)
		default:
			args = append(args, word)
		}
	}
	return args, in, out, nil
}

// outside reports a path that leaves the working directory.
func outside(p string) bool {
	return filepath.IsAbs(p) || strings.HasPrefix(p, "~") || p == ".." || strings.HasPrefix(filepath.Clean(p), "../")
}

// copyInputs copies what the examples read (layouts/, testdata/ and the
// packages' testdata) from the repository to dir.
func copyInputs(t *testing.T, root, dir string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == ".git" || rel == "bin" || strings.HasSuffix(rel, "/fuzz") {
				return filepath.SkipDir
			}
			return nil
		}
		parts := strings.Split(rel, string(filepath.Separator))
		if parts[0] != "layouts" && !slices.Contains(parts, "testdata") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	require.NoError(t, err)
}

// probeOf is a machine of n GPUs of name, as NVML would list it.
func probeOf(n int, name string) func() (*gpuprobe.Snapshot, error) {
	return func() (*gpuprobe.Snapshot, error) {
		if n == 0 {
			return nil, &gpuprobe.UnavailableError{Reason: "the example names no machine (on N x H100)"}
		}
		s := &gpuprobe.Snapshot{DriverVersion: "570.86.15", CUDADriverVersion: "12.8"}
		mem, full := uint64(80<<30), "NVIDIA H100 80GB HBM3"
		if name == "H200" {
			mem, full = 141<<30, "NVIDIA H200"
		}
		for i := range n {
			s.GPUs = append(s.GPUs, gpuprobe.GPU{Index: i, Name: full, UUID: fmt.Sprintf("GPU-%04d", i),
				PCIBusID: fmt.Sprintf("00000000:%02x:00.0", i+1), MemoryBytes: mem, ComputeCapability: "9.0", MIGDevices: []string{}})
		}
		for i := range n {
			row := make([]gpuprobe.Link, n)
			for j := range n {
				row[j] = "NV18"
			}
			row[i] = "X"
			s.Links = append(s.Links, row)
		}
		return s, nil
	}
}

// TestDocExamples runs every "$ mimoplan" line of README.md and docs/*.md
// as a user pastes it at the repository's root, here a copy of its
// layouts and testdata, and checks the exit code the docs give it. An
// example reads and writes only under the working directory: a path
// before "--" or a redirection that leaves it fails the test.
func TestDocExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	examples := docExamples(t, root)
	require.Greater(t, len(examples), 30, "the docs' examples")
	for _, k := range os.Environ() {
		if name, _, _ := strings.Cut(k, "="); strings.HasPrefix(name, "MIMOPLAN_") || name == "CUDA_VISIBLE_DEVICES" {
			unsetEnv(t, name)
		}
	}
	work := t.TempDir()
	copyInputs(t, root, work)
	t.Chdir(work)
	for _, ex := range examples {
		t.Run(fmt.Sprintf("%s:%d", ex.file, ex.line), func(t *testing.T) {
			args, in, out, err := shellWords(ex.command)
			require.NoError(t, err, "%s:%d: mimoplan %s", ex.file, ex.line, ex.command)
			own := args
			if i := slices.Index(args, "--"); i >= 0 {
				own = args[:i] // a program's arguments are the program's
			}
			for _, p := range append(slices.Clone(own), in, out) {
				assert.False(t, outside(p), "%s:%d: %q is outside the working directory: write examples under it", ex.file, ex.line, p)
			}
			stdin := ""
			if in != "" {
				b, err := os.ReadFile(in)
				require.NoError(t, err)
				stdin = string(b)
			}
			code, stdout, stderr := runFull(t, stdin, t.TempDir(), probeOf(ex.gpus, ex.gpuName), args...)
			assert.Equal(t, ex.exit, code, "%s:%d: mimoplan %s\n(document another exit code as a comment: # exit N)\nstderr:\n%s", ex.file, ex.line, ex.command, stderr)
			if out != "" {
				require.NoError(t, os.WriteFile(out, []byte(stdout), 0o644))
			}
		})
	}
}
