package cmdutil

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a stand-in for time.Now that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// lockedBuffer is a bytes.Buffer safe to read while others write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const clearLine = "\r\033[K"

func TestProgressNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	defer f.Close()
	var buf bytes.Buffer
	for name, w := range map[string]io.Writer{"buffer": &buf, "regular file": f} {
		report, done := Progress(w)
		assert.Nil(t, report, name)
		done()
	}
	c := &clock{t: time.Unix(0, 0)}
	report, done := progressLine(&buf, false, c.now)
	assert.Nil(t, report)
	c.advance(time.Hour)
	done()
	assert.Empty(t, buf.String())
	st, err := f.Stat()
	require.NoError(t, err)
	assert.Zero(t, st.Size())
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	report, done := progressLine(&buf, true, c.now)
	require.NotNil(t, report)

	c.advance(progressAfter - time.Millisecond)
	report(4096, 2*4096)
	assert.Empty(t, buf.String(), "before the threshold")

	c.advance(time.Millisecond)
	report(8192, 2*8192)
	assert.Equal(t, "\rmimoplan: 8192 layouts checked, 16384 search nodes ...", buf.String(), "at the threshold")

	c.advance(progressEvery - time.Millisecond)
	report(12288, 2*12288)
	assert.Equal(t, "\rmimoplan: 8192 layouts checked, 16384 search nodes ...", buf.String(), "an update sooner than progressEvery is skipped")

	c.advance(time.Millisecond)
	report(16384, 2*16384)
	assert.Equal(t, "\rmimoplan: 8192 layouts checked, 16384 search nodes ...\rmimoplan: 16384 layouts checked, 32768 search nodes ...", buf.String())

	done()
	out := buf.String()
	assert.True(t, strings.HasSuffix(out, "...\r\033[K"), "done clears the line: %q", out)
	assert.Equal(t, 1, strings.Count(out, clearLine))

	c.advance(time.Hour)
	report(20480, 2*20480)
	done()
	assert.Equal(t, out, buf.String(), "nothing after done")
}

func TestProgressQuickSearchPrintsNothing(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	report, done := progressLine(&buf, true, c.now)
	report(4096, 2*4096)
	c.advance(progressAfter / 2)
	report(8192, 2*8192)
	done()
	c.advance(time.Hour)
	report(12288, 2*12288)
	assert.Empty(t, buf.String(), "no line, nothing to clear")
}

// TestProgressConcurrentDone reports from several goroutines while done
// runs (go test -race): once done has returned, the output stays as it is.
func TestProgressConcurrentDone(t *testing.T) {
	var buf lockedBuffer
	c := &clock{t: time.Unix(0, 0)}
	report, done := progressLine(&buf, true, c.now)
	c.advance(progressAfter)
	report(1, 2*1)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := g; ; n += 4 {
				select {
				case <-stop:
					return
				default:
				}
				c.advance(progressEvery)
				report(n, 2*n)
			}
		}()
	}
	done()
	after := buf.String()
	c.advance(progressEvery)
	report(-1, 2*-1)
	close(stop)
	wg.Wait()
	assert.Equal(t, after, buf.String(), "nothing written after done returned")
	assert.True(t, strings.HasSuffix(after, clearLine), "the line ends cleared: %q", after)
	assert.Equal(t, 1, strings.Count(after, clearLine))
}

// TestProgressLines: --progress writes whole lines off a terminal, none
// in the first second, then one every ten seconds, none after done.
func TestProgressLines(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	var buf lockedBuffer
	report, done := progressLines(&buf, c.now)
	report(1, 2*1)
	assert.Empty(t, buf.String(), "a quick search prints nothing")
	c.advance(2 * time.Second)
	report(10, 2*10)
	c.advance(time.Second)
	report(20, 2*20)
	c.advance(10 * time.Second)
	report(30, 2*30)
	done()
	c.advance(20 * time.Second)
	report(40, 2*40)
	assert.Equal(t, "mimoplan: 10 layouts checked, 20 search nodes after 2 s ...\nmimoplan: 30 layouts checked, 60 search nodes after 13 s ...\n", buf.String())
	assert.NotContains(t, buf.String(), "\r")
}
