package launch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/upstream"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// argvFixture is internal/launch/testdata/megatron-lm/argv.json, written by
// scripts/gen-megatron-argv-fixtures.py, which parses mimoplan's plans with
// each Megatron-LM version's own add_hetero_grid_args and
// build_module_grid_specs.
type argvFixture struct {
	Mirror string `json:"megatron_lm_mirror"`
	Cases  []struct {
		Name          string           `json:"name"`
		Layout        string           `json:"layout"`
		LayoutText    string           `json:"layout_text"`
		TargetVersion string           `json:"target_version"`
		ProgramArgs   []string         `json:"program_args"`
		Upstream      string           `json:"upstream"`
		Argv          []string         `json:"argv"`
		WorldSize     int              `json:"world_size"`
		Specs         []map[string]any `json:"specs"`
		Training      map[string]any   `json:"training_namespace"`
		Model         map[string]any   `json:"model_namespace"`
		Other         map[string]any   `json:"other_generation_errors"`
		UpstreamError string           `json:"upstream_error"`
	} `json:"cases"`
}

// TestMegatronArgvFixture: the argv launch-plan writes today is the argv
// upstream parsed, and the ModuleGridSpecs upstream built from it are the
// layout's grids; the plans launch-plan refuses are the ones upstream
// stops on.
func TestMegatronArgvFixture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "megatron-lm", "argv.json"))
	require.NoError(t, err)
	var fx argvFixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	require.Len(t, fx.Mirror, 40)
	require.NotEmpty(t, fx.Cases)
	versions := map[string]bool{}
	for _, c := range fx.Cases {
		versions[c.TargetVersion] = true
		t.Run(c.Name+"@"+cmp.Or(c.TargetVersion, "newest"), func(t *testing.T) {
			res := fixtureLayout(t, c.Layout, c.LayoutText, c.TargetVersion)
			o := Options{LayoutArgs: true, MasterPort: DefaultMasterPort}
			if c.ProgramArgs != nil {
				o.Program = append([]string{DefaultProgram}, c.ProgramArgs...)
			}
			if res.Topology.Cluster != nil {
				for i := 0; i < res.Topology.Cluster.Nodes; i++ {
					o.Hosts = append(o.Hosts, "node"+strconv.Itoa(i))
				}
			}
			p, diags, err := Build(res.Topology, o)
			require.NoError(t, err)

			if c.UpstreamError != "" {
				// Upstream stops (a TypeError without --micro-batch-size,
				// its fan-out ValueError); so does launch-plan.
				assert.Nil(t, p, "upstream: %s", c.UpstreamError)
				require.NotEmpty(t, diags.Items)
				assert.Equal(t, "micro-batch-required", diags.Items[0].Rule)
				return
			}
			require.NotNil(t, p, "%v", diags.Items)
			assert.Equal(t, c.Argv, p.Program[1:], "the argv %s parsed", c.Upstream)
			assert.Equal(t, c.WorldSize, res.Topology.WorldSize)

			require.Len(t, c.Specs, len(res.Topology.Modules))
			for _, s := range c.Specs {
				m := res.Topology.Module(s["name"].(string))
				require.NotNil(t, m, "module %v", s["name"])
				want := map[string]int{
					"num_ranks": m.NumRanks, "rank_offset": m.RankOffset, "tp": m.TP, "cp": m.CP, "pp": m.PP,
					"dp": m.DP, "ep": m.EP, "expt_tp": m.ExptTP, "expt_dp": m.ExptDP,
					"gtp_remat": m.GTPRemat, "expt_gtp_remat": m.ExptGTPRemat,
				}
				for k, v := range want {
					got, ok := s[k]
					if !ok { // a ModuleGridSpec before GTP: no such field, so 1
						assert.Equal(t, 1, v, "%s %s", m.Name, k)
						continue
					}
					assert.Equal(t, float64(v), got, "%s %s", m.Name, k)
				}
			}
			// The training settings upstream parsed are the layout's,
			// every key (Megatron's defaults where the layout is silent).
			require.NotEmpty(t, c.Training)
			lt := res.Layout.Training
			if lt == nil {
				lt = &layout.Training{}
			}
			for _, k := range layout.TrainingKeys() {
				assert.Equal(t, k.Value(lt), parsedTraining(t, k.Name, c.Training), "training.%s, as %s parsed it", k.Name, c.Upstream)
			}
			// So are the language model's: every destination launch-plan
			// writes, as upstream's parser read it.
			if dest := modelDestinations(res.Layout); dest != nil {
				require.NotEmpty(t, c.Model)
				compared := 0
				for k, v := range dest {
					got, ok := c.Model[k]
					if !ok || k == "vocab_size" && v == 0 {
						continue
					}
					compared++
					if k == "num_query_groups" {
						assert.Equal(t, true, c.Model["group_query_attention"], "num_query_groups counts with group_query_attention")
					}
					assert.Equal(t, value(v), parsedValue(got), "model %s, as %s parsed it", k, c.Upstream)
				}
				assert.Greater(t, compared, 10)
			}
			// The other name generation's args.py rejects this argv.
			require.NotEmpty(t, c.Other)
			for v, e := range c.Other {
				assert.Contains(t, e, "unrecognized arguments", "%s's parser", v)
			}
		})
	}
	for _, v := range []string{"", "5375", "6570", "2026-08-22"} {
		assert.True(t, versions[v], "fixture covers version %q", v)
	}
	assert.True(t, strings.Contains(string(raw), "--mimo-llm-only"), "the newest names are exercised")
}

// parsedTraining is a training key's value, as a layout writes it, in the
// namespace Megatron-LM's parser made: grad_reduce_in_fp32 is false under
// --grad-reduce-in-bf16 (validate_args, arguments.py:1213 at d98e8a6);
// None is a key's "none".
func parsedTraining(t *testing.T, key string, ns map[string]any) string {
	t.Helper()
	dest := key
	if key == "grad_reduce_in_fp32" {
		dest = "grad_reduce_in_bf16"
	}
	v, ok := ns[dest]
	require.True(t, ok, "the fixture holds %s", dest)
	switch x := v.(type) {
	case nil:
		if key == "recompute_modules" {
			// TransformerConfig takes None as core attention alone
			// (transformer_config.py:1940-1941 at d98e8a6).
			return "[core_attn]"
		}
		return "none"
	case bool:
		if key == "grad_reduce_in_fp32" {
			x = !x
		}
		return strconv.FormatBool(x)
	case float64:
		// JSON's numbers: a whole number (a layer count) or a fraction
		// (a capacity factor), as a layout writes either.
		if x == math.Trunc(x) {
			return strconv.Itoa(int(x))
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []any:
		// A list key (recompute_modules), as a layout writes it.
		var items []string
		for _, e := range x {
			items = append(items, fmt.Sprint(e))
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	t.Fatalf("%s: %v of type %T", dest, v, v)
	return ""
}

// parsedValue writes a parsed namespace value as launch-plan writes the
// destination (value): JSON's numbers as whole numbers.
func parsedValue(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.Itoa(int(x))
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	return ""
}

// TestMegatronSpecsFixture: the Python --format megatron-specs prints is
// the one each Megatron-LM version's own ModuleGridSpec ran
// (testdata/megatron-lm/specs.json), and the specs it built are the
// layout's grids, dp and expt_dp as ModuleGridSpec derived them.
func TestMegatronSpecsFixture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "megatron-lm", "specs.json"))
	require.NoError(t, err)
	var fx struct {
		Cases []struct {
			Name          string           `json:"name"`
			Layout        string           `json:"layout"`
			LayoutText    string           `json:"layout_text"`
			TargetVersion string           `json:"target_version"`
			Python        string           `json:"python"`
			Specs         []map[string]any `json:"specs"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &fx))
	require.NotEmpty(t, fx.Cases)
	for _, c := range fx.Cases {
		t.Run(c.Name+"@"+cmp.Or(c.TargetVersion, "newest"), func(t *testing.T) {
			res := fixtureLayout(t, c.Layout, c.LayoutText, c.TargetVersion)
			p, diags, err := Build(res.Topology, Options{NoProgram: true, LayoutArgs: true, MasterPort: DefaultMasterPort})
			require.NoError(t, err)
			require.NotNil(t, p, "%v", diags)
			var b strings.Builder
			require.NoError(t, WriteMegatronSpecs(&b, p))
			assert.Equal(t, c.Python, b.String(), "the Python upstream ran")
			require.Len(t, c.Specs, len(res.Topology.Modules))
			for i, m := range res.Topology.Modules {
				s := c.Specs[i]
				assert.Equal(t, m.Name, s["name"])
				for k, v := range map[string]int{"num_ranks": m.NumRanks, "rank_offset": m.RankOffset, "tp": m.TP, "cp": m.CP, "pp": m.PP,
					"ep": m.EP, "expt_tp": m.ExptTP, "dp": m.DP, "expt_dp": m.ExptDP, "gtp_remat": m.GTPRemat, "expt_gtp_remat": m.ExptGTPRemat} {
					got, ok := s[k]
					if !ok {
						assert.Equal(t, 1, v, "%s %s: a ModuleGridSpec before GTP", m.Name, k)
						continue
					}
					assert.Equal(t, float64(v), got, "%s %s", m.Name, k)
				}
			}
		})
	}
}

// fixtureLayout checks a fixture case's layout (a file of the repository,
// else the text) at its target version; it must be valid.
func fixtureLayout(t *testing.T, file, text, version string) *validate.Result {
	t.Helper()
	src := []byte(text)
	if file != "" {
		var err error
		src, err = os.ReadFile(filepath.Join(testutil.RepoRoot(), file))
		require.NoError(t, err)
	}
	l, d := layout.Parse("layout.yaml", src)
	if version != "" {
		var err error
		l.TargetVersion, err = upstream.Parse(version)
		require.NoError(t, err)
	}
	res := validate.Check(l, d)
	require.True(t, res.Valid(false), "%v", res.Diags.Items)
	return res
}
