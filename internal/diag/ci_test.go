package diag_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
)

func sample() *diag.List {
	l := &diag.List{File: "layouts/a,b:c.yaml"}
	l.Add("dense-not-divisible", diag.Pos{Line: 4, Column: 29}, "vision", "make num_ranks a multiple of 4", "num_ranks 6 is not divisible by %d", 4)
	l.Add("group-crosses-node", diag.Pos{Line: 7, Column: 5}, "language", "", "100%% of tp groups span nodes\r\nfirst: [6 7]")
	l.Add("yaml-syntax", diag.Pos{}, "", "", "file is empty")
	l.AddSeverity(diag.Note, "world-gap", diag.Pos{Line: 3}, "", "", "a note, line only")
	return l
}

func TestWriteGitHub(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, diag.WriteGitHub(&b, sample()))
	assert.Equal(t,
		"::error file=layouts/a%2Cb%3Ac.yaml,line=4,col=29,title=dense-not-divisible::module \"vision\": num_ranks 6 is not divisible by 4%0Ahint: make num_ranks a multiple of 4\n"+
			"::warning file=layouts/a%2Cb%3Ac.yaml,line=7,col=5,title=group-crosses-node::module \"language\": 100%25 of tp groups span nodes%0D%0Afirst: [6 7]\n"+
			"::error file=layouts/a%2Cb%3Ac.yaml,title=yaml-syntax::file is empty\n"+
			"::notice file=layouts/a%2Cb%3Ac.yaml,line=3,title=world-gap::a note, line only\n",
		b.String())
}

func TestWriteGitHubEmpty(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, diag.WriteGitHub(&b, &diag.List{File: "x.yaml"}))
	assert.Empty(t, b.String())
}

// sarif is the part of a SARIF log the tests read back.
type sarif struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		ColumnKind string `json:"columnKind"`
		Tool       struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID               string `json:"id"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
					HelpURI              string `json:"helpUri"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex *int   `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine   int `json:"startLine"`
						StartColumn int `json:"startColumn"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

func TestWriteSARIF(t *testing.T) {
	other := &diag.List{File: "/abs/dir with space/b.yaml"}
	other.Add("world-gap", diag.Pos{Line: 2, Column: 13}, "", "extend a module", "rank 7 belongs to no module")
	var b bytes.Buffer
	require.NoError(t, diag.WriteSARIF(&b, []*diag.List{sample(), other, {File: "clean.yaml"}}))

	var log sarif
	require.NoError(t, json.Unmarshal(b.Bytes(), &log), b.String())
	assert.Contains(t, log.Schema, "sarif-schema-2.1.0.json")
	assert.Equal(t, "2.1.0", log.Version)
	require.Len(t, log.Runs, 1, "one log, one run for every file of the call")
	run := log.Runs[0]
	assert.Equal(t, "mimoplan", run.Tool.Driver.Name)

	rules := diag.Rules()
	require.Len(t, run.Tool.Driver.Rules, len(rules), "one SARIF rule per catalogue rule")
	for i, r := range rules {
		got := run.Tool.Driver.Rules[i]
		assert.Equal(t, string(r.ID), got.ID)
		assert.Equal(t, r.Summary, got.ShortDescription.Text)
		assert.Equal(t, string(r.Severity), got.DefaultConfiguration.Level)
		assert.Contains(t, got.HelpURI, "docs/rules.md#"+r.ID)
	}

	assert.Equal(t, "unicodeCodePoints", run.ColumnKind, "columns count code points, as yaml.v3 does")
	require.Len(t, run.Results, 5)
	for _, res := range run.Results {
		require.NotNil(t, res.RuleIndex)
		assert.Equal(t, res.RuleID, run.Tool.Driver.Rules[*res.RuleIndex].ID)
		require.Len(t, res.Locations, 1)
	}
	r0 := run.Results[0]
	assert.Equal(t, "error", r0.Level)
	assert.Equal(t, "module \"vision\": num_ranks 6 is not divisible by 4\nhint: make num_ranks a multiple of 4", r0.Message.Text)
	assert.Equal(t, "layouts/a,b:c.yaml", r0.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	require.NotNil(t, r0.Locations[0].PhysicalLocation.Region)
	assert.Equal(t, 4, r0.Locations[0].PhysicalLocation.Region.StartLine)
	assert.Equal(t, 29, r0.Locations[0].PhysicalLocation.Region.StartColumn)

	assert.Equal(t, "warning", run.Results[1].Level)
	assert.Nil(t, run.Results[2].Locations[0].PhysicalLocation.Region, "no region for a file-wide diagnostic")
	assert.Equal(t, "note", run.Results[3].Level)
	require.NotNil(t, run.Results[3].Locations[0].PhysicalLocation.Region)
	assert.Equal(t, 3, run.Results[3].Locations[0].PhysicalLocation.Region.StartLine)
	assert.Zero(t, run.Results[3].Locations[0].PhysicalLocation.Region.StartColumn, "no column when unknown")
	assert.Equal(t, "file:///abs/dir%20with%20space/b.yaml", run.Results[4].Locations[0].PhysicalLocation.ArtifactLocation.URI)
}

func TestWriteSARIFNoResults(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, diag.WriteSARIF(&b, nil))
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &raw))
	results := raw["runs"].([]any)[0].(map[string]any)["results"]
	assert.Equal(t, []any{}, results, "results is an empty array, never null")
}

// Artifact URIs: relative paths stay relative (a colon in the first
// segment must not read as a scheme), absolute ones are file URIs; a
// region has no startColumn when the column is unknown.
func TestSARIFLocations(t *testing.T) {
	for _, tt := range []struct{ file, uri string }{
		{"layouts/x.yaml", "layouts/x.yaml"},
		{"a:b.yaml", "./a:b.yaml"},
		{"dir/100% #1?.yaml", "dir/100%25%20%231%3F.yaml"},
		{"/abs/x.yaml", "file:///abs/x.yaml"},
	} {
		l := &diag.List{File: tt.file}
		l.Add("world-gap", diag.Pos{Line: 2}, "", "", "gap")
		var b bytes.Buffer
		require.NoError(t, diag.WriteSARIF(&b, []*diag.List{l}))
		var log sarif
		require.NoError(t, json.Unmarshal(b.Bytes(), &log))
		assert.Equal(t, tt.uri, log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI, tt.file)
		assert.NotContains(t, b.String(), "startColumn", "column unknown")
	}
}
