package dashboard

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/distill"
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

	h := New(s, Options{Poll: 100 * time.Millisecond, Labels: s})
	addr := serveDashboard(t, h)

	bctx := startChromium(t, ctx, browser, dir)
	shot := func(name string) {
		t.Helper()
		screenshot(t, bctx, shots, name)
	}
	waitJS := func(what, expr string, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
			body, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
			v, e2 := chromedp.Run(bctx, chromedp.Evaluate[any](expr))
			t.Fatalf("%s: not within %v (%v; now %v %v); the page shows:\n%.1500s", what, within, err, v, e2, body)
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

	// A distillation recorded as it goes (ptk distill's recorder): it is
	// in the list, running, within a second of its start; its page shows
	// each round and check as they end, the round going on as running.
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/runs")); err != nil {
		t.Fatal(err)
	}
	waitJS("the runs page", `!!document.querySelector("#runs tbody tr.run")`, 10*time.Second)
	started = time.Now()
	dist := record.NewDistill(w, trace.Run{Name: "route_ticket", Model: "qwen3:8b", Provider: "ollama", Input: "30 training, 12 validation, 14 sealed examples"})
	// what distill.Run does, told as it does it, and its report
	rep := &distill.Report{Ptool: "route_ticket", Train: 30, Validation: 12, Sealed: 14}
	call := func(round int, d time.Duration, in, out int) {
		c := distill.ModelCall{Start: time.Now(), Latency: d, Usage: ptk.Usage{PromptTokens: in, CompletionTokens: out}}
		time.Sleep(d)
		if round == 0 {
			rep.PatternCalls = append(rep.PatternCalls, c)
		} else {
			rep.Rounds[round-1].Calls = append(rep.Rounds[round-1].Calls, c)
		}
		dist.Observe(distill.Event{Kind: distill.EventCall, Round: round, Calls: []distill.ModelCall{c}})
	}
	check := func(round int, name string, d time.Duration, passed bool, note string) {
		c := distill.Check{Name: name, Start: time.Now(), Duration: d, Passed: passed, Note: note}
		time.Sleep(d)
		rep.Rounds[round-1].Checks = append(rep.Rounds[round-1].Checks, c)
		dist.Observe(distill.Event{Kind: distill.EventCheck, Round: round, Check: &c})
	}
	begin := func(round int) {
		rep.Rounds = append(rep.Rounds, distill.Round{N: round, Start: time.Now()})
		dist.Observe(distill.Event{Kind: distill.EventRound, Round: round, Start: rep.Rounds[round-1].Start})
	}
	end := func(round int, rejected string) {
		r := &rep.Rounds[round-1]
		r.Duration, r.Accepted, r.Rejected = time.Since(r.Start), rejected == "", rejected
		dist.Observe(distill.Event{Kind: distill.EventRoundEnd, Round: round, Duration: r.Duration, Accepted: r.Accepted, Rejected: rejected})
	}
	waitJS("the running distill in the list", `Array.from(document.querySelectorAll("#runs tbody tr.run")).some(r => r.innerText.includes("route_ticket") && r.innerText.includes("running"))`, 3*time.Second)
	appeared = time.Since(started)
	t.Logf("the distill run appeared in the list %v after it started", appeared.Round(time.Millisecond))
	if appeared > time.Second {
		t.Errorf("the distill run appeared %v after its start, want within a second", appeared)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/run/"+dist.ID())); err != nil {
		t.Fatal(err)
	}
	call(0, 300*time.Millisecond, 1800, 200)
	begin(1)
	call(1, 400*time.Millisecond, 2500, 700)
	check(1, "screen", 50*time.Millisecond, true, "0 reason(s) to reject it")
	check(1, "compile", 300*time.Millisecond, true, "go vet and go test -c passed")
	check(1, "tests", 200*time.Millisecond, false, "2 failed, 0 of 3 patterns untried")
	check(1, "validation", 100*time.Millisecond, true, "11/12 validation calls equal, 0 wrong, 1 left to the model")
	end(1, "its tests fail")
	begin(2)
	call(2, 400*time.Millisecond, 3100, 650)
	check(2, "screen", 50*time.Millisecond, true, "0 reason(s) to reject it")
	waitJS("the first round and the second going on", `(() => { const page = document.querySelector("#run"), first = document.querySelector('#waterfall tr[data-span="step/0"]'), second = document.querySelector('#waterfall tr[data-span="step/5"]'); `+
		`return !!page && page.dataset.status === "running" && !!first && first.innerText.includes("rejected: its tests fail") && !!second && second.innerText.includes("running") && !!document.querySelector('#waterfall tr[data-span="step/6"]') })()`, 5*time.Second)
	rows := func() map[string]string {
		tree, _ := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#waterfall tbody tr")).map(r => r.dataset.span + "|" + r.querySelector("td.sname").style.paddingLeft + "|" + r.innerText.replace(/\s+/g, " "))`))
		t.Logf("waterfall:\n%s", strings.Join(tree, "\n"))
		out := map[string]string{}
		for _, r := range tree {
			f := strings.SplitN(r, "|", 3)
			out[f[0]] = f[1] + "|" + f[2]
		}
		return out
	}
	live := rows()
	for span, pad := range map[string]string{"step/0": "26px", "model/1": "44px", "step/3": "44px", "step/5": "26px", "model/2": "44px", "step/6": "44px"} {
		if !strings.HasPrefix(live[span], pad+"|") {
			t.Errorf("the running distill: span %q at %q, want indent %s", span, live[span], pad)
		}
	}
	shot("live-6-distill-running")
	check(2, "compile", 300*time.Millisecond, true, "go vet and go test -c passed")
	check(2, "tests", 200*time.Millisecond, true, "0 failed, 0 of 3 patterns untried")
	check(2, "validation", 100*time.Millisecond, true, "12/12 validation calls equal, 0 wrong, 0 left to the model")
	check(2, "sealed", 100*time.Millisecond, true, "12/14 held-out calls equal, 0 wrong, 2 left to the model")
	end(2, "")
	waitJS("the second round's end", `(() => { const r = document.querySelector('#waterfall tr[data-span="step/5"]'); return !!r && r.innerText.includes("accepted") && !!document.querySelector('#waterfall tr[data-span="step/10"]') })()`, 5*time.Second)
	shot("live-7-distill-accepted")
	// its end: the report's record, under the same id
	rep.Accepted = true
	dist.Done(rep, nil)
	waitJS("the finished distill", `document.querySelector("#run").dataset.status === "ok" && document.querySelector('#waterfall tr[data-span="step/5"]').innerText.includes("accepted")`, 5*time.Second)
	final := rows()
	if len(final) != 15 || !strings.Contains(final[""], "8,950") {
		t.Errorf("the finished distill's waterfall: %d rows, the run's %q (want 15 rows, 8,950 tokens)", len(final), final[""])
	}
	shot("live-8-distill-done")
}
