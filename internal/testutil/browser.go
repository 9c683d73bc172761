package testutil

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium is the browser the tests drive: Debian's, which `make
// chromium` installs (and `make test` runs first). Without it the tests
// are skipped, except in CI, where that is a failure.
func chromium(tb testing.TB) string {
	tb.Helper()
	path := os.Getenv("MIMOPLAN_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("CI without %s: `make chromium` installs Debian's chromium (as root)", path)
		}
		tb.Skipf("no %s: the browser tests need Debian's chromium; `make chromium` installs it (as root)", path)
	}
	return path
}

// Browser is a headless chromium that records console errors, uncaught
// exceptions and any request that is not for a file: a page that reaches
// for the network is not self-contained.
type Browser struct {
	Ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func NewBrowser(tb testing.TB) *Browser {
	exe := chromium(tb)
	// Not tb.TempDir: chromium may still be writing its profile when the
	// test's own cleanup runs.
	profile, err := os.MkdirTemp("", "mimoplan-chromium-")
	require.NoError(tb, err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	tb.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it
		cancelTimeout()
		cancel()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	})
	b := &Browser{Ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				b.problems = append(b.problems, "console "+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Error())
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") {
				b.problems = append(b.problems, "network request: "+u)
			}
		}
	})
	require.NoError(tb, chromedp.Run(ctx, network.Enable(), runtime.Enable()))
	return b
}

// Open loads a page and waits for its script to finish.
func (b *Browser) Open(tb testing.TB, path string) {
	tb.Helper()
	require.NoError(tb, chromedp.Run(b.Ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery)))
}

func (b *Browser) Eval(tb testing.TB, js string, out any) {
	tb.Helper()
	require.NoError(tb, chromedp.Run(b.Ctx, chromedp.Evaluate(js, out)))
}

func (b *Browser) NoProblems(tb testing.TB) {
	tb.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Empty(tb, b.problems, "the page must load and run without console errors, exceptions or network requests")
}
