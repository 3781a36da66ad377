package dashboard

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/trace"
)

// chromiumPath is the browser of the browser test: $PTK_TEST_CHROMIUM,
// else chromium on the PATH. Without one the test skips, except under CI.
func chromiumPath(t *testing.T) string {
	p := os.Getenv("PTK_TEST_CHROMIUM")
	if p == "" {
		p, _ = exec.LookPath("chromium")
	}
	if p == "" {
		msg := "no Chromium: install Debian's chromium (as .ci/run does) or set PTK_TEST_CHROMIUM"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// artifacts is where the screenshots go: $PTK_ARTIFACTS, else a temporary
// folder.
func artifacts(t *testing.T) string {
	if d := os.Getenv("PTK_ARTIFACTS"); d != "" {
		os.MkdirAll(d, 0o755)
		return d
	}
	return t.TempDir()
}

// generated is how many runs the browser test's store holds besides the
// known ones.
const generated = 100_000

// seed fills a store with generated runs, 25 s apart over the last 29 days,
// straight in SQL (the way a team's store grows is not what is tested
// here), some with tool calls and ptool calls.
func seed(t *testing.T, file string, now time.Time) {
	db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	nowUS := now.UnixMicro()
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO runs (id, kind, name, model, mode, started_us, duration_us, status, error_code, error_message,
			prompt_tokens, completion_tokens, cost, iterations, tool_calls, input, output)
			WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %d)
			SELECT printf('gen%%06d', x),
				CASE x %% 4 WHEN 1 THEN 'ptool' WHEN 3 THEN 'workflow' ELSE 'agent' END,
				CASE x %% 4 WHEN 1 THEN 'classify_' || (x %% 5) WHEN 3 THEN 'triage' ELSE '' END,
				CASE x %% 3 WHEN 0 THEN 'qwen3:8b' WHEN 1 THEN 'gpt-4o-mini' ELSE 'claude-sonnet-4' END, 'ptk',
				%d - x * 25000000, ((x * 7919) %% 5000) * 1000 + 200000,
				CASE WHEN x %% 10 = 0 THEN 'error' ELSE 'ok' END,
				CASE WHEN x %% 10 = 0 THEN 'MAX_ITERATIONS_REACHED' ELSE '' END,
				CASE WHEN x %% 10 = 0 THEN 'the run made 10 model calls, its limit' ELSE '' END,
				500 + x %% 1000, 20 + x %% 100, (500 + x %% 1000) * 0.000002, 1 + x %% 5, CASE WHEN x <= 30000 THEN 1 ELSE 0 END,
				'generated prompt number ' || x, 'answer ' || x
			FROM c`, generated, nowUS),
		`INSERT INTO tool_calls (run_id, seq, iteration, tool, args, result, is_error, outcome, duration_us)
			WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000)
			SELECT printf('gen%06d', x), 0, 1,
				CASE x % 6 WHEN 0 THEN 'read_file' WHEN 1 THEN 'grep' WHEN 2 THEN 'list_dir' WHEN 3 THEN 'bash' WHEN 4 THEN 'glob' ELSE 'edit_file' END,
				'{"path":"f"}', 'ok', CASE WHEN x % 13 = 0 THEN 1 ELSE 0 END, 'ran', 300 + (x * 31) % 40000
			FROM c`,
		`INSERT INTO ptool_calls (run_id, seq, ptool, input, output, source, fallback, is_error, duration_us)
			WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 4 FROM c WHERE x < 40000)
			SELECT printf('gen%06d', x), 0, 'classify_' || (x % 5), '{"text":"t"}', '"urgent"',
				CASE WHEN x % 5 = 1 AND x % 3 <> 0 THEN 'code' ELSE 'model' END, CASE WHEN x % 5 = 1 AND x % 3 = 0 THEN 1 ELSE 0 END,
				CASE WHEN x % 10 = 0 THEN 1 ELSE 0 END, 200000
			FROM c`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// known are the runs the test looks for: an agent run with its calls, a
// workflow with a ptool step.
func known(now time.Time) []*trace.Record {
	return []*trace.Record{
		{
			Run: trace.Run{ID: "known-agent", Kind: trace.KindAgent, Model: "qwen3:8b", Mode: "ptk", StartedAt: now.Add(-10 * time.Second),
				Duration: trace.Millis(2300 * time.Millisecond), Status: trace.StatusOK, Usage: ptk.Usage{PromptTokens: 2400, CompletionTokens: 180},
				Cost: 0.0031, Iterations: 2, Input: "Summarise the README and <b>list</b> the packages", Output: "ptk gives any model tool calling."},
			ModelCalls: []trace.ModelCall{
				{Mode: "ptk", Usage: ptk.Usage{PromptTokens: 1100, CompletionTokens: 90}, Latency: trace.Millis(900 * time.Millisecond),
					Text: "Let me read it.\n<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"README.md\"}}</PTK_CALL>"},
				{Mode: "ptk", Usage: ptk.Usage{PromptTokens: 1300, CompletionTokens: 90}, Latency: trace.Millis(1200 * time.Millisecond), Text: "ptk gives any model tool calling."},
			},
			ToolCalls: []trace.ToolCall{
				{Iteration: 1, Tool: "read_file", Args: json.RawMessage(`{"path":"README.md"}`), Result: "# ptk\n<script>alert(1)</script>\nTool calling for any LLM.",
					Outcome: trace.OutcomeRan, Repairs: []string{"closed the JSON object"}, Duration: trace.Millis(3 * time.Millisecond)},
				{Iteration: 1, Tool: "bash", Args: json.RawMessage(`{"command":"rm -rf build"}`), Result: "denied: bash needs --yes", IsError: true, Outcome: trace.OutcomeDenied},
			},
		},
		{
			Run: trace.Run{ID: "known-workflow", Kind: trace.KindWorkflow, Name: "triage", Model: "qwen3:8b", StartedAt: now.Add(-8 * time.Second),
				Duration: trace.Millis(600 * time.Millisecond), Status: trace.StatusOK, Input: `{"ticket":"printer on fire"}`},
			Detail: json.RawMessage(`{"steps":[{"ptool":"classify","input":"$ticket"}]}`),
		},
		{
			Run: trace.Run{ID: "known-react", Kind: trace.KindReAct, Name: "count the items", Model: "qwen3:8b", StartedAt: now.Add(-20 * time.Minute),
				Duration: trace.Millis(900 * time.Millisecond), Status: trace.StatusOK, Input: "count the items", Output: "2"},
			Detail: json.RawMessage(`{"goal":"count the items","steps":[],"success":true,"final_answer":"2","ptp":"Goal: count the items\nCalling extract_items(order=\"a pizza and a salad\")...\n...extract_items returned [\"pizza\",\"salad\"]\nFinal answer: 2\n"}`),
		},
		{
			Run: trace.Run{ID: "known-ptool", ParentID: "known-workflow", Kind: trace.KindPtool, Name: "classify", Model: "qwen3:8b", StartedAt: now.Add(-7 * time.Second),
				Duration: trace.Millis(400 * time.Millisecond), Status: trace.StatusOK, Input: `{"text":"printer on fire"}`, Output: `"urgent"`},
			PtoolCalls: []trace.PtoolCall{{Ptool: "classify", Input: json.RawMessage(`{"text":"printer on fire"}`), Output: json.RawMessage(`"urgent"`),
				Source: "model", Attempts: []trace.Attempt{{Output: "URGENT", Problems: []string{"not one of the enum's values"}}, {Output: `"urgent"`}},
				Duration: trace.Millis(400 * time.Millisecond)}},
		},
	}
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test takes a few seconds")
	}
	if raceEnabled {
		// The handler's concurrency is race-tested by TestLive; here the
		// race detector only makes SQLite (C compiled to Go) 30 times slower.
		t.Skip("the browser test runs without -race (.ci/run runs it so)")
	}
	browser := chromiumPath(t)
	shots := artifacts(t)
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "traces.db")
	now := time.Now()
	s, err := trace.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	seed(t, file, now)
	if err := s.Write(ctx, known(now)...); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d runs in %v", generated+4, time.Since(start).Round(time.Millisecond))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	h := New(s, Options{Poll: 250 * time.Millisecond})
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer func() { h.Close(); srv.Close() }()

	bctx := startChromium(t, ctx, browser, dir)

	var mu sync.Mutex
	var consoleErrors []string
	allowWS := false                  // WebSocket failures are expected while the dashboard restarts
	console := chromedp.Console(bctx) // subscribed now, read below
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException {
				continue
			}
			mu.Lock()
			if !(allowWS && strings.Contains(m.Text, "WebSocket")) {
				consoleErrors = append(consoleErrors, m.String()+" "+m.URL)
			}
			mu.Unlock()
		}
	}()
	shot := func(name string) {
		t.Helper()
		screenshot(t, bctx, shots, name)
	}
	// waitJS waits until a JavaScript expression is true.
	waitJS := func(what, expr string, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
			body, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%s: not within %v (%v); console errors %q; the page shows:\n%.1500s", what, within, err, consoleErrors, body)
		}
		return time.Since(start)
	}
	rowsJS := `Array.from(document.querySelectorAll("#runs tbody tr.run")).map(r => r.innerText)`

	// The runs page: its first paint (the first page of rows) within a second.
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS("the first page of runs", `document.querySelectorAll("#runs tbody tr.run").length === 50`, 10*time.Second)
	firstPaint, _ := chromedp.Run(bctx, chromedp.Evaluate[float64](`performance.now()`))
	t.Logf("runs page: first page of %d runs painted %.0f ms after navigation started", generated+3, firstPaint)
	if firstPaint > 1000 {
		t.Errorf("first paint took %.0f ms, want under 1 s", firstPaint)
	}
	count, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#count")))
	if want := "1–50 of " + thousands(generated+4) + " runs"; count != want {
		t.Errorf("count = %q", count)
	}
	rows, _ := chromedp.Run(bctx, chromedp.Evaluate[[]string](rowsJS))
	if len(rows) == 0 || !strings.Contains(rows[0], "ptool") || !strings.Contains(rows[2], "Summarise the README and <b>list</b>") {
		t.Errorf("the newest runs are not first, or markup was not shown as text: %q", rows[:min(3, len(rows))])
	}
	shot("1-runs")

	// Filters: each change shows its runs within a second.
	filter := func(name, sel, value string) {
		t.Helper()
		before, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("#runs").dataset.loaded`))
		js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event(e.tagName === "SELECT" ? "change" : "input", {bubbles: true})); return true })()`, sel, value)
		if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](js)); err != nil {
			t.Fatal(err)
		}
		d := waitJS("filter "+name, fmt.Sprintf(`document.querySelector("#runs").dataset.loaded !== %q`, before), 5*time.Second)
		apiMS, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("#runs").dataset.ms`))
		t.Logf("filter %s: rows shown %v after the change (request and render %s ms)", name, d.Round(time.Millisecond), apiMS)
		if sel == "select" || !strings.Contains(sel, "input") {
			if d > time.Second {
				t.Errorf("filter %s took %v, want under 1 s", name, d)
			}
		} else if d > time.Second+300*time.Millisecond { // text fields wait 300 ms for typing to pause
			t.Errorf("filter %s took %v, want under 1 s after typing pauses", name, d)
		}
	}
	filter("kind=ptool", `select[name="kind"]`, "ptool")
	rows, _ = chromedp.Run(bctx, chromedp.Evaluate[[]string](rowsJS))
	for _, r := range rows {
		if !strings.Contains(r, "ptool") {
			t.Errorf("kind=ptool shows %q", r)
		}
	}
	filter("kind=agent", `select[name="kind"]`, "agent")
	filter("status=error", `select[name="status"]`, "error")
	filter("model=gpt-4o-mini", `input[name="model"]`, "gpt-4o-mini")
	count, _ = chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#count")))
	t.Logf("agent, error, gpt-4o-mini: %s", count)
	// x % 10 = 0 (so x is even: an agent run), x % 3 = 1: x = 10, 40, 70…
	if want := " of " + thousands((generated-10)/30+1) + " runs"; !strings.HasSuffix(count, want) {
		t.Errorf("count = %q, want %q", count, want)
	}
	shot("2-filtered")
	filter("kind=any", `select[name="kind"]`, "")
	filter("status=any", `select[name="status"]`, "")
	filter("model=any", `input[name="model"]`, "")
	filter("since=1h", `select[name="since"]`, "1h")
	filter("text=Summarise", `input[name="text"]`, "summarise the readme")
	rows, _ = chromedp.Run(bctx, chromedp.Evaluate[[]string](rowsJS))
	if len(rows) != 1 || !strings.Contains(rows[0], "qwen3:8b") {
		t.Fatalf("searching for the known run shows %q", rows)
	}

	// Open it: its timeline shows the model calls and the tool calls.
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#runs tbody tr.run`)), chromedp.WaitVisible(chromedp.CSS(`#timeline`))); err != nil {
		t.Fatal(err)
	}
	timeline, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#timeline")))
	for _, want := range []string{"model call 1", "model call 2", "read_file", "<script>alert(1)</script>", "closed the JSON object", "bash", "denied", "1,100 + 90 tokens"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q:\n%s", want, timeline)
		}
	}
	shot("3-run")

	// A workflow shows its steps.
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/run/known-workflow")); err != nil {
		t.Fatal(err)
	}
	waitJS("the workflow's steps", `document.body.innerText.includes("classify") && document.body.innerText.includes("trace")`, 5*time.Second)

	// A ReAct run shows its trajectory as PTP text.
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/run/known-react")); err != nil {
		t.Fatal(err)
	}
	waitJS("the trajectory's PTP", `document.body.innerText.includes("trajectory as PTP") && document.body.innerText.includes('...extract_items returned ["pizza","salad"]')`, 5*time.Second)
	shot("3b-react")

	// Analytics: charts, and the tables per tool, model and ptool.
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/analytics")); err != nil {
		t.Fatal(err)
	}
	// Stats over 100,000 runs take seconds on a loaded machine: the wait
	// is long, the time is logged.
	d := waitJS("analytics", `document.querySelectorAll("svg.chart").length === 2 && document.querySelectorAll("table.stats").length === 3`, 60*time.Second)
	t.Logf("analytics shown in %v", d.Round(time.Millisecond))
	analytics, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#analytics")))
	for _, want := range []string{"read_file", "gpt-4o-mini", "classify_1", "ready:", "answered by code (coverage)", "fell back (rate)"} {
		if !strings.Contains(analytics, want) {
			t.Errorf("analytics lack %q", want)
		}
	}
	shot("4-analytics")
	// One tool's runs over time.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => { const e = document.querySelector('#afilters input[name="tool"]'); e.value = "bash"; e.dispatchEvent(new Event("input", {bubbles: true})); return true })()`)); err != nil {
		t.Fatal(err)
	}
	waitJS("the analytics of bash", `(() => { const t = document.querySelector("#analytics table.stats"); return t && t.innerText.includes("bash") && !t.innerText.includes("grep") })()`, 60*time.Second)

	// Live: a run another process records appears within two seconds.
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+addr+"/#/runs")); err != nil {
		t.Fatal(err)
	}
	waitJS("the runs page", `document.querySelectorAll("#runs tbody tr.run").length === 50 && document.querySelector("#live").className === "live on"`, 10*time.Second)
	record := func(input string) {
		t.Helper()
		other, err := trace.Open(ctx, file) // another process would do just this
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if err := other.Write(ctx, &trace.Record{Run: trace.Run{Kind: trace.KindAgent, Model: "qwen3:8b", Status: trace.StatusOK, Input: input,
			StartedAt: time.Now(), Duration: trace.Millis(time.Second)}}); err != nil {
			t.Fatal(err)
		}
	}
	record("a run recorded while the page is open")
	d = waitJS("the new run", `document.querySelector("#runs tbody tr.run").innerText.includes("a run recorded while the page is open")`, 2*time.Second)
	t.Logf("a run recorded elsewhere appeared after %v", d.Round(time.Millisecond))
	if fresh, _ := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("#runs tbody tr.fresh").length`)); fresh != 1 {
		t.Errorf("%d rows marked new, want 1", fresh)
	}
	shot("5-live")

	mu.Lock()
	if len(consoleErrors) > 0 {
		t.Errorf("console errors: %q", consoleErrors)
	}
	allowWS = true
	mu.Unlock()

	// The dashboard restarts: the page reconnects, and live updates go on.
	h.Close()
	srv.Close()
	waitJS("the page to see the dashboard go", `document.querySelector("#live").className === "live off"`, 5*time.Second)
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h2 := New(s, Options{Poll: 250 * time.Millisecond})
	srv2 := &http.Server{Handler: h2}
	go srv2.Serve(ln2)
	defer func() { h2.Close(); srv2.Close() }()
	d = waitJS("the reconnection", `document.querySelector("#live").className === "live on"`, 10*time.Second)
	t.Logf("reconnected %v after the restart", d.Round(time.Millisecond))
	record("a run recorded after the restart")
	waitJS("the run after the restart", `document.querySelector("#runs tbody tr.run").innerText.includes("a run recorded after the restart")`, 2*time.Second)
}

// thousands writes n with commas, as the page does.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
