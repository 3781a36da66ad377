package dashboard

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// serveDashboard serves h on a loopback port until the test ends and
// returns the port's address.
func serveDashboard(t *testing.T, h *Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { h.Close(); srv.Close() })
	return ln.Addr().String()
}

// startChromium starts the headless Chromium at browser, its profile in
// dir, a 1400×1000 window, and returns a context of its first tab that
// ends after 90 s or with the test.
func startChromium(t *testing.T, ctx context.Context, browser, dir string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "chromium")), chromedp.WindowSize(1400, 1000))
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelA)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(cancelB)
	bctx, cancelT := context.WithTimeout(bctx, 90*time.Second)
	t.Cleanup(cancelT)
	return bctx
}

// screenshot saves the tab's whole page as shots/name.png.
func screenshot(t *testing.T, bctx context.Context, shots, name string) {
	t.Helper()
	buf, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(shots, name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}
