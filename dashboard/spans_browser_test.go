package dashboard

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// TestBrowserSpans shows, in a real Chromium, the waterfalls of the runs
// the newer recorders make: a distill run's rounds with each candidate's
// checks under its round (with their verdicts and counts, and no held-out
// input on the page) and the model calls that wrote the candidate under it;
// a gateway request with its agent run under it, and that run's model and
// tool calls under the run, placed in the request's time.
func TestBrowserSpans(t *testing.T) {
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

	// a distill run: a rejected round, then an accepted one
	at := time.Now().Add(-2 * time.Minute)
	secret := "SEALED-INPUT-" + strings.Repeat("x", 8)
	checks := func(t0 time.Time, sealedOK bool) []distill.Check {
		return []distill.Check{
			{Name: "screen", Start: t0.Add(2 * time.Second), Duration: 20 * time.Millisecond, Passed: true, Note: "0 reason(s) to reject it"},
			{Name: "compile", Start: t0.Add(2 * time.Second), Duration: 3 * time.Second, Passed: true, Note: "go vet and go test -c passed"},
			{Name: "tests", Start: t0.Add(5 * time.Second), Duration: 1500 * time.Millisecond, Passed: true, Note: "0 failed, 0 of 3 patterns untried"},
			{Name: "validation", Start: t0.Add(6500 * time.Millisecond), Duration: 800 * time.Millisecond, Passed: true, Note: "11/12 validation calls equal, 0 wrong, 1 left to the model"},
			{Name: "sealed", Start: t0.Add(7300 * time.Millisecond), Duration: 900 * time.Millisecond, Passed: sealedOK,
				Note: map[bool]string{true: "12/14 held-out calls equal, 0 wrong, 2 left to the model", false: "9/14 held-out calls equal, 3 wrong, 2 left to the model"}[sealedOK]},
		}
	}
	rep := &distill.Report{Ptool: "route_ticket", Train: 30, Validation: 12, Sealed: 14, Accepted: true,
		PatternCalls: []distill.ModelCall{{Start: at, Latency: 1500 * time.Millisecond, Usage: ptk.Usage{PromptTokens: 1800, CompletionTokens: 200}, Cost: 0.002}},
		Rounds: []distill.Round{
			{N: 1, Start: at.Add(1500 * time.Millisecond), Duration: 8700 * time.Millisecond, Rejected: "wrong on 21.4% of the sealed inputs",
				Calls:  []distill.ModelCall{{Start: at.Add(1500 * time.Millisecond), Latency: 2 * time.Second, Usage: ptk.Usage{PromptTokens: 2500, CompletionTokens: 700}, Cost: 0.004}},
				Checks: checks(at.Add(1500*time.Millisecond), false),
				Sealed: &distill.Score{Total: 14, Correct: 9, Wrong: 3, Abstained: 2, WrongCases: []distill.Case{{Input: json.RawMessage(`"` + secret + `"`), Want: json.RawMessage(`"billing"`), Verdict: distill.Wrong}}}},
			{N: 2, Start: at.Add(10200 * time.Millisecond), Duration: 8700 * time.Millisecond, Accepted: true,
				Calls:  []distill.ModelCall{{Start: at.Add(10200 * time.Millisecond), Latency: 2 * time.Second, Usage: ptk.Usage{PromptTokens: 3100, CompletionTokens: 650}, Cost: 0.005}},
				Checks: checks(at.Add(10200*time.Millisecond), true),
				Sealed: &distill.Score{Total: 14, Correct: 12, Abstained: 2}},
		}}
	dist := record.Distill(rep, "qwen3:8b", "ollama", at, nil)
	dist.Duration = trace.Millis(19 * time.Second)
	w.Record(dist)

	// a gateway request served with the gateway's own tools
	tool := ptk.NewTool(ptk.ToolInfo{Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		func(context.Context, json.RawMessage) (ptk.Result, error) {
			time.Sleep(150 * time.Millisecond)
			return ptk.Result{Content: "module github.com/ptkit/ptk"}, nil
		})
	model := slow{llmtest.New(
		withUsage("<PTK_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"go.mod\"}}\n</PTK_CALL>", 900, 40),
		withUsage("The module is github.com/ptkit/ptk.", 1000, 30),
	), 300 * time.Millisecond}
	req := record.NewRequest(w)
	time.Sleep(100 * time.Millisecond) // reading the body
	obs := req.Agent(trace.Run{Name: "serve", Model: "qwen3:8b", Provider: "ollama", Mode: "ptk", Input: "What is the module?"})
	var res *agent.Result
	for e, err := range agent.Stream(ctx, []ptk.Message{{Role: ptk.RoleUser, Content: "What is the module?"}},
		agent.Options{Model: model, ModelName: "qwen3:8b", Mode: agent.ModePTK, Tools: []ptk.Tool{tool}}) {
		obs.Event(e, err)
		if e.Kind == agent.EventDone {
			res = e.Run
		}
	}
	if res == nil || !res.Success {
		t.Fatalf("the agent run: %+v", res)
	}
	time.Sleep(50 * time.Millisecond) // writing the answer
	req.End(trace.Run{Model: "qwen3:8b", Provider: "ollama", Usage: res.Usage},
		trace.Request{API: "chat", Method: "POST", Route: "/v1/chat/completions", Status: 200, Asked: "gpt-4o", Model: "qwen3:8b", Stream: true, Mode: "server-tools/ptk"})
	if err := w.Close(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	h := New(s, Options{Poll: 100 * time.Millisecond})
	addr := serveDashboard(t, h)

	bctx := startChromium(t, ctx, browser, dir)
	shot := func(name string) {
		t.Helper()
		screenshot(t, bctx, shots, name)
	}
	// rows returns the waterfall's rows as span → indent and text.
	rows := func(what string) (map[string]string, map[string]string) {
		t.Helper()
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`!!document.querySelector("#waterfall")`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			body, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
			t.Fatalf("%s: no waterfall (%v); the page shows:\n%.1500s", what, err, body)
		}
		tree, _ := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#waterfall tbody tr")).map(r => r.dataset.span + "|" + r.querySelector("td.sname").style.paddingLeft + "|" + r.innerText.replace(/\s+/g, " "))`))
		t.Logf("%s waterfall:\n%s", what, strings.Join(tree, "\n"))
		depth, text := map[string]string{}, map[string]string{}
		for _, r := range tree {
			f := strings.SplitN(r, "|", 3)
			depth[f[0]], text[f[0]] = f[1], f[2]
		}
		return depth, text
	}

	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/run/"+dist.ID)); err != nil {
		t.Fatal(err)
	}
	depth, text := rows("the distill run")
	for span, pad := range map[string]string{"": "8px", "model/0": "26px", "step/0": "26px", "model/1": "44px", "step/1": "44px", "step/5": "44px",
		"step/6": "26px", "step/11": "44px", "model/2": "44px"} {
		if depth[span] != pad {
			t.Errorf("distill span %q at indent %q, want %q", span, depth[span], pad)
		}
	}
	if !strings.Contains(text["step/5"], "sealed · 9/14 held-out calls equal") || !strings.Contains(text["step/0"], "round 1 · rejected") ||
		!strings.Contains(text["step/6"], "round 2 · accepted") || !strings.Contains(text["step/6"], "3,750") {
		t.Errorf("the rounds' rows: %q, %q, %q", text["step/0"], text["step/5"], text["step/6"])
	}
	page, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
	if strings.Contains(page, secret) {
		t.Errorf("the distill run's page shows a sealed input")
	}
	if !strings.Contains(page, "ollama") {
		t.Errorf("the distill run's page does not say its provider")
	}
	shot("spans-1-distill")

	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/run/"+req.ID())); err != nil {
		t.Fatal(err)
	}
	depth, text = rows("the gateway request")
	kids, _ := s.List(ctx, trace.Filter{Parent: req.ID()})
	if len(kids) != 1 {
		t.Fatalf("the request's runs: %+v", kids)
	}
	run := "run:" + kids[0].ID + "/"
	for span, pad := range map[string]string{"": "8px", run: "26px", run + "model/0": "44px", run + "tool/0": "44px", run + "model/1": "44px"} {
		if depth[span] != pad {
			t.Errorf("request span %q at indent %q, want %q", span, depth[span], pad)
		}
	}
	if !strings.Contains(text[""], "1,970") || !strings.Contains(text[run], "agent") || !strings.Contains(text[run+"tool/0"], "read_file") {
		t.Errorf("the request's rows: %q, %q, %q", text[""], text[run], text[run+"tool/0"])
	}
	page, _ = chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(page, "→ 200") || !strings.Contains(page, "POST /v1/chat/completions · chat · streamed") || !strings.Contains(page, "asked for gpt-4o") || !strings.Contains(page, "2 in its runs") {
		t.Errorf("the request's page does not say what it was:\n%.800s", page)
	}
	// the agent run's bar lies within the request's, after its start
	bars, _ := chromedp.Run(bctx, chromedp.Evaluate[[]float64](`(() => { const b = s => document.querySelector('#waterfall tr[data-span="' + s + '"] .bar i'); return ["", "`+run+`"].map(s => parseFloat(b(s).style.left)).concat(["", "`+run+`"].map(s => parseFloat(b(s).style.width))) })()`))
	if len(bars) != 4 || bars[1] <= bars[0] || bars[1]+bars[3] > 100.5 {
		t.Errorf("the request's and its run's bars (left, left, width, width): %v", bars)
	}
	shot("spans-2-request")
}
