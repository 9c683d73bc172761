package launch

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostile are program arguments that a careless script would split,
// expand or execute.
var hostile = []string{
	"it's", `say "hi"`, "$(touch pwned)", "`touch pwned`", "${HOME}", "$HOME", "a b", "tab\there",
	"new\nline", "cr\r\nlf", "\r", "*", "~", "!x", `back\slash`, "semi;colon", "pipe|amp&", "<in>out", "#hash", "", "-", "--",
	"--flag=it's $x", "é ünïcode", "'", `'\''`, "%s\\0", "$((1+1))", "{a,b}",
}

func needBash(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	return bash
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"abc": "abc", "--nnodes=4": "--nnodes=4", "/a/b.py": "/a/b.py", "": "''", "a b": "'a b'",
		"it's": `'it'\''s'`, "$x": "'$x'", "~": "'~'", "*": "'*'",
	} {
		assert.Equal(t, want, Quote(in), in)
	}
	assert.Equal(t, `'A=1' b`, QuoteArgv([]string{"A=1", "b"}), "a first word with = is not an assignment")

	// Every hostile string survives a real shell exactly, as one word.
	bash := needBash(t)
	dir := t.TempDir()
	line := QuoteArgv(append([]string{"printf", `%s\0`}, hostile...))
	cmd := exec.Command(bash, "-c", line)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, line)
	assert.Equal(t, hostile, splitNUL(out))
	assert.NoFileExists(t, filepath.Join(dir, "pwned"))
}

func splitNUL(b []byte) []string {
	s := strings.Split(string(b), "\x00")
	return s[:len(s)-1]
}

// fakeBin writes executables into a directory for PATH.
func fakeBin(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+body), 0o755))
	}
	return dir
}

// fakeTorchrun records its environment, the topology file's content and
// its argv, NUL-separated, in $RECORD.$SLURMD_NODENAME (else
// $RECORD.$SLURM_NODEID, else $RECORD.0).
const fakeTorchrun = `out="$RECORD.${SLURMD_NODENAME:-${SLURM_NODEID:-0}}"
topo=nofile
if [ -n "${MIMOPLAN_TOPOLOGY-}" ] && [ -f "$MIMOPLAN_TOPOLOGY" ]; then topo=$(cat "$MIMOPLAN_TOPOLOGY"; echo .); topo=${topo%.}; fi
printf '%s\0' "$CUDA_DEVICE_ORDER" "$OMP_NUM_THREADS" "${MIMOPLAN_TOPOLOGY-unset}" "${EXTRA-unset}" "$topo" > "$out"
printf '%s\0' "$@" >> "$out"
`

// record reads what fakeTorchrun wrote: the four variables, the topology
// and the argv.
func record(t *testing.T, path string) (env []string, topology string, argv []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	all := splitNUL(b)
	require.GreaterOrEqual(t, len(all), 5)
	return all[:4], all[4], all[5:]
}

func writeScript(t *testing.T, write func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, write(&b))
	path := filepath.Join(t.TempDir(), "plan")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o755))
	return path
}

// TestCommentsStayComments gives the layout a name that would end a
// comment line; every line of each header must still be a comment.
func TestCommentsStayComments(t *testing.T) {
	src := strings.Replace(threeModule, "name: three-module-4node", `name: "evil\ntouch pwned\r\u2028x"`, 1)
	p := build(t, src, Options{Hosts: hosts4, Program: []string{"t.py"}, Image: "img"})
	bsrc := strings.NewReplacer("target: core", "target: megatron-bridge", "micro_batch_size: 4", "micro_batch_size: 8").Replace(src)
	bridge := build(t, bsrc, Options{Hosts: hosts4, Program: []string{"t.py"}})
	for _, format := range Formats {
		p := p
		if format == "bridge" {
			p = bridge
		}
		var b bytes.Buffer
		require.NoError(t, Write(&b, format, p))
		sc := bufio.NewScanner(&b)
		for sc.Scan() {
			line := sc.Text()
			assert.NotContains(t, line, "\r")
			if strings.Contains(line, "touch pwned") {
				// A comment, or the name inside a JSON string.
				assert.True(t, strings.HasPrefix(line, "#") || strings.Contains(line, `"name": "evil\ntouch`) ||
					strings.Contains(line, `"name":"evil\ntouch`), "%s: %q", format, line)
			}
		}
	}
}

func TestJobName(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"Three Module 4node", "-"}:    "three-module-4node",
		{"", "-"}:                      "mimoplan",
		{"--__--", "-"}:                "mimoplan",
		{"a_b.c", "_.-"}:               "a_b.c",
		{"a_b.c", "-"}:                 "a-b-c",
		{strings.Repeat("x", 80), "-"}: strings.Repeat("x", 40),
	} {
		assert.Equal(t, want, jobName(in[0], 40, in[1]), in[0])
	}
}

func TestK8sName(t *testing.T) {
	dns1035 := regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	for in, want := range map[string]string{
		"three-module-4node":                "three-module-4node",
		"8gpu-vlm":                          "mimoplan-8gpu-vlm",
		"4":                                 "mimoplan-4",
		"Nemotron_VLM.8gpu":                 "nemotron-vlm-8gpu",
		"":                                  "mimoplan",
		"__":                                "mimoplan",
		strings.Repeat("9", 80):             "mimoplan-" + strings.Repeat("9", 31),
		"x" + strings.Repeat("-", 50) + "y": "x",
	} {
		got := k8sName(in)
		assert.Equal(t, want, got, in)
		assert.Regexp(t, dns1035, got, in)
		assert.LessOrEqual(t, len(got+"-worker-9999"), 63, in)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	assert.ErrorContains(t, Write(&bytes.Buffer{}, "xml", &Plan{}), `unknown plan format "xml"`)
	assert.Equal(t, os.FileMode(0o755), FileMode("sh"))
	assert.Equal(t, os.FileMode(0o755), FileMode("slurm"))
	assert.Equal(t, os.FileMode(0o644), FileMode("json"))
	assert.Equal(t, os.FileMode(0o644), FileMode("k8s"))
	assert.Equal(t, os.FileMode(0o644), FileMode("pytorchjob"))
	assert.Equal(t, os.FileMode(0o644), FileMode("megatron-specs"))
}
