package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/mimoplan/mimoplan/internal/safetext"
)

// WriteGitHub prints diagnostics as GitHub Actions workflow commands, which
// the Actions runner turns into annotations on the file and line:
//
//	::error file=layout.yaml,line=12,col=5,title=dense-not-divisible::module "vision": ...
//
// The message carries the module and the hint; everything is escaped the
// way the runner's command parser expects.
func WriteGitHub(w io.Writer, l *List) error {
	for _, d := range l.Items {
		props := []string{"file=" + escapeProperty(safetext.Inline(l.File))}
		if d.Line > 0 {
			props = append(props, fmt.Sprintf("line=%d", d.Line))
			if d.Column > 0 {
				props = append(props, fmt.Sprintf("col=%d", d.Column))
			}
		}
		props = append(props, "title="+escapeProperty(d.Rule))
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", githubLevel(d.Severity), strings.Join(props, ","), escapeData(fullMessage(d))); err != nil {
			return err
		}
	}
	return nil
}

func githubLevel(s Severity) string {
	switch s {
	case Warning:
		return "warning"
	case Note:
		return "notice"
	}
	return "error"
}

// fullMessage is a diagnostic's module, message and hint as one text.
func fullMessage(d Diagnostic) string {
	var b strings.Builder
	if d.Module != "" {
		fmt.Fprintf(&b, "module %q: ", d.Module)
	}
	b.WriteString(inlineLines(d.Message))
	if d.Hint != "" {
		b.WriteString("\nhint: ")
		b.WriteString(inlineLines(d.Hint))
	}
	return b.String()
}

// inlineLines is safetext.Inline of each line of s, the line breaks kept:
// escapeData writes them as the runner's %0A and %0D, and the annotation
// shows them as lines; any other control character is escaped.
func inlineLines(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			b.WriteString(safetext.Inline(s))
			return b.String()
		}
		b.WriteString(safetext.Inline(s[:i]))
		b.WriteByte(s[i])
		s = s[i+1:]
	}
}

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value, which also
// may not hold the ':' and ',' that delimit properties.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// SARIF 2.1.0, the subset mimoplan writes.
const (
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	sarifVersion = "2.1.0"
	// InformationURI is mimoplan's home; rule help lives in its docs.
	InformationURI = "https://github.com/mimoplan/mimoplan"
	rulesDocURI    = InformationURI + "/blob/main/docs/rules.md"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool sarifTool `json:"tool"`
	// ColumnKind says how columns count: by Unicode code point, as the
	// YAML parser counts them (SARIF's default would be UTF-16 units).
	ColumnKind string        `json:"columnKind"`
	Results    []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string      `json:"id"`
	ShortDescription     sarifText   `json:"shortDescription"`
	HelpURI              string      `json:"helpUri"`
	DefaultConfiguration sarifConfig `json:"defaultConfiguration"`
	Properties           sarifProps  `json:"properties"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifProps struct {
	Source string `json:"source,omitempty"`
	Module string `json:"module,omitempty"`
	Hint   string `json:"hint,omitempty"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  *int            `json:"ruleIndex,omitempty"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations"`
	Properties *sarifProps     `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// WriteSARIF prints one SARIF 2.1.0 log for the diagnostics of every file:
// one run whose driver lists every catalogue rule, and one result per
// diagnostic.
func WriteSARIF(w io.Writer, lists []*List) error {
	rules := Rules()
	index := make(map[string]int, len(rules))
	driver := sarifDriver{Name: "mimoplan", InformationURI: InformationURI}
	for i, r := range rules {
		index[string(r.ID)] = i
		driver.Rules = append(driver.Rules, sarifRule{
			ID:                   string(r.ID),
			ShortDescription:     sarifText{r.Summary},
			HelpURI:              rulesDocURI + "#" + string(r.ID),
			DefaultConfiguration: sarifConfig{sarifLevel(r.Severity)},
			Properties:           sarifProps{Source: r.Source},
		})
	}
	results := []sarifResult{}
	for _, l := range lists {
		for _, d := range l.Items {
			res := sarifResult{
				RuleID:  d.Rule,
				Level:   sarifLevel(d.Severity),
				Message: sarifText{fullMessage(d)},
				Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
					ArtifactLocation: sarifArtifact{URI: fileURI(l.File)},
				}}},
			}
			if i, ok := index[d.Rule]; ok {
				res.RuleIndex = &i
			}
			if d.Line > 0 {
				res.Locations[0].PhysicalLocation.Region = &sarifRegion{StartLine: d.Line, StartColumn: max(d.Column, 0)}
			}
			if d.Module != "" || d.Hint != "" {
				res.Properties = &sarifProps{Module: d.Module, Hint: d.Hint}
			}
			results = append(results, res)
		}
	}
	log := sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{{Tool: sarifTool{driver}, ColumnKind: "unicodeCodePoints", Results: results}}}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

func sarifLevel(s Severity) string {
	switch s {
	case Warning:
		return "warning"
	case Note:
		return "note"
	}
	return "error"
}

// fileURI turns a path into a SARIF artifact URI: relative paths stay
// relative (code scanning resolves them against the repository), absolute
// ones become file:// URIs.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if filepath.IsAbs(path) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // a Windows drive path
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}
