package plan

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// plan decides and does no I/O (docs/architecture.md): none of its files
// imports a package that reads the machine, writes files, prints or
// chooses exit codes; suggest and suggestcmd do that.
func TestPlanDoesNoIO(t *testing.T) {
	banned := []string{"os", "io", "bufio", "encoding/json", "go.yaml.in/yaml/v3", "github.com/olekukonko/tablewriter",
		"github.com/mimoplan/mimoplan/internal/gpuprobe", "github.com/mimoplan/mimoplan/internal/atomicfile",
		"github.com/mimoplan/mimoplan/internal/exitcode"}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range banned {
				require.False(t, path == b || strings.HasPrefix(path, b+"/"), "%s imports %s", f, path)
			}
		}
	}
}
