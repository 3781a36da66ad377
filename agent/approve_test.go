package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/tool"
)

func TestApproval(t *testing.T) {
	var writes atomic.Int32
	write := simpleTool("write", false, func(context.Context, json.RawMessage) (ptk.Result, error) {
		writes.Add(1)
		return ptk.Result{Content: "written"}, nil
	})
	var asked []string
	approver := tool.ApproverFunc(func(_ context.Context, c ptk.Call, info ptk.ToolInfo) (tool.Verdict, error) {
		asked = append(asked, c.ID)
		var a struct{ X string }
		json.Unmarshal(c.Args, &a)
		if a.X == "secret" {
			return tool.Verdict{Reason: "the user said no; run with --yes to allow"}, nil
		}
		if a.X == "broken" {
			return tool.Verdict{}, errors.New("no terminal")
		}
		return tool.Verdict{Allow: true}, nil
	})
	var denied []string
	m := llmtest.New(
		llmtest.Text(ptkCall("write", `{"x": "ok"}`)+ptkCall("get_weather", `{"city": "A"}`)+ptkCall("write", `{"x": "secret"}`)+ptkCall("write", `{"x": "broken"}`)),
		llmtest.Text("done"),
	)
	o := Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{write, weather(nil)}, Approver: approver, AllowDuplicates: true}
	var res *Result
	for e, err := range Stream(context.Background(), Prompt("w"), o) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == EventDenied {
			denied = append(denied, e.Call.ID+": "+e.Text)
		}
		if e.Kind == EventDone {
			res = e.Run
		}
	}
	if writes.Load() != 1 || res.TotalToolCalls != 2 || !res.Success {
		t.Fatalf("writes %d, result %+v", writes.Load(), res)
	}
	if strings.Join(asked, ",") != "call_1_1,call_1_3,call_1_4" {
		t.Errorf("asked about %v; want the three writes in order, not the read-only tool", asked)
	}
	if len(denied) != 2 || !strings.Contains(denied[0], "--yes") || !strings.Contains(denied[1], "no terminal") {
		t.Errorf("denied events: %v", denied)
	}
	fb := m.Requests()[1].Messages[3].Content
	if !strings.Contains(fb, "<PTK_ERROR id=\"call_1_3\" tool=\"write\">\nDenied: the user said no; run with --yes to allow") {
		t.Errorf("the model is not told: %s", fb)
	}
}

func TestResultsAreCapped(t *testing.T) {
	big := simpleTool("big", true, func(context.Context, json.RawMessage) (ptk.Result, error) {
		return ptk.Result{Content: strings.Repeat("a line of output\n", 5000)}, nil
	})
	m := llmtest.New(llmtest.Text(ptkCall("big", `{}`)), llmtest.Text("ok"), llmtest.Text(ptkCall("big", `{"x": "again"}`)), llmtest.Text("ok"))
	res := mustRun(t, "go", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{big}})
	got := res.ToolCalls[0].Result.Content
	if strings.Count(got, "\n") > 2001 || len(got) > 50<<10+300 || !strings.Contains(got, "[output cut: 3000 more lines") {
		t.Errorf("default cap: %d lines, %d bytes, ends %q", strings.Count(got, "\n"), len(got), got[len(got)-120:])
	}
	res = mustRun(t, "go", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{big}, MaxResultBytes: -1, MaxResultLines: -1})
	if got := res.ToolCalls[0].Result.Content; len(got) != 5000*17 {
		t.Errorf("no cap: %d bytes", len(got))
	}
}

// TestDeniedCallRepeated: a model that asks again for the call the user
// denied is not asked about again; it is told so, each repeat counts, and
// past MaxRepeats the run ends with ptk.ToolCallDenied, not at
// MaxIterations. Denied and invalid calls are in the Result.
func TestDeniedCallRepeated(t *testing.T) {
	var ran atomic.Int32
	bash := simpleTool("bash", false, func(context.Context, json.RawMessage) (ptk.Result, error) {
		ran.Add(1)
		return ptk.Result{Content: "ran"}, nil
	})
	asked := 0
	approver := tool.ApproverFunc(func(context.Context, ptk.Call, ptk.ToolInfo) (tool.Verdict, error) {
		asked++
		return tool.Verdict{Reason: "the user did not allow it; they can run ptk with --yes to allow it"}, nil
	})
	var replies []llmtest.Reply
	replies = append(replies, llmtest.Text(ptkCall("bash", `{"x": "rm -rf build"}`)+ptkCall("nope", `{}`)))
	for range 10 {
		replies = append(replies, llmtest.Text(ptkCall("bash", `{"x":  "rm -rf build"}`)))
	}
	o := Options{Model: llmtest.New(replies...), Mode: ModePTK, Tools: []ptk.Tool{bash}, Approver: approver, MaxIterations: 10, MaxRepeats: 2}
	res, err := Run(context.Background(), Prompt("clean up"), o)
	if !errors.Is(err, ptk.ToolCallDenied) || res.Error == nil || res.Error.Code != ptk.ToolCallDenied {
		t.Fatalf("err %v, want %s", err, ptk.ToolCallDenied)
	}
	if asked != 1 || ran.Load() != 0 || res.Iterations != 4 {
		t.Errorf("asked %d times, ran %d times, %d model calls; want 1, 0, 4", asked, ran.Load(), res.Iterations)
	}
	if !strings.Contains(res.Error.Message, "--yes") || !strings.Contains(res.Error.Message, `bash {"x":  "rm -rf build"}`) {
		t.Errorf("the error does not say what was denied and how to allow it: %s", res.Error.Message)
	}
	if len(res.Denied) != 4 || res.Denied[0].Reason != "the user did not allow it; they can run ptk with --yes to allow it" ||
		!strings.Contains(res.Denied[1].Reason, "denied already") || !strings.Contains(res.Denied[1].Reason, "--yes") {
		t.Errorf("denied: %+v", res.Denied)
	}
	if len(res.Invalid) != 1 || res.Invalid[0].Call.Tool != "nope" || res.Invalid[0].Err.Code != ptk.ToolNotFound {
		t.Errorf("invalid: %+v", res.Invalid)
	}
	second := res.Messages[5].Content
	if !strings.Contains(second, "denied already") {
		t.Errorf("the model is not told the call was denied already: %q", second)
	}
}
