package safetext

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

var hostile = []string{
	"plain name", "::error title=INJ::x", "a\n::error::x", "\x1b[31mred", "del\x7f", "nel\u0085x", "ls\u2028x",
	"bidi\u202ex", "<img src=x onerror=alert(1)>", "[a](javascript:alert(1))", "\xff\xfe", "tab\there", ":::", "",
	"a|b", "`code`", "**bold**", "nul\x00x", "cr\rx",
}

// Safe reports whether out can start no workflow command and holds no
// character a terminal acts on: the invariant of every human-readable
// output.
func safe(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") {
			return false
		}
		for _, r := range line {
			if r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029) {
				return false
			}
		}
	}
	return true
}

func TestText(t *testing.T) {
	for _, s := range hostile {
		got := Text(s)
		assert.True(t, safe(got), "%q -> %q", s, got)
		assert.NotContains(t, got, "::", s)
		if Plain(s) {
			assert.Equal(t, s, got)
			continue
		}
		back, err := strconv.Unquote(got)
		require.NoError(t, err, got)
		if strings.ToValidUTF8(s, "") == s {
			assert.Equal(t, s, back, "Text reads back")
		}
	}
	assert.Equal(t, "vlm-8gpu", Text("vlm-8gpu"))
	assert.Equal(t, `"\x1b[31m"`, Text("\x1b[31m"))
	assert.Equal(t, `":\x3aerror"`, Text("::error"))
}

func TestMarkdown(t *testing.T) {
	for _, s := range hostile {
		got := Markdown(s)
		assert.True(t, safe(got), "%q -> %q", s, got)
		for _, bad := range []string{"<img", "](", "javascript:alert(", "|"} {
			assert.NotContains(t, strings.ReplaceAll(got, `\`+bad[:1], ""), bad, "%q -> %q", s, got)
		}
	}
	assert.Equal(t, `\<img src\=x onerror\=alert\(1\)\>`, Markdown("<img src=x onerror=alert(1)>"))
}

func TestXML(t *testing.T) {
	for _, s := range hostile {
		got := XML(s)
		assert.True(t, safe(got), "%q -> %q", s, got)
		assert.NotContains(t, got, "<")
	}
}

func TestJSONQuote(t *testing.T) {
	for _, s := range hostile {
		b := JSONQuote(s)
		var j string
		var y struct{ X string }
		require.NoError(t, json.Unmarshal(b, &j))
		require.NoError(t, yaml.Unmarshal(append([]byte("x: "), b...), &y))
		want := string([]rune(s)) // each invalid byte a U+FFFD, as encoding/json reads it
		assert.Equal(t, want, j, "json reads back %q", s)
		assert.Equal(t, want, y.X, "yaml reads back %q", s)
		assert.NotContains(t, string(b), "\x7f")
		assert.NotContains(t, string(b), "\u0085")
	}
	assert.Equal(t, `"a\u003cb"`, string(JSONQuote("a<b")), "encoding/json's own escapes kept")
}

func TestInline(t *testing.T) {
	for _, s := range hostile {
		got := Inline(s)
		assert.True(t, safe("x: "+got), "%q -> %q", s, got)
	}
	assert.Equal(t, `module "vision": a\nb \x1b[31m \u0085 \xff`, Inline("module \"vision\": a\nb \x1b[31m \u0085 \xff"))
	assert.Equal(t, "plain \"quoted\" \\ text", Inline("plain \"quoted\" \\ text"))
}
