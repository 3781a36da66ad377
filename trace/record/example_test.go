package record_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// A ReAct run recorded into a trace store: the run is written when it
// starts and each step as it finishes; once done, its ptool action's call
// hangs under the action and the call's attempts under the call.
func ExampleReAct() {
	dir, _ := os.MkdirTemp("", "ptk-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, _ := trace.Open(ctx, filepath.Join(dir, "traces.db"))
	defer s.Close()
	w := trace.NewWriter(s, os.Stderr)

	reg := ptool.NewRegistry()
	reg.Register(ptool.New[order, []string]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(reply(`<answer>["pizza"]</answer>`, 40, 4)))))
	model := llmtest.New( // a scripted model, in place of a real one
		reply("The items first."+call("extract_items", `{"text": "a pizza"}`), 100, 10),
		reply("One item.\n<answer>pizza</answer>", 200, 20),
	)
	opts := record.ReAct(w).Options(react.Options{Model: model, PTools: reg})
	react.Run(ctx, "What was ordered?", opts)
	w.Close(0)

	runs, _ := s.List(ctx, trace.Filter{Kind: trace.KindReAct})
	r, _ := s.Get(ctx, runs[0].ID)
	fmt.Println(r.Kind, r.Name, r.Status, r.Usage.PromptTokens, "tokens in")
	for i, c := range r.ToolCalls {
		fmt.Printf("  %s %s\n", trace.SpanID(trace.SpanTool, i), c.Tool)
	}
	for i, c := range r.PtoolCalls {
		fmt.Printf("  %s %s under %s\n", trace.SpanID(trace.SpanPtool, i), c.Ptool, c.Parent)
	}
	for i, c := range r.ModelCalls {
		fmt.Printf("  %s %d tokens in, under %q\n", trace.SpanID(trace.SpanModel, i), c.Usage.PromptTokens, strings.TrimSpace(c.Parent))
	}
	// Output:
	// react extract_items ok 340 tokens in
	//   tool/0 extract_items
	//   ptool/0 extract_items under tool/0
	//   model/0 100 tokens in, under ""
	//   model/1 40 tokens in, under "ptool/0"
	//   model/2 200 tokens in, under ""
}

// A distillation recorded as it goes: distill.Run tells the recorder each
// model call, round and check (Options.Observe), and the store has the run,
// running, with its rounds so far; Done writes its end. Here the events are
// told by hand, as distill.Run would.
func ExampleNewDistill() {
	dir, _ := os.MkdirTemp("", "ptk-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, _ := trace.Open(ctx, filepath.Join(dir, "traces.db"))
	defer s.Close()
	w := trace.NewWriter(s, os.Stderr)

	d := record.NewDistill(w, trace.Run{Name: "route_ticket", Model: "qwen3:8b", Provider: "ollama"})
	// distill.Run(ctx, target, splits, distill.Options{Model: m, Observe: d.Observe}) tells:
	d.Observe(distill.Event{Kind: distill.EventRound, Round: 1, Start: time.Now()})
	check := distill.Check{Name: "compile", Start: time.Now(), Duration: time.Second, Passed: true, Note: "go vet and go test -c passed"}
	d.Observe(distill.Event{Kind: distill.EventCheck, Round: 1, Check: &check})
	w.Close(0) // writes what is queued

	r, _ := s.Get(ctx, d.ID())
	fmt.Println(r.Kind, r.Name, r.Status)
	for i, st := range r.Steps {
		fmt.Printf("  %s %s %q under %q\n", trace.SpanID(trace.SpanStep, i), st.Name, st.Note, st.Parent)
	}
	// Output:
	// distill route_ticket running
	//   step/0 round 1 "running" under ""
	//   step/1 compile "go vet and go test -c passed" under "step/0"
}
