package dashboard

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// slow is a scripted model that takes d to answer, as a real one does.
type slow struct {
	llm.Model
	d time.Duration
}

func (m slow) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	select {
	case <-time.After(m.d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return m.Model.Generate(ctx, req)
}

func withUsage(text string, in, out int) llmtest.Reply {
	r := llmtest.Text(text)
	r.Usage = ptk.Usage{PromptTokens: in, CompletionTokens: out}
	return r
}

type order struct {
	Text string `json:"text"`
}

// TestBrowserLive runs a ReAct run of several seconds, recorded through
// the recording API, while a real Chromium shows the dashboard: the run
// appears within a second of its start, running; its waterfall fills in
// as it goes, with the ptool call under its action and the call's
// attempts under it, with their tokens; a label set from the page is in
// the store; the analytics draw their charts when all runs fall in one
// bucket, with labels that do not overlap.
func TestBrowserLive(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test takes a few seconds")
	}
	if raceEnabled {
		t.Skip("the browser test runs without -race (.ci/run runs it so)")
	}
	browser := chromiumPath(t)
	shots := artifacts(t)
	ctx := context.Background()
	dir := t.TempDir()
	s, err := trace.Open(ctx, filepath.Join(dir, "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := trace.NewWriter(s, nil)
	defer w.Close(0)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	h := New(s, Options{Poll: 100 * time.Millisecond, Labels: s})
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer func() { h.Close(); srv.Close() }()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "chromium")), chromedp.WindowSize(1400, 1000))
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	bctx, cancelT := context.WithTimeout(bctx, 90*time.Second)
	defer cancelT()
	shot := func(name string) {
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
	waitJS := func(what, expr string, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
			body, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
			t.Fatalf("%s: not within %v (%v); the page shows:\n%.1500s", what, within, err, body)
		}
		return time.Since(start)
	}

	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS("the empty runs page, live", `document.querySelector("#live").className === "live on" && document.body.innerText.includes("No runs match")`, 10*time.Second)

	// A ReAct run of three slow model calls: an action on a ptool whose
	// first answer is wrong (two attempts), then an answer.
	const step = 1200 * time.Millisecond
	reg := ptool.NewRegistry()
	reg.Register(ptool.New[order, []string]("extract_items", "List the food items ordered.",
		ptool.WithModel(slow{llmtest.New(withUsage(`<answer>{"oops": 1}</answer>`, 300, 30), withUsage(`<answer>["pizza", "salad"]</answer>`, 400, 40)), step})))
	model := slow{llmtest.New(
		withUsage("The items first.\n<PTK_CALL>\n{\"tool\": \"extract_items\", \"args\": {\"text\": \"a pizza and a salad\"}}\n</PTK_CALL>", 1000, 100),
		withUsage("Two items.\n<answer>2</answer>", 2000, 200),
	), step}
	ropts := record.ReAct(w).Options(react.Options{Model: model, PTools: reg})
	started := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := react.Run(ctx, "How many items were ordered?", ropts)
		done <- err
	}()
	d := waitJS("the running run in the list", `(() => { const r = document.querySelector("#runs tbody tr.run"); return !!r && r.innerText.includes("running") })()`, 3*time.Second)
	appeared := time.Since(started)
	t.Logf("a run appeared in the list %v after it started (waited %v)", appeared.Round(time.Millisecond), d.Round(time.Millisecond))
	if appeared > time.Second {
		t.Errorf("the run appeared %v after its start, want within a second", appeared)
	}
	shot("live-1-running")

	// Its page, while it runs: the spans fill in.
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#runs tbody tr.run`)), chromedp.WaitVisible(chromedp.CSS(`#waterfall`))); err != nil {
		t.Fatal(err)
	}
	waitJS("the action's span while the run goes on", `document.querySelector("#run").dataset.status === "running" && !!document.querySelector('#waterfall tr[data-span="tool/0"]')`, 4*step)
	shot("live-2-filling")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitJS("the finished run", `document.querySelector("#run").dataset.status === "ok" && !!document.querySelector('#waterfall tr[data-span="ptool/0"]')`, 5*time.Second)
	// the tree: the run, its model calls and the action; under the action
	// the ptool call, under which its two attempts
	tree, _ := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#waterfall tbody tr")).map(r => r.dataset.span + "|" + r.querySelector("td.sname").style.paddingLeft + "|" + r.innerText.replace(/\s+/g, " "))`))
	t.Logf("waterfall:\n%s", strings.Join(tree, "\n"))
	depth := map[string]string{}
	text := map[string]string{}
	for _, r := range tree {
		f := strings.SplitN(r, "|", 3)
		depth[f[0]], text[f[0]] = f[1], f[2]
	}
	want := map[string]string{"": "8px", "model/0": "26px", "tool/0": "26px", "ptool/0": "44px", "model/1": "62px", "model/2": "62px", "model/3": "26px"}
	for span, pad := range want {
		if depth[span] != pad {
			t.Errorf("span %q at indent %q, want %q", span, depth[span], pad)
		}
	}
	if !strings.Contains(text["ptool/0"], "ptool extract_items") || !strings.Contains(text["ptool/0"], "770") || !strings.Contains(text["model/1"], "330") {
		t.Errorf("the ptool call's row %q, its first attempt's %q: want their tokens (770, 330)", text["ptool/0"], text["model/1"])
	}
	if !strings.Contains(text[""], "4,070") {
		t.Errorf("the run's row %q lacks its tokens summed (4,070)", text[""])
	}
	shot("live-3-waterfall")

	// Label the ptool call bad from the page.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => { window.prompt = () => "it counted the order twice"; return true })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#waterfall tr[data-span="ptool/0"] button[data-label="bad"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS("the label shown", `(() => { const b = document.querySelector('#waterfall tr[data-span="ptool/0"] td.sname .badge'); return !!b && b.innerText === "bad" })()`, 5*time.Second)
	runs, _ := s.List(ctx, trace.Filter{Kind: trace.KindReAct})
	ls, _ := s.Labels(ctx, runs[0].ID)
	if len(ls) != 1 || ls[0].Span != "ptool/0" || ls[0].Label != "bad" || ls[0].Note != "it counted the order twice" {
		t.Errorf("labels in the store: %+v", ls)
	}
	shot("live-4-labelled")

	// Analytics: every run in one bucket still draws both charts, and no
	// two axis labels overlap.
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/analytics")); err != nil {
		t.Fatal(err)
	}
	waitJS("the charts", `document.querySelectorAll("svg.chart").length === 2`, 10*time.Second)
	drawn, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`(() => {
		const line = document.querySelectorAll("svg.chart")[1];
		const out = [line.querySelectorAll("circle").length];
		for (const svg of document.querySelectorAll("svg.chart")) {
			const boxes = Array.from(svg.querySelectorAll("text")).filter(t => t.getAttribute("y") !== "12").map(t => t.getBBox());
			for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
				const a = boxes[i], b = boxes[j];
				if (a.x < b.x + b.width && b.x < a.x + a.width) out.push("overlap");
			}
			for (const b of boxes) if (b.x < 0 || b.x + b.width > 600.5) out.push("outside");
		}
		return out.join(",");
	})()`))
	if drawn != "2" {
		t.Errorf("the charts of one bucket: %q, want 2 points drawn and no overlapping labels", drawn)
	}
	shot("live-5-analytics")
}
