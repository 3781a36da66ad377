package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
)

// Test tools ---------------------------------------------------------------

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`)

// weather is a read-only tool that counts its runs.
func weather(runs *atomic.Int32) ptk.Tool {
	return ptk.NewTool(ptk.ToolInfo{Name: "get_weather", Description: "Weather for a city.", Parameters: weatherSchema, ReadOnly: true},
		func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
			if runs != nil {
				runs.Add(1)
			}
			var a struct {
				City string `json:"city"`
				Days int    `json:"days"`
			}
			if err := json.Unmarshal(args, &a); err != nil {
				return ptk.Result{}, err
			}
			return ptk.Result{Content: fmt.Sprintf("%s: sunny, 21°C (%d days)", a.City, a.Days)}, nil
		})
}

func simpleTool(name string, readOnly bool, h ptk.Handler) ptk.Tool {
	return ptk.NewTool(ptk.ToolInfo{Name: name, Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`), ReadOnly: readOnly}, h)
}

func ptkCall(tool, args string) string {
	return "<PTK_CALL>\n{\"tool\": \"" + tool + "\", \"args\": " + args + "}\n</PTK_CALL>"
}

func native(id, tool, args string) ptk.Call {
	return ptk.Call{ID: id, Tool: tool, Args: json.RawMessage(args)}
}

func compact(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return "invalid JSON: " + string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// runEvents runs the loop through Stream and returns its result and events.
func runEvents(t *testing.T, prompt string, o Options) (*Result, []Event) {
	t.Helper()
	var events []Event
	var res *Result
	for e, err := range Stream(context.Background(), Prompt(prompt), o) {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		events = append(events, e)
		if e.Kind == EventDone {
			res = e.Run
		}
	}
	return res, events
}

func mustRun(t *testing.T, prompt string, o Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), Prompt(prompt), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// The loop ----------------------------------------------------------------

func TestPTKModeRoundTrip(t *testing.T) {
	var runs atomic.Int32
	m := llmtest.New(
		llmtest.Reply{Content: "Let me check.\n" + ptkCall("get_weather", `{"city": "Paris", "days": "2"}`), Usage: ptk.Usage{PromptTokens: 100, CompletionTokens: 20}},
		llmtest.Reply{Content: "It is sunny in Paris.", Usage: ptk.Usage{PromptTokens: 150, CompletionTokens: 8}},
	)
	res := mustRun(t, "Weather in Paris?", Options{Model: m, ModelName: "m", Mode: ModePTK, Tools: []ptk.Tool{weather(&runs)}, Instructions: "Be brief."})
	if !res.Success || res.Content != "It is sunny in Paris." || res.Iterations != 2 || res.TotalToolCalls != 1 || runs.Load() != 1 {
		t.Fatalf("result = %+v", res)
	}
	if got := string(res.ToolCalls[0].Call.Args); got != `{"city":"Paris","days":2}` {
		t.Errorf("args = %s, want the coerced arguments", got)
	}
	if res.Usage != (ptk.Usage{PromptTokens: 250, CompletionTokens: 28}) {
		t.Errorf("usage = %+v", res.Usage)
	}
	if res.Error != nil || res.Mode != ModePTK {
		t.Errorf("error = %v, mode = %s", res.Error, res.Mode)
	}
	reqs := m.Requests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 0 {
		t.Fatalf("requests: %d, tools in the first: %d (ptk mode sends none)", len(reqs), len(reqs[0].Tools))
	}
	sys := reqs[0].Messages[0]
	if sys.Role != ptk.RoleSystem || !strings.HasPrefix(sys.Content, "Be brief.") || !strings.Contains(sys.Content, "<PTK_CALL>") || !strings.Contains(sys.Content, "## get_weather") {
		t.Errorf("system prompt = %q", sys.Content)
	}
	second := reqs[1].Messages
	if len(second) != 4 {
		t.Fatalf("second request has %d messages, want system, user, assistant, results: %+v", len(second), second)
	}
	if second[2].Role != ptk.RoleAssistant || !strings.Contains(second[2].Content, `"days": "2"`) {
		t.Errorf("the assistant turn is not replayed as the model wrote it: %q", second[2].Content)
	}
	want := "<PTK_RESULT id=\"call_1_1\" tool=\"get_weather\">\nParis: sunny, 21°C (2 days)\n</PTK_RESULT>"
	if second[3].Role != ptk.RoleUser || second[3].Content != want {
		t.Errorf("results message = %q, want %q", second[3].Content, want)
	}
	// The history: user, assistant (prose + call), tool, assistant.
	roles := []ptk.Role{}
	for _, msg := range res.Messages {
		roles = append(roles, msg.Role)
	}
	if fmt.Sprint(roles) != "[user assistant tool assistant]" || res.Messages[1].Content != "Let me check." || len(res.Messages[1].Calls) != 1 {
		t.Errorf("messages = %+v", res.Messages)
	}
}

func TestNativeModeRoundTrip(t *testing.T) {
	m := llmtest.New(
		llmtest.Reply{Calls: []ptk.Call{native("c1", "get_weather", `{"city":"Oslo"}`), native("c2", "get_weather", `"{\"city\": \"Rome\"}"`)}},
		llmtest.Text("Oslo and Rome are sunny."),
	)
	res := mustRun(t, "Weather?", Options{Model: m, Mode: ModeNative, Tools: []ptk.Tool{weather(nil)}})
	if !res.Success || res.TotalToolCalls != 2 || res.ToolCalls[0].Call.ID != "c1" || compact(res.ToolCalls[1].Call.Args) != `{"city":"Rome"}` {
		t.Fatalf("result = %+v", res)
	}
	reqs := m.Requests()
	if len(reqs[0].Tools) != 1 || reqs[0].Messages[0].Role != ptk.RoleUser {
		t.Fatalf("first request: tools %d, first message %+v", len(reqs[0].Tools), reqs[0].Messages[0])
	}
	msgs := reqs[1].Messages
	if len(msgs) != 4 || len(msgs[1].Calls) != 2 || msgs[2].Role != ptk.RoleTool || msgs[2].CallID != "c1" || msgs[3].CallID != "c2" || !strings.Contains(msgs[3].Content, "Rome") {
		t.Fatalf("second request messages = %+v", msgs)
	}
}

// A server without a tool parser returns the model's calls as text; native
// mode still reads them.
func TestNativeModeReadsCallsInText(t *testing.T) {
	m := llmtest.New(
		llmtest.Text(`<tool_call>{"name": "get_weather", "arguments": {"city": "Lima"}}</tool_call>`),
		llmtest.Text("Lima is sunny."),
	)
	res := mustRun(t, "Weather?", Options{Model: m, Mode: ModeNative, Tools: []ptk.Tool{weather(nil)}})
	if !res.Success || res.TotalToolCalls != 1 || res.ToolCalls[0].Call.Tool != "get_weather" {
		t.Fatalf("result = %+v", res)
	}
	second := m.Requests()[1].Messages
	if len(second[1].Calls) != 1 || second[1].Content != "" || second[2].CallID != second[1].Calls[0].ID {
		t.Errorf("the call read from text goes back as a native call: %+v", second)
	}
}

// namedModel gives the scripted model a base URL, so that ModeAuto can
// remember it by name.
type namedModel struct {
	*llmtest.Script
	url string
}

func (m namedModel) BaseURL() string { return m.url }

func TestAutoModeSwitchesAndRemembers(t *testing.T) {
	rejected := &llm.Error{Kind: llm.ErrToolsUnsupported, Status: 400, Message: "registry.ollama.ai/library/gemma:2b does not support tools"}
	m := namedModel{llmtest.New(
		llmtest.Reply{Err: rejected},
		llmtest.Text(ptkCall("get_weather", `{"city": "Paris"}`)),
		llmtest.Text("Sunny."),
		llmtest.Text("Still sunny."),
	), "http://ollama.test/v1"}
	mem := &llm.NativeTools{} // the caller's memory, shared by the runs that use it
	var events []EventKind
	var last *Result
	for e, err := range Stream(context.Background(), Prompt("Weather?"), Options{Model: m, ModelName: "gemma:2b", Tools: []ptk.Tool{weather(nil)}, NativeTools: mem}) {
		events = append(events, e.Kind)
		if e.Kind == EventDone {
			if err != nil {
				t.Fatal(err)
			}
			last = e.Run
		}
	}
	if !last.Success || last.Mode != ModePTK || last.Iterations != 2 || last.TotalToolCalls != 1 {
		t.Fatalf("result = %+v", last)
	}
	if !containsKind(events, EventModeSwitch) {
		t.Errorf("no EventModeSwitch in %v", events)
	}
	reqs := m.Requests()
	if len(reqs[0].Tools) != 1 || len(reqs[1].Tools) != 0 {
		t.Errorf("tools sent: %d then %d; want native first, then the protocol", len(reqs[0].Tools), len(reqs[1].Tools))
	}
	// A second run with the same model starts in ptk mode at once.
	res := mustRun(t, "Again?", Options{Model: m, ModelName: "gemma:2b", Tools: []ptk.Tool{weather(nil)}, NativeTools: mem})
	if res.Mode != ModePTK || len(m.Requests()[3].Tools) != 0 {
		t.Errorf("the switch was not remembered: mode %s", res.Mode)
	}
	// Another model at the same server is not affected.
	other := namedModel{llmtest.New(llmtest.Text("hi")), m.url}
	if res := mustRun(t, "hi", Options{Model: other, ModelName: "qwen3:8b", Tools: []ptk.Tool{weather(nil)}, NativeTools: mem}); res.Mode != ModeNative {
		t.Errorf("another model's mode = %s", res.Mode)
	}
}

func containsKind(ks []EventKind, k EventKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func TestParallelCallsInCallOrder(t *testing.T) {
	var running, peak atomic.Int32
	slow := simpleTool("slow", true, func(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		var a struct{ X string }
		json.Unmarshal(args, &a)
		d := 60 * time.Millisecond
		if a.X == "first" {
			d = 120 * time.Millisecond // finishes last, reported first
		}
		time.Sleep(d)
		running.Add(-1)
		return ptk.Result{Content: "done " + a.X}, nil
	})
	reply := ""
	for _, x := range []string{"first", "b", "c", "d", "e", "f"} {
		reply += ptkCall("slow", `{"x": "`+x+`"}`) + "\n"
	}
	m := llmtest.New(llmtest.Text(reply), llmtest.Text("ok"))
	start := time.Now()
	res := mustRun(t, "go", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{slow}, MaxParallel: 3})
	if el := time.Since(start); el > 330*time.Millisecond {
		t.Errorf("6 calls of ~60ms with 3 in parallel took %v", el)
	}
	if p := peak.Load(); p != 3 {
		t.Errorf("peak parallelism %d, want 3 (MaxParallel)", p)
	}
	for i, tc := range res.ToolCalls {
		var a struct{ X string }
		json.Unmarshal(tc.Call.Args, &a)
		if tc.Result.Content != "done "+a.X || tc.Call.ID != fmt.Sprintf("call_1_%d", i+1) {
			t.Errorf("call %d: %+v", i, tc)
		}
	}
	if res.ToolCalls[0].Result.Content != "done first" {
		t.Errorf("results not in call order")
	}
}

func TestDuplicateCallsAreNotRunAgain(t *testing.T) {
	var runs atomic.Int32
	var dups []ptk.Call
	m := llmtest.New(
		llmtest.Text(ptkCall("get_weather", `{"city": "Paris", "days": 2}`)),
		llmtest.Text(ptkCall("get_weather", `{"days": 2, "city": "Paris"}`)), // same, other key order
		llmtest.Text("Sunny."),
	)
	res, events := runEvents(t, "w", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(&runs)}})
	for _, e := range events {
		if e.Kind == EventDuplicate {
			dups = append(dups, *e.Call)
		}
	}
	if runs.Load() != 1 || len(dups) != 1 || res.TotalToolCalls != 1 || !res.Success {
		t.Fatalf("runs %d, duplicates %d, result %+v", runs.Load(), len(dups), res)
	}
	warn := m.Requests()[2].Messages[5].Content
	if !strings.Contains(warn, "<PTK_ERROR") || !strings.Contains(warn, "repeats") {
		t.Errorf("the model is not told: %q", warn)
	}

	// Out of the window, or with detection off, the call runs again.
	runs.Store(0)
	m = llmtest.New(
		llmtest.Text(ptkCall("get_weather", `{"city": "A"}`)),
		llmtest.Text(ptkCall("get_weather", `{"city": "B"}`)),
		llmtest.Text(ptkCall("get_weather", `{"city": "A"}`)),
		llmtest.Text("done"),
	)
	mustRun(t, "w", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(&runs)}, DuplicateWindow: 1})
	if runs.Load() != 3 {
		t.Errorf("with a window of 1, runs = %d, want 3", runs.Load())
	}
}

// A call that changes something clears the window: reading a file again
// after editing it is not a duplicate.
func TestMutatingCallClearsDuplicateWindow(t *testing.T) {
	var reads atomic.Int32
	read := simpleTool("read", true, func(context.Context, json.RawMessage) (ptk.Result, error) {
		reads.Add(1)
		return ptk.Result{Content: "text"}, nil
	})
	write := simpleTool("write", false, func(context.Context, json.RawMessage) (ptk.Result, error) {
		return ptk.Result{Content: "written"}, nil
	})
	m := llmtest.New(
		llmtest.Text(ptkCall("read", `{"x": "f"}`)),
		llmtest.Text(ptkCall("write", `{"x": "f"}`)),
		llmtest.Text(ptkCall("read", `{"x": "f"}`)),
		llmtest.Text("done"),
	)
	res := mustRun(t, "edit", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{read, write}})
	if reads.Load() != 2 || res.TotalToolCalls != 3 {
		t.Errorf("reads = %d, calls = %d; want the read after the write to run", reads.Load(), res.TotalToolCalls)
	}
}

func TestCacheableToolAnsweredFromCache(t *testing.T) {
	var runs atomic.Int32
	tl := ptk.NewTool(ptk.ToolInfo{Name: "get_weather", Parameters: weatherSchema, ReadOnly: true, Cacheable: true},
		func(context.Context, json.RawMessage) (ptk.Result, error) {
			runs.Add(1)
			return ptk.Result{Content: "sunny"}, nil
		})
	m := llmtest.New(
		llmtest.Text(ptkCall("get_weather", `{"city": "A"}`)),
		llmtest.Text(ptkCall("get_weather", `{"city": "A"}`)),
		llmtest.Text("done"),
	)
	res := mustRun(t, "w", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{tl}, AllowDuplicates: true})
	if runs.Load() != 1 || res.TotalToolCalls != 2 || !res.ToolCalls[1].Cached || res.ToolCalls[1].Tries != 0 || res.ToolCalls[1].Result.Content != "sunny" {
		t.Fatalf("runs %d, calls %+v", runs.Load(), res.ToolCalls)
	}
}

// Errors are data ----------------------------------------------------------

func TestBadCallsGoBackToTheModel(t *testing.T) {
	cases := []struct {
		name, reply string
		code        ptk.Code
		inResult    string
	}{
		{"unknown tool", ptkCall("get_wether", `{"city": "Paris"}`), ptk.ToolNotFound, "get_weather"},
		{"invalid arguments", ptkCall("get_weather", `{"days": 3}`), ptk.InvalidToolCall, "city"},
		{"unreadable call", "<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": [}\n</PTK_CALL>", ptk.ParseError, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var errs []error
			m := llmtest.New(llmtest.Text(c.reply), llmtest.Text(ptkCall("get_weather", `{"city": "Paris"}`)), llmtest.Text("Sunny."))
			res, events := runEvents(t, "w", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}})
			for _, e := range events {
				if e.Kind == EventCallEnd && e.Err != nil {
					errs = append(errs, e.Err)
				}
			}
			if !res.Success || res.TotalToolCalls != 1 {
				t.Fatalf("result = %+v", res)
			}
			fb := m.Requests()[1].Messages[3].Content
			if !strings.HasPrefix(fb, "<PTK_ERROR") || !strings.Contains(fb, c.inResult) {
				t.Errorf("feedback = %q", fb)
			}
			if len(errs) != 1 || ptk.CodeOf(errs[0]) != c.code {
				t.Errorf("EventCallEnd errors %v, want one %s", errs, c.code)
			}

			// Strict: the run ends at the bad call with its code.
			m = llmtest.New(llmtest.Text(c.reply), llmtest.Text("unused"))
			res, err := Run(context.Background(), Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}, Strict: true})
			if !errors.Is(err, c.code) || res.Success || res.Error == nil || res.Error.Code != c.code || res.Iterations != 1 {
				t.Errorf("strict: err %v, result %+v", err, res)
			}
			if last := res.Messages[len(res.Messages)-1]; last.Role != ptk.RoleTool || !last.IsError {
				t.Errorf("strict: the call has no answer in the history: %+v", last)
			}
		})
	}
}

// Strict mode ends the run at a bad call in the middle of a reply: every
// call of the reply still gets an answer, with its id.
func TestStrictAnswersEveryCall(t *testing.T) {
	var runs atomic.Int32
	reply := ptkCall("get_weather", `{"city": "A"}`) + ptkCall("nope", `{}`) + ptkCall("get_weather", `{"city": "B"}`)
	m := llmtest.New(llmtest.Text(reply))
	res, err := Run(context.Background(), Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(&runs)}, Strict: true})
	if !errors.Is(err, ptk.ToolNotFound) || runs.Load() != 0 {
		t.Fatalf("err %v, runs %d", err, runs.Load())
	}
	tools := res.Messages[2:]
	if len(tools) != 3 {
		t.Fatalf("answers = %+v", tools)
	}
	for i, want := range []string{"Not run: the run ended at a bad call.", "nope", "Not run: the run ended at a bad call."} {
		if tools[i].CallID != fmt.Sprintf("call_1_%d", i+1) || !tools[i].IsError || !strings.Contains(tools[i].Content, want) {
			t.Errorf("answer %d = %+v, want %q", i, tools[i], want)
		}
	}
}

func TestFailingTools(t *testing.T) {
	var tries atomic.Int32
	flaky := simpleTool("flaky", true, func(context.Context, json.RawMessage) (ptk.Result, error) {
		if tries.Add(1) < 3 {
			return ptk.Result{}, ptk.Retryable(errors.New("connection reset"))
		}
		return ptk.Result{Content: "ok"}, nil
	})
	broken := simpleTool("broken", true, func(context.Context, json.RawMessage) (ptk.Result, error) {
		return ptk.Result{}, errors.New("disk on fire")
	})
	panicky := simpleTool("panicky", true, func(context.Context, json.RawMessage) (ptk.Result, error) {
		var items []string
		return ptk.Result{Content: items[3]}, nil // index out of range
	})
	m := llmtest.New(
		llmtest.Text(ptkCall("flaky", `{}`)+ptkCall("broken", `{}`)+ptkCall("panicky", `{}`)),
		llmtest.Text("done"),
	)
	res := mustRun(t, "go", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{flaky, broken, panicky}, ToolRetryDelay: time.Millisecond})
	tc := res.ToolCalls
	if len(tc) != 3 || tc[0].Tries != 3 || tc[0].Result.Content != "ok" || tc[0].Result.IsError {
		t.Fatalf("flaky: %+v", tc)
	}
	if !tc[1].Result.IsError || !strings.Contains(tc[1].Result.Content, "disk on fire") || tc[1].Tries != 1 {
		t.Errorf("broken: %+v", tc[1])
	}
	if !tc[2].Result.IsError || !strings.Contains(tc[2].Result.Content, "panicked") || strings.Contains(tc[2].Result.Content, "goroutine") {
		t.Errorf("panicky: %+v", tc[2])
	}

	// Retries give up after MaxToolRetries; none with a negative value.
	for _, c := range []struct{ max, want int }{{0, 3}, {1, 2}, {-1, 1}} {
		var n atomic.Int32
		always := simpleTool("always", true, func(context.Context, json.RawMessage) (ptk.Result, error) {
			n.Add(1)
			return ptk.Result{}, ptk.Retryable(errors.New("busy"))
		})
		m := llmtest.New(llmtest.Text(ptkCall("always", `{}`)), llmtest.Text("done"))
		res := mustRun(t, "go", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{always}, MaxToolRetries: c.max, ToolRetryDelay: time.Millisecond})
		if int(n.Load()) != c.want || res.ToolCalls[0].Tries != c.want || !res.ToolCalls[0].Result.IsError {
			t.Errorf("MaxToolRetries %d: ran %d times, want %d", c.max, n.Load(), c.want)
		}
	}

	// Strict ends the run at a failing tool.
	m = llmtest.New(llmtest.Text(ptkCall("broken", `{}`)), llmtest.Text("unused"))
	_, err := Run(context.Background(), Prompt("go"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{broken}, Strict: true})
	if !errors.Is(err, ptk.ToolExecutionFailed) {
		t.Errorf("strict failing tool: %v", err)
	}
}

func TestToolTimeout(t *testing.T) {
	hang := simpleTool("hang", true, func(ctx context.Context, _ json.RawMessage) (ptk.Result, error) {
		<-ctx.Done()
		return ptk.Result{}, ctx.Err()
	})
	m := llmtest.New(llmtest.Text(ptkCall("hang", `{}`)), llmtest.Text("gave up"))
	res := mustRun(t, "go", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{hang}, ToolTimeout: 20 * time.Millisecond})
	if !res.Success || !strings.Contains(res.ToolCalls[0].Result.Content, "timed out after 20ms") {
		t.Errorf("result = %+v", res.ToolCalls)
	}
}

// Limits ------------------------------------------------------------------

func loopingModel(n int) *llmtest.Script {
	var rs []llmtest.Reply
	for i := range n {
		rs = append(rs, llmtest.Text(ptkCall("get_weather", fmt.Sprintf(`{"city": "C%d"}`, i))))
	}
	return llmtest.New(rs...)
}

func TestMaxIterations(t *testing.T) {
	m := loopingModel(10)
	res, err := Run(context.Background(), Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}, MaxIterations: 3})
	if !errors.Is(err, ptk.MaxIterationsReached) || res.Iterations != 3 || res.TotalToolCalls != 3 || res.Success || len(m.Requests()) != 3 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if res.Error.Code != ptk.MaxIterationsReached || !strings.Contains(res.Error.Message, "3 model calls") {
		t.Errorf("error = %v", res.Error)
	}

	// AnswerAtLimit: one more call, asked to answer; calls in it are not run.
	m = loopingModel(3)
	m.Replies = append(m.Replies, llmtest.Text("Partial answer: C0 to C2 are sunny.\n"+ptkCall("get_weather", `{"city": "X"}`)))
	res, err = Run(context.Background(), Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}, MaxIterations: 3, AnswerAtLimit: true})
	if err != nil || !res.Success || res.Limit != ptk.MaxIterationsReached || res.Content != "Partial answer: C0 to C2 are sunny." || res.TotalToolCalls != 3 {
		t.Fatalf("answer at limit: err %v, result %+v", err, res)
	}
	last := m.Requests()[3].Messages
	if !strings.Contains(last[len(last)-1].Content, "Do not call any more tools") {
		t.Errorf("last request does not ask for an answer: %q", last[len(last)-1].Content)
	}

	// Native: the last call sends tool_choice none.
	m = llmtest.New(llmtest.Reply{Calls: []ptk.Call{native("a", "get_weather", `{"city":"A"}`)}}, llmtest.Text("A is sunny."))
	res, _ = Run(context.Background(), Prompt("w"), Options{Model: m, Mode: ModeNative, Tools: []ptk.Tool{weather(nil)}, MaxIterations: 1, AnswerAtLimit: true})
	if !res.Success || m.Requests()[1].ToolChoice != "none" {
		t.Errorf("native answer at limit: %+v, tool choice %q", res, m.Requests()[1].ToolChoice)
	}
}

func TestMaxToolCalls(t *testing.T) {
	var runs atomic.Int32
	reply := ptkCall("get_weather", `{"city": "A"}`) + ptkCall("get_weather", `{"city": "B"}`) + ptkCall("get_weather", `{"city": "C"}`)
	m := llmtest.New(llmtest.Text(reply), llmtest.Text("unused"))
	res, err := Run(context.Background(), Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(&runs)}, MaxToolCalls: 2})
	if !errors.Is(err, ptk.MaxToolCallsReached) || runs.Load() != 2 || res.TotalToolCalls != 2 {
		t.Fatalf("err %v, runs %d, result %+v", err, runs.Load(), res)
	}
	last := res.Messages[len(res.Messages)-1]
	if last.CallID != "call_1_3" || !last.IsError || !strings.Contains(last.Content, "limit of 2 tool calls") {
		t.Errorf("the refused call's answer: %+v", last)
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	m := llmtest.New(llmtest.Text(ptkCall("get_weather", `{"city": "A"}`)), llmtest.Reply{Wait: true})
	start := time.Now()
	res, err := Run(context.Background(), Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}, Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ptk.Timeout) || !errors.Is(err, context.DeadlineExceeded) || res.TotalToolCalls != 1 || res.Iterations != 2 || time.Since(start) > time.Second {
		t.Fatalf("err %v, result %+v", err, res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	hang := simpleTool("hang", true, func(ctx context.Context, _ json.RawMessage) (ptk.Result, error) {
		cancel()
		<-ctx.Done()
		return ptk.Result{}, ctx.Err()
	})
	m = llmtest.New(llmtest.Text(ptkCall("hang", `{}`)))
	res, err = Run(ctx, Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{hang}})
	if !errors.Is(err, ptk.Canceled) || !errors.Is(err, context.Canceled) || res.Error.Code != ptk.Canceled {
		t.Fatalf("canceled: err %v", err)
	}
	if last := res.Messages[len(res.Messages)-1]; last.Role != ptk.RoleTool || !strings.Contains(last.Content, "Stopped") {
		t.Errorf("the canceled call has no answer in the history: %+v", last)
	}
}

func TestModelFailure(t *testing.T) {
	m := llmtest.New(llmtest.Text(ptkCall("get_weather", `{"city": "A"}`)), llmtest.Reply{Err: &llm.Error{Kind: llm.ErrAuth, Status: 401, Message: "Incorrect API key provided"}})
	res, err := Run(context.Background(), Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}})
	if !errors.Is(err, ptk.LLMCallFailed) || !errors.Is(err, llm.ErrAuth) || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("err = %v", err)
	}
	if res.TotalToolCalls != 1 || res.Iterations != 2 || res.Error == nil {
		t.Errorf("result = %+v", res)
	}
}

// Conversations, hooks, events --------------------------------------------

func TestConversationContinues(t *testing.T) {
	store := &MemoryStore{}
	m := llmtest.New(
		llmtest.Text(ptkCall("get_weather", `{"city": "Paris"}`)),
		llmtest.Text("Sunny in Paris."),
		llmtest.Text("You asked about Paris."),
	)
	o := Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}, ConversationID: "c1", Store: store}
	mustRun(t, "Weather in Paris?", o)
	res := mustRun(t, "Which city did I ask about?", o)
	if res.Content != "You asked about Paris." || len(res.Messages) != 6 {
		t.Fatalf("result = %+v", res)
	}
	third := m.Requests()[2].Messages
	if len(third) != 6 || third[1].Content != "Weather in Paris?" || third[5].Content != "Which city did I ask about?" {
		t.Fatalf("the second run does not continue the first: %+v", third)
	}
	saved, _ := store.Load(context.Background(), "c1")
	if len(saved) != 6 {
		t.Errorf("saved %d messages", len(saved))
	}
	// A new turn gets new call ids.
	m2 := llmtest.New(llmtest.Text(ptkCall("get_weather", `{"city": "Rome"}`)), llmtest.Text("ok"))
	o.Model = m2
	res = mustRun(t, "And Rome?", o)
	if id := res.ToolCalls[0].Call.ID; id != "call_4_1" { // two assistant turns in the first run, one in the second
		t.Errorf("call id in the third assistant turn = %s", id)
	}
}

func TestHooksAndEvents(t *testing.T) {
	var mu sync.Mutex
	var log []string
	add := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	m := llmtest.New(
		llmtest.Text("Checking.\n"+ptkCall("get_weather", `{"city": "A"}`)+ptkCall("get_weather", `{"city": "A"}`)),
		llmtest.Text("Sunny."),
	)
	m.ChunkSize = 2
	o := Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}, StreamModel: true}
	var kinds []EventKind
	var text strings.Builder
	var deltas int
	for e, err := range Stream(context.Background(), Prompt("w"), o) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, e.Kind)
		switch e.Kind {
		case EventIteration:
			add(fmt.Sprint("iteration ", e.Iteration))
		case EventToolStart:
			add("call " + e.Call.ID)
		case EventToolResult:
			add("result " + e.Call.ID)
		case EventDuplicate:
			add("duplicate " + e.Call.ID)
		case EventText:
			text.WriteString(e.Text)
		case EventCallDelta:
			deltas++
		}
	}
	want := "[iteration 1 duplicate call_1_2 call call_1_1 result call_1_1 iteration 2]"
	if fmt.Sprint(log) != want {
		t.Errorf("events: %v\nwant %s", log, want)
	}
	if text.String() != "Checking.Sunny." {
		t.Errorf("text events = %q", text.String())
	}
	if deltas < 2 {
		t.Errorf("call deltas = %d: the call was not streamed", deltas)
	}
	order := []EventKind{EventIteration, EventCallStart, EventCallEnd, EventModelDone, EventDuplicate, EventToolResult, EventIteration, EventFinal, EventDone}
	i := 0
	for _, k := range kinds {
		if i < len(order) && k == order[i] {
			i++
		}
	}
	if i != len(order) {
		t.Errorf("events %v do not contain %v in order", kinds, order)
	}
}

func TestNativeStreamingDeltas(t *testing.T) {
	m := llmtest.New(llmtest.Reply{Calls: []ptk.Call{native("c1", "get_weather", `{"city": "Paris"}`)}}, llmtest.Text("Sunny."))
	m.ChunkSize = 1
	var args strings.Builder
	var res *Result
	for e, err := range Stream(context.Background(), Prompt("w"), Options{Model: m, Mode: ModeNative, Tools: []ptk.Tool{weather(nil)}, StreamModel: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == EventCallDelta {
			args.WriteString(e.Text)
		}
		if e.Kind == EventDone {
			res = e.Run
		}
	}
	if args.String() != `{"city": "Paris"}` || !res.Success || compact(res.ToolCalls[0].Call.Args) != `{"city":"Paris"}` {
		t.Errorf("deltas %q, result %+v", args.String(), res)
	}
}

// Breaking out of the range loop cancels the run: the tool, which waits for
// its context, returns, and the loop ends.
func TestBreakingOutOfStreamCancelsRun(t *testing.T) {
	hang := simpleTool("hang", true, func(ctx context.Context, _ json.RawMessage) (ptk.Result, error) {
		<-ctx.Done()
		return ptk.Result{}, ctx.Err()
	})
	m := llmtest.New(llmtest.Text(ptkCall("hang", `{}`)), llmtest.Text("unused"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range Stream(context.Background(), Prompt("w"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{hang}}) {
			if e.Kind == EventCallEnd {
				break
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("breaking out of the stream did not stop the run")
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("%d model calls after the break, want 1", n)
	}
}

func TestCallsInThinkAreNotRun(t *testing.T) {
	var runs atomic.Int32
	m := llmtest.New(llmtest.Text("<think>I could call " + ptkCall("get_weather", `{"city": "X"}`) + " but no.</think>The answer is 4."))
	res := mustRun(t, "2+2?", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(&runs)}})
	if runs.Load() != 0 || res.Content != "The answer is 4." {
		t.Errorf("runs %d, content %q", runs.Load(), res.Content)
	}
}

func TestConfigurationMistakes(t *testing.T) {
	m := llmtest.New(llmtest.Text("hi"))
	cases := map[string]Options{
		"no model":                       {},
		"two tools of one name":          {Model: m, Tools: []ptk.Tool{weather(nil), weather(nil)}},
		"a conversation, no store":       {Model: m, ConversationID: "c"},
		"an unknown mode":                {Model: m, Mode: "ptk-v2"},
		"a schema that does not compile": {Model: m, Tools: []ptk.Tool{simpleTool("bad", true, nil)}},
	}
	cases["a schema that does not compile"].Tools[0] = ptk.NewTool(ptk.ToolInfo{Name: "bad", Parameters: json.RawMessage(`{"type": "object", "properties": `)}, nil)
	for name, o := range cases {
		res, err := Run(context.Background(), Prompt("x"), o)
		if !errors.Is(err, ptk.InvalidConfig) || res.Iterations != 0 {
			t.Errorf("%s: err %v, %d model calls; want INVALID_CONFIG before any", name, err, res.Iterations)
		}
	}
	if len(m.Requests()) != 0 {
		t.Errorf("the model was asked %d times", len(m.Requests()))
	}
}

// A call that changes something runs alone, in call order: reads before it
// finish before it starts, reads after it start after it ends.
func TestMutatingCallsRunInOrder(t *testing.T) {
	var mu sync.Mutex
	var log []string
	record := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	step := func() ptk.Handler {
		return func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
			var a struct{ X string }
			json.Unmarshal(args, &a)
			record("start " + a.X)
			time.Sleep(20 * time.Millisecond)
			record("end " + a.X)
			return ptk.Result{Content: a.X}, nil
		}
	}
	read := simpleTool("read", true, step())
	write := simpleTool("write", false, step())
	reply := ptkCall("read", `{"x": "r1"}`) + ptkCall("read", `{"x": "r2"}`) + ptkCall("write", `{"x": "w"}`) + ptkCall("read", `{"x": "r3"}`)
	m := llmtest.New(llmtest.Text(reply), llmtest.Text("done"))
	mustRun(t, "go", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{read, write}})
	pos := map[string]int{}
	for i, s := range log {
		pos[s] = i
	}
	if pos["start r2"] > pos["end r1"] {
		t.Errorf("the two reads did not run in parallel: %v", log)
	}
	if pos["start w"] < pos["end r1"] || pos["start w"] < pos["end r2"] || pos["start r3"] < pos["end w"] {
		t.Errorf("the write did not run alone, in order: %v", log)
	}
}
