package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/completion"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/tool"
)

// countingTool is a tool that changes something (not read-only) and counts
// its runs.
func countingTool(name string, runs *atomic.Int32) ptk.Tool {
	return simpleTool(name, false, func(context.Context, json.RawMessage) (ptk.Result, error) {
		runs.Add(1)
		return ptk.Result{Content: "FAIL: TestX"}, nil
	})
}

func TestRepeatedMutatingCallsAreALoop(t *testing.T) {
	var runs atomic.Int32
	test := ptkCall("bash", `{"x": "go test ./..."}`)
	replies := make([]llmtest.Reply, 0, 8)
	for range 6 {
		replies = append(replies, llmtest.Text(test))
	}
	replies = append(replies, llmtest.Text("unused"))
	m := llmtest.New(replies...)
	res, err := Run(context.Background(), Prompt("fix the tests"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{countingTool("bash", &runs)}})
	// 1 run, then 3 repeats warned of (MaxRepeats), and the 5th is a loop.
	if !errors.Is(err, ptk.DuplicateToolCall) || runs.Load() != 1 || res.Iterations != 5 {
		t.Fatalf("err %v, runs %d, iterations %d; want DUPLICATE_TOOL_CALL after 1 run and 3 warnings", err, runs.Load(), res.Iterations)
	}
	warn := m.Requests()[2].Messages[len(m.Requests()[2].Messages)-1].Content
	if !strings.Contains(warn, "nothing has changed since") {
		t.Errorf("the model is not told it repeats itself: %q", warn)
	}
	if last := res.Messages[len(res.Messages)-1]; last.Role != ptk.RoleTool || !last.IsError {
		t.Errorf("the last call has no answer: %+v", last)
	}
}

func TestRerunAfterAChangeIsNotARepeat(t *testing.T) {
	var tests, edits atomic.Int32
	test := ptkCall("bash", `{"x": "go test ./..."}`)
	m := llmtest.New(
		llmtest.Text(test),
		llmtest.Text(ptkCall("edit", `{"x": "fix 1"}`)),
		llmtest.Text(test),
		llmtest.Text(ptkCall("edit", `{"x": "fix 2"}`)),
		llmtest.Text(test),
		llmtest.Text("fixed"),
	)
	res, err := Run(context.Background(), Prompt("fix"), Options{Model: m, Mode: ModePTK,
		Tools: []ptk.Tool{countingTool("bash", &tests), countingTool("edit", &edits)}})
	if err != nil || tests.Load() != 3 || edits.Load() != 2 || !res.Success {
		t.Fatalf("err %v, tests %d, edits %d", err, tests.Load(), edits.Load())
	}
}

type repeatApprover struct {
	asked atomic.Int32
	allow bool
}

func (a *repeatApprover) Approve(context.Context, ptk.Call, ptk.ToolInfo) (v tool.Verdict, err error) {
	v.Allow = true
	return v, nil
}

func (a *repeatApprover) ApproveRepeat(_ context.Context, c ptk.Call, n int) (bool, error) {
	a.asked.Add(1)
	return a.allow, nil
}

func TestLoopAsksTheRepeatApprover(t *testing.T) {
	for _, allow := range []bool{true, false} {
		var runs atomic.Int32
		test := ptkCall("bash", `{"x": "sleep 1; curl status"}`)
		m := llmtest.New(llmtest.Text(test), llmtest.Text(test), llmtest.Text(test), llmtest.Text("up"))
		a := &repeatApprover{allow: allow}
		res, err := Run(context.Background(), Prompt("wait until up"), Options{Model: m, Mode: ModePTK, MaxRepeats: 1,
			Approver: a, Tools: []ptk.Tool{countingTool("bash", &runs)}})
		switch {
		case a.asked.Load() != 1:
			t.Errorf("allow %v: asked %d times, want once (at the second repeat)", allow, a.asked.Load())
		case allow && (err != nil || runs.Load() != 2 || !res.Success):
			t.Errorf("allowed: err %v, runs %d", err, runs.Load())
		case !allow && (!errors.Is(err, ptk.DuplicateToolCall) || runs.Load() != 1):
			t.Errorf("refused: err %v, runs %d", err, runs.Load())
		}
	}
}

func TestAToolThatIgnoresItsContextIsAbandoned(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	stuck := simpleTool("stuck", true, func(context.Context, json.RawMessage) (ptk.Result, error) {
		<-block // like open(2) on a FIFO: deaf to the context
		return ptk.Result{Content: "late"}, nil
	})
	m := llmtest.New(llmtest.Text(ptkCall("stuck", `{}`)), llmtest.Text("gave up"))
	start := time.Now()
	res, err := Run(context.Background(), Prompt("x"), Options{Model: m, Mode: ModePTK, ToolTimeout: 50 * time.Millisecond, Tools: []ptk.Tool{stuck}})
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the run waited %s for a stuck tool", took)
	}
	if err != nil || !res.Success || !res.ToolCalls[0].Result.IsError || !strings.Contains(res.ToolCalls[0].Result.Content, "timed out") {
		t.Fatalf("err %v, result %+v", err, res.ToolCalls)
	}
}

func TestHistoryWithSystemMessagesAndEarlierTurns(t *testing.T) {
	m := llmtest.New(llmtest.Text("Paris, as you said."))
	history := []ptk.Message{
		{Role: ptk.RoleSystem, Content: "Answer in one line."},
		{Role: ptk.RoleUser, Content: "I live in Paris."},
		{Role: ptk.RoleAssistant, Content: "Noted."},
		{Role: ptk.RoleUser, Content: "Where do I live?"},
	}
	res, err := Run(context.Background(), history, Options{Model: m, Mode: ModeNative, Instructions: "Be kind."})
	if err != nil || res.Content != "Paris, as you said." {
		t.Fatalf("err %v, result %+v", err, res)
	}
	sent := m.Requests()[0].Messages
	if len(sent) != 4 || sent[0].Role != ptk.RoleSystem || sent[0].Content != "Be kind.\n\nAnswer in one line." || sent[3].Content != "Where do I live?" {
		t.Errorf("sent %+v", sent)
	}
	if len(res.Messages) != 4 || res.Messages[0].Role != ptk.RoleUser {
		t.Errorf("the run's messages: %+v", res.Messages)
	}
}

// shoutFormatter is a formatter of the caller's own: its transcript is not
// the PTK one.
type shoutFormatter struct{ protocol.PTK }

func (shoutFormatter) Transcript(msgs []ptk.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(strings.ToUpper(string(m.Role)) + ">> " + m.Content + "\n")
	}
	return b.String() + "ASSISTANT>> "
}

// A text-only model gets the conversation flattened by the run's
// formatter, not by a protocol the model hard-wires.
func TestTextOnlyModelsGetTheRunsTranscript(t *testing.T) {
	var prompts []string
	m := completion.Func(func(_ context.Context, prompt string) (string, error) {
		prompts = append(prompts, prompt)
		if len(prompts) == 1 {
			return ptkCall("get_weather", `{"city": "Paris"}`), nil
		}
		return "Sunny.", nil
	})
	res, err := Run(context.Background(), Prompt("Weather in Paris?"), Options{Model: m, Formatter: shoutFormatter{}, Tools: []ptk.Tool{weather(nil)}})
	if err != nil || res.Content != "Sunny." || res.Mode != ModePTK {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if len(prompts) != 2 || !strings.HasPrefix(prompts[0], "SYSTEM>> ") || !strings.Contains(prompts[1], "USER>> <PTK_RESULT") || !strings.HasSuffix(prompts[1], "ASSISTANT>> ") {
		t.Errorf("prompts sent:\n%s", strings.Join(prompts, "\n----\n"))
	}
}

// Each model call's cost is on its EventModelDone, and they add up to the
// run's.
func TestModelCallCostOnEvents(t *testing.T) {
	u := ptk.Usage{PromptTokens: 1_000_000, CompletionTokens: 100_000}
	m := llmtest.New(llmtest.Reply{Content: ptkCall("get_weather", `{"city": "Paris"}`), Usage: u}, llmtest.Reply{Content: "Sunny.", Usage: u})
	price := llm.Price{Input: 1, Output: 10}
	res, events := runEvents(t, "w", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}, Price: &price})
	var sum float64
	var n int
	for _, e := range events {
		if e.Kind == EventModelDone {
			n++
			if e.Cost != 2 {
				t.Errorf("model call %d cost %v, want $2 (1M in at $1, 100k out at $10)", n, e.Cost)
			}
			sum += e.Cost
		}
	}
	if n != 2 || sum != res.Cost {
		t.Errorf("%d model calls costing %v, the run %v", n, sum, res.Cost)
	}
}

// loopText is a reply in a repetition loop: the same call that changes
// something, n times, then the same call cut off by the token limit.
func loopText(n int) string {
	call := ptkCall("bash", `{"x": "rm -rf build && make"}`)
	return strings.Repeat(call+"\n", n) + call[:len(call)/2]
}

// TestRepetitionLoopRunsNothing: a model that writes one mutating call 40
// times until the token limit runs it zero times (the duplicate check
// would have run the first); the model is told why and asked again, and
// its next reply runs. Streamed, no repeat is reported as a runnable call
// before the reply ends.
func TestRepetitionLoopRunsNothing(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var runs atomic.Int32
		m := llmtest.New(llmtest.Text(loopText(40)), llmtest.Text(ptkCall("bash", `{"x": "make"}`)), llmtest.Text("built"))
		res, events := runEvents(t, "build it", Options{Model: m, Mode: ModePTK, StreamModel: stream, Tools: []ptk.Tool{countingTool("bash", &runs)}})
		if !res.Success || runs.Load() != 1 || res.Iterations != 3 {
			t.Fatalf("stream %v: success %v, runs %d, iterations %d; want the loop's calls not run, the next reply's run once", stream, res.Success, runs.Load(), res.Iterations)
		}
		// In the text protocol the results go back as one message.
		told := m.Requests()[1].Messages
		back := told[len(told)-1].Content
		if !strings.Contains(back, "repetition loop") || !strings.Contains(back, "none of its calls was run") || strings.Count(back, "<PTK_ERROR") != 41 {
			t.Errorf("stream %v: the model is not told of the loop, each call answered: %.300q", stream, back)
		}
		runnable := 0
		for _, e := range events {
			if e.Kind == EventCallEnd && e.Iteration == 1 && e.Err == nil {
				runnable++
			}
		}
		if runnable > 1 {
			t.Errorf("stream %v: %d calls of the loop reported runnable as they ended, want at most the first", stream, runnable)
		}
		if len(res.Invalid) != 41 || res.Invalid[0].Err.Code != ptk.DuplicateToolCall {
			t.Errorf("stream %v: the loop's calls are not recorded as invalid: %d", stream, len(res.Invalid))
		}
	}
}

// TestRepetitionLoopTwiceEndsTheRun: a second loop in a row ends the run
// with DUPLICATE_TOOL_CALL, saying what the model did; nothing ran, and
// every call has its answer in the history.
func TestRepetitionLoopTwiceEndsTheRun(t *testing.T) {
	var runs atomic.Int32
	m := llmtest.New(llmtest.Text(loopText(40)), llmtest.Text(loopText(12)), llmtest.Text("unused"))
	res, err := Run(context.Background(), Prompt("build it"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{countingTool("bash", &runs)}})
	var perr *ptk.Error
	if !errors.As(err, &perr) || perr.Code != ptk.DuplicateToolCall || runs.Load() != 0 || res.Iterations != 2 {
		t.Fatalf("err %v, runs %d, iterations %d; want DUPLICATE_TOOL_CALL after two loops, nothing run", err, runs.Load(), res.Iterations)
	}
	if !strings.Contains(perr.Message, "repetition loops 2 times in a row") || !strings.Contains(perr.Message, "bash") || !strings.Contains(perr.Message, "token limit") {
		t.Errorf("the error does not say what happened: %q", perr.Message)
	}
	if last := res.Messages[len(res.Messages)-1]; last.Role != ptk.RoleTool || !last.IsError {
		t.Errorf("the last call has no answer: %+v", last)
	}
}

// TestRepetitionLoopFinishLength: the provider's finish reason "length"
// counts the reply cut off even when the cut fell between two calls: 12
// identical mutating calls run zero times; the same calls with "stop" are
// duplicates, the first run once.
func TestRepetitionLoopFinishLength(t *testing.T) {
	call := ptkCall("bash", `{"x": "rm -rf build && make"}`)
	for _, c := range []struct {
		finish string
		runs   int32
	}{{"length", 0}, {"max_tokens", 0}, {"stop", 1}} {
		var runs atomic.Int32
		m := llmtest.New(llmtest.Reply{Content: strings.Repeat(call+"\n", 4), FinishReason: c.finish}, llmtest.Text("built"))
		res, err := Run(context.Background(), Prompt("build it"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{countingTool("bash", &runs)}})
		if err != nil || !res.Success || runs.Load() != c.runs {
			t.Errorf("finish %q: err %v, runs %d, want %d", c.finish, err, runs.Load(), c.runs)
		}
	}
}
