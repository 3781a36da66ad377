package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// shoot saves a screenshot of the shared browser's tab on prefix as
// name.png in $PTK_ARTIFACTS (a temporary folder without it), through a
// connection of its own, as a person looking at the page would see it.
func shoot(t *testing.T, prefix, name string) {
	t.Helper()
	open := tabs(t, prefix)
	if len(open) == 0 {
		t.Errorf("no tab on %s to take a screenshot of", prefix)
		return
	}
	actx, cancel := remote.NewAllocator(t.Context(), shared.URL)
	defer cancel()
	root, cancelRoot := chromedp.NewContext(actx)
	defer cancelRoot()
	if _, err := chromedp.Targets(root); err != nil {
		t.Fatal(err)
	}
	var id = open[0].ID
	tctx, cancelTab := chromedp.NewContext(root, chromedp.WithTargetID(target.ID(id)), chromedp.WithDetachOnCancel())
	defer cancelTab()
	buf, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	dir := os.Getenv("PTK_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	os.MkdirAll(dir, 0o755)
	f := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".png")
	if err := os.WriteFile(f, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", f)
}
