//go:build cgo

package gpuprobe

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
)

const (
	migA = "MIG-aaaa1111-0000-0000-0000-000000000000"
	migB = "MIG-bbbb2222-0000-0000-0000-000000000000"
)

// want is the expected shape of one diagnostic; Message and Hint are
// checked for the given fragments.
type want struct {
	rule     diag.RuleID
	severity diag.Severity
	pos      diag.Pos
	message  []string
	hint     []string
}

func assertDiags(t *testing.T, got []diag.Diagnostic, wants []want) {
	t.Helper()
	require.Len(t, got, len(wants), "diagnostics: %+v", got)
	for i, w := range wants {
		d := got[i]
		assert.Equal(t, string(w.rule), d.Rule, "diagnostic %d", i)
		assert.Equal(t, w.severity, d.Severity, "diagnostic %d (%s)", i, d.Rule)
		assert.Equal(t, w.pos, diag.Pos{Line: d.Line, Column: d.Column}, "diagnostic %d (%s)", i, d.Rule)
		assert.NotEmpty(t, d.Hint, "every finding says what to do")
		for _, m := range w.message {
			assert.Contains(t, d.Message, m, "diagnostic %d (%s) message", i, d.Rule)
		}
		for _, h := range w.hint {
			assert.Contains(t, d.Hint, h, "diagnostic %d (%s) hint", i, d.Rule)
		}
		r, ok := diag.Lookup(d.Rule)
		require.True(t, ok, "rule %s is in the catalogue", d.Rule)
		assert.Equal(t, r.Severity, d.Severity, "catalogue severity of %s", d.Rule)
	}
}

func TestCheck(t *testing.T) {
	at := diag.Pos{Line: 4, Column: 18}
	unset := func() (string, bool) { return "", false }
	set := func(v string) func() (string, bool) { return func() (string, bool) { return v, true } }

	tests := []struct {
		name        string
		setup       func(s *dgxa100.Server)
		gpusPerNode int
		env         func() (string, bool)
		want        []want
	}{
		{name: "DGX A100 fits 8 GPUs per node", gpusPerNode: 8, env: unset},
		{name: "fewer per node is fine", gpusPerNode: 4, env: unset},
		{name: "gpus_per_node 0 skips the count", gpusPerNode: 0, env: unset},
		{
			name: "short count", gpusPerNode: 16, env: unset,
			want: []want{{
				rule: diag.RuleGPUCountShort, severity: diag.Error, pos: at,
				message: []string{"this machine has 8 visible GPUs but cluster.gpus_per_node is 16"},
				hint:    []string{"at least 16 GPUs", "lower cluster.gpus_per_node"},
			}},
		},
		{
			name: "short count from the device count",
			setup: func(s *dgxa100.Server) {
				s.DeviceGetCountFunc = func() (int, nvml.Return) { return 1, nvml.SUCCESS }
			},
			gpusPerNode: 2, env: unset,
			want: []want{{
				rule: diag.RuleGPUCountShort, severity: diag.Error, pos: at,
				message: []string{"this machine has 1 visible GPU but cluster.gpus_per_node is 2"},
			}},
		},
		{
			name: "no GPU at all",
			setup: func(s *dgxa100.Server) {
				s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
			},
			gpusPerNode: 8, env: unset,
			want: []want{{rule: diag.RuleGPUCountShort, severity: diag.Error, pos: at, message: []string{"0 visible GPUs"}}},
		},
		{
			name: "mixed models",
			setup: func(s *dgxa100.Server) {
				for i := 4; i < 8; i++ {
					dev(s, i).Name = "NVIDIA A100-SXM4-80GB"
				}
			},
			gpusPerNode: 8, env: unset,
			want: []want{{
				rule: diag.RuleGPUMixedModels, severity: diag.Error,
				message: []string{"2 models", "Mock NVIDIA A100-SXM4-40GB (GPU 0, 1, 2, 3)", "NVIDIA A100-SXM4-80GB (GPU 4, 5, 6, 7)"},
				hint:    []string{"one model"},
			}},
		},
		{
			name: "mixed models hidden by CUDA_VISIBLE_DEVICES",
			setup: func(s *dgxa100.Server) {
				dev(s, 7).Name = "NVIDIA A100-SXM4-80GB"
			},
			gpusPerNode: 4, env: set("0,1,2,3"),
		},
		{
			name: "mixed models selected by CUDA_VISIBLE_DEVICES",
			setup: func(s *dgxa100.Server) {
				dev(s, 7).Name = "NVIDIA A100-SXM4-80GB"
			},
			gpusPerNode: 2, env: set("7,0"),
			want: []want{{rule: diag.RuleGPUMixedModels, severity: diag.Error, message: []string{"NVIDIA A100-SXM4-80GB (GPU 7), Mock NVIDIA A100-SXM4-40GB (GPU 0)"}}},
		},
		{
			name: "MIG enabled is a warning",
			setup: func(s *dgxa100.Server) {
				enableMIG(dev(s, 2), migA)
				enableMIG(dev(s, 5))
			},
			gpusPerNode: 8, env: unset,
			want: []want{{
				rule: diag.RuleGPUMIGEnabled, severity: diag.Warning,
				message: []string{"MIG mode is enabled on GPU 2, 5"},
				hint:    []string{"nvidia-smi -i 2,5 -mig 0"},
			}},
		},
		{
			name: "MIG on a GPU that CUDA_VISIBLE_DEVICES hides",
			setup: func(s *dgxa100.Server) {
				enableMIG(dev(s, 7))
			},
			gpusPerNode: 2, env: set("0,1"),
		},
		{
			name: "MIG device selected by CUDA_VISIBLE_DEVICES",
			setup: func(s *dgxa100.Server) {
				enableMIG(dev(s, 3), migA, migB)
			},
			gpusPerNode: 2, env: set(migA + "," + migB),
			want: []want{{rule: diag.RuleGPUMIGEnabled, severity: diag.Warning, message: []string{"GPU 3"}}},
		},
		{
			name: "everything at once",
			setup: func(s *dgxa100.Server) {
				dev(s, 1).Name = "NVIDIA H100 80GB HBM3"
				enableMIG(dev(s, 0))
			},
			gpusPerNode: 4, env: set("0,1,GPU-bogus,2"),
			want: []want{
				{rule: diag.RuleGPUVisibleDevices, severity: diag.Error, message: []string{`entry 3 "GPU-bogus"`, "(2)"}},
				{rule: diag.RuleGPUCountShort, severity: diag.Error, pos: at, message: []string{`CUDA_VISIBLE_DEVICES="0,1,GPU-bogus,2" leaves 2 of this machine's 8 GPUs visible, but cluster.gpus_per_node is 4`}},
				{rule: diag.RuleGPUMixedModels, severity: diag.Error},
				{rule: diag.RuleGPUMIGEnabled, severity: diag.Warning, message: []string{"GPU 0"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDGX(t)
			if tt.setup != nil {
				tt.setup(s)
			}
			v, isSet := tt.env()
			got := Check(probeDGX(t, s), Need{GPUs: tt.gpusPerNode, At: at}, v, isSet)
			assertDiags(t, got, tt.want)
		})
	}
}

func TestCheckVisibleDevices(t *testing.T) {
	at := diag.Pos{}
	short := func(msg ...string) want {
		return want{rule: diag.RuleGPUCountShort, severity: diag.Error, message: msg}
	}
	bad := func(msg ...string) want {
		return want{rule: diag.RuleGPUVisibleDevices, severity: diag.Error, message: msg, hint: []string{"indices 0-7"}}
	}
	tests := []struct {
		name        string
		value       string
		gpusPerNode int
		mig         bool // GPU 3 in MIG mode with migA, migB
		want        []want
	}{
		{name: "indices", value: "0,1,2,3,4,5,6,7", gpusPerNode: 8},
		{name: "reordered indices", value: "7,6,5,4,3,2,1,0", gpusPerNode: 8},
		{name: "spaces around entries", value: " 0, 1 ", gpusPerNode: 2},
		{name: "trailing comma", value: "0,1,", gpusPerNode: 2},
		{name: "leading digits, as strtol reads them", value: "1gpu2,2ampere", gpusPerNode: 2},
		{name: "plus sign and minus zero", value: "+3,-0", gpusPerNode: 2},
		{name: "full UUID", value: testUUID(5) + "," + testUUID(6), gpusPerNode: 2},
		{name: "UUID prefix", value: "GPU-5,GPU-6", gpusPerNode: 2},
		{name: "index and UUID of different GPUs", value: "0," + testUUID(1), gpusPerNode: 2},
		{name: "MIG devices", value: migA + ",MIG-bbbb", gpusPerNode: 2, mig: true,
			want: []want{{rule: diag.RuleGPUMIGEnabled, severity: diag.Warning}}},
		{
			name: "empty value hides every GPU", value: "", gpusPerNode: 8,
			want: []want{short(`CUDA_VISIBLE_DEVICES="" leaves 0 of this machine's 8 GPUs visible`)},
		},
		{
			name: "empty value with nothing needed", value: "", gpusPerNode: 0,
		},
		{
			name: "bogus UUID after an index", value: "0,GPU-bogus", gpusPerNode: 1,
			want: []want{bad(`CUDA_VISIBLE_DEVICES entry 2 "GPU-bogus" does not resolve to a GPU: no GPU's UUID starts with it`)},
		},
		{
			name: "invalid entry hides the rest", value: "0,9,1,2", gpusPerNode: 4,
			want: []want{
				bad(`entry 2 "9"`, "there is no GPU 9: this machine has 8 GPUs (indices 0-7)", "CUDA stops reading at this entry, so the entries after it (1,2) are not visible either"),
				short("leaves 1 of this machine's 8 GPUs visible"),
			},
		},
		{
			name: "negative index", value: "-1", gpusPerNode: 1,
			want: []want{bad(`entry 1 "-1"`, "it is a negative index"), short("leaves 0 of")},
		},
		{
			name: "word", value: "all", gpusPerNode: 0,
			want: []want{bad(`"all"`, "not a device index, a GPU-<uuid> or a MIG-<uuid>")},
		},
		{
			name: "empty entry in the middle", value: "0,,1", gpusPerNode: 2,
			want: []want{bad(`entry 2 ""`, "the entry is empty", "(1)"), short("leaves 1 of")},
		},
		{
			name: "ambiguous UUID prefix", value: "GPU-", gpusPerNode: 1,
			want: []want{bad("prefix of 8 GPU UUIDs (GPUs 0, 1, 2, 3, 4, 5, 6, 7)", "ambiguous"), short("leaves 0 of")},
		},
		{
			name: "duplicate index hides everything", value: "0,1,2,1", gpusPerNode: 2,
			want: []want{
				{rule: diag.RuleGPUVisibleDevices, severity: diag.Error, message: []string{`names GPU 1 twice (entry 2 "1" and entry 4 "1")`, "no GPU visible at all"}, hint: []string{"once"}},
				short("leaves 0 of"),
			},
		},
		{
			name: "same GPU by index and UUID", value: "3,GPU-3", gpusPerNode: 0,
			want: []want{{rule: diag.RuleGPUVisibleDevices, severity: diag.Error, message: []string{`names GPU 3 twice (entry 1 "3" and entry 2 "GPU-3")`}}},
		},
		{
			name: "duplicate after an invalid entry is never read", value: "0,x,0", gpusPerNode: 1,
			want: []want{bad(`entry 2 "x"`, "(0)")},
		},
		{
			name: "MIG id without MIG", value: "MIG-aaaa", gpusPerNode: 0,
			want: []want{bad("MIG is off on every GPU")},
		},
		{
			name: "unknown MIG id", value: "MIG-cccc", gpusPerNode: 0, mig: true,
			// GPU 3 is hidden by the bad entry, so its MIG mode is no matter.
			want: []want{bad("no MIG device's UUID starts with it")},
		},
		{
			name: "ambiguous MIG prefix", value: "MIG-", gpusPerNode: 0, mig: true,
			want: []want{bad("prefix of 2 MIG device UUIDs")},
		},
		{
			name: "duplicate MIG device", value: migA + "," + migA, gpusPerNode: 0, mig: true,
			want: []want{{rule: diag.RuleGPUVisibleDevices, severity: diag.Error, message: []string{"names MIG device " + migA + " of GPU 3 twice"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDGX(t)
			if tt.mig {
				enableMIG(dev(s, 3), migA, migB)
			}
			got := Check(probeDGX(t, s), Need{GPUs: tt.gpusPerNode, At: at}, tt.value, true)
			assertDiags(t, got, tt.want)
		})
	}
}

func TestCheckVisibleDevicesWithoutGPUs(t *testing.T) {
	got := Check(&Snapshot{}, Need{GPUs: 1}, "0", true)
	assertDiags(t, got, []want{
		{rule: diag.RuleGPUVisibleDevices, severity: diag.Error, message: []string{"there is no GPU 0: this machine has no GPU"}, hint: []string{"no GPU that CUDA could use"}},
		{rule: diag.RuleGPUCountShort, severity: diag.Error, message: []string{"leaves 0 of this machine's 0 GPUs visible"}},
	})
}

// TestCheckWith probes a mock machine and checks it, as validate --probe
// does through ProbeLocal and AddChecks.
func TestCheckWith(t *testing.T) {
	checkWith := func(lib Library, need Need, lookupEnv func(string) (string, bool)) ([]diag.Diagnostic, error) {
		s, err := probeWith(lib)
		if err != nil {
			return nil, err
		}
		v, set := lookupEnv(VisibleDevicesEnv)
		return Check(s, need, v, set), nil
	}
	env := func(v string, ok bool) func(string) (string, bool) {
		return func(key string) (string, bool) {
			assert.Equal(t, VisibleDevicesEnv, key)
			return v, ok
		}
	}
	t.Run("reads CUDA_VISIBLE_DEVICES", func(t *testing.T) {
		s := newDGX(t)
		got, err := checkWith(s, Need{GPUs: 8, At: diag.Pos{Line: 3, Column: 5}}, env("0,1", true))
		require.NoError(t, err)
		assertDiags(t, got, []want{{rule: diag.RuleGPUCountShort, severity: diag.Error, pos: diag.Pos{Line: 3, Column: 5}, message: []string{"leaves 2 of"}}})
		assert.Len(t, s.ShutdownCalls(), 1)
	})
	t.Run("unset variable shows every GPU", func(t *testing.T) {
		got, err := checkWith(newDGX(t), Need{GPUs: 8}, env("", false))
		require.NoError(t, err)
		assert.Empty(t, got)
	})
	t.Run("missing library", func(t *testing.T) {
		s := newDGX(t)
		s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
		got, err := checkWith(s, Need{GPUs: 8}, env("", false))
		assert.Nil(t, got)
		require.Error(t, err)
		assert.True(t, IsUnavailable(err))
		assert.Contains(t, err.Error(), "libnvidia-ml.so.1")
	})
	t.Run("probe failure", func(t *testing.T) {
		s := newDGX(t)
		s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		got, err := checkWith(s, Need{GPUs: 8}, env("", false))
		assert.Nil(t, got)
		require.EqualError(t, err, "NVML: count devices: ERROR_UNKNOWN")
		assert.False(t, IsUnavailable(err))
	})
}

func TestProbeLocalWithoutLibrary(t *testing.T) {
	t.Setenv(LibraryPathEnv, "/nonexistent/libnvidia-ml.so.1")
	snap, err := ProbeLocal()
	assert.Nil(t, snap)
	require.Error(t, err)
	assert.True(t, IsUnavailable(err))
	assert.ErrorIs(t, err, nvml.ERROR_LIBRARY_NOT_FOUND)
	assert.EqualError(t, err, "NVML is unavailable: /nonexistent/libnvidia-ml.so.1 (from MIMOPLAN_NVML_LIBRARY) could not be loaded; is the NVIDIA driver installed?")
}
