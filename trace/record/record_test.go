package record_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/agent/agenttest"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// script is a model that gives its replies in turn.
type script struct {
	mu      sync.Mutex
	replies []llm.Response
	err     error // after the replies
}

func (s *script) Generate(context.Context, llm.Request) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) == 0 {
		return nil, s.err
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return &r, nil
}

type sink struct{ recs []*trace.Record }

func (s *sink) RecordFunc(build func() *trace.Record) { s.recs = append(s.recs, build()) }

func tools() []ptk.Tool {
	read := ptk.NewTool(ptk.ToolInfo{Name: "read_file", Description: "Reads a file.", ReadOnly: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
			if strings.Contains(string(args), "missing") {
				return ptk.Result{Content: "no such file", IsError: true}, nil
			}
			return ptk.Result{Content: strings.Repeat("x", trace.MaxResultBytes+10)}, nil
		})
	write := ptk.NewTool(ptk.ToolInfo{Name: "write_file", Description: "Writes a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		func(context.Context, json.RawMessage) (ptk.Result, error) { return ptk.Result{Content: "written"}, nil })
	return []ptk.Tool{read, write}
}

func run(t *testing.T, m llm.Model, mode agent.Mode, maxIter int) *trace.Record {
	t.Helper()
	s := &sink{}
	opts := agent.Options{Model: m, ModelName: "scripted", Mode: mode, Tools: tools(), MaxIterations: maxIter, MaxResultBytes: 1 << 20,
		Approver: tool.ApproverFunc(func(context.Context, ptk.Call, ptk.ToolInfo) (tool.Verdict, error) {
			return tool.Verdict{Reason: "writes need --yes"}, nil
		})}
	rec := record.NewAgent(s, trace.Run{Model: "scripted", Mode: string(mode), Input: "Read a.txt"})
	for e, err := range agent.Stream(context.Background(), agent.Prompt("Read a.txt"), opts) {
		rec.Event(e, err)
	}
	if len(s.recs) != 1 {
		t.Fatalf("%d records, want 1", len(s.recs))
	}
	if s.recs[0].ID != rec.ID() {
		t.Errorf("record id %s, recorder says %s", s.recs[0].ID, rec.ID())
	}
	return s.recs[0]
}

func TestAgentRun(t *testing.T) {
	u := ptk.Usage{PromptTokens: 100, CompletionTokens: 10}
	m := &script{replies: []llm.Response{
		{Content: "Reading.\n<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a.txt\",}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"missing\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"b\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"nope\", \"args\": {}}</PTK_CALL>", Usage: u},
		{Content: "a.txt holds x's.", Usage: u},
	}}
	r := run(t, m, agent.ModePTK, 5)
	if r.Kind != trace.KindAgent || r.Status != trace.StatusOK || r.Mode != "ptk" || r.Model != "scripted" || r.Input != "Read a.txt" ||
		r.Output != "a.txt holds x's." || r.Iterations != 2 || r.Usage.PromptTokens != 200 || r.Duration <= 0 || r.StartedAt.IsZero() {
		t.Errorf("run = %+v", r.Run)
	}
	if len(r.ModelCalls) != 2 {
		t.Fatalf("model calls = %+v", r.ModelCalls)
	}
	mc := r.ModelCalls[0]
	if mc.Mode != "ptk" || mc.Usage != u || mc.Latency <= 0 || !strings.Contains(mc.Text, "<PTK_CALL>") || len(mc.Calls) != 4 ||
		len(mc.RequestHash) != 64 || mc.RequestHash == r.ModelCalls[1].RequestHash {
		t.Errorf("first model call = %+v", mc)
	}
	outcomes := map[string]trace.ToolCall{}
	for _, tc := range r.ToolCalls {
		key := tc.Tool + "/" + tc.Outcome
		if strings.Contains(string(tc.Args), "missing") {
			key += "/missing"
		}
		outcomes[key] = tc
	}
	if len(r.ToolCalls) != 4 {
		t.Errorf("tool calls = %+v", r.ToolCalls)
	}
	ok := outcomes["read_file/ran"]
	if ok.IsError || !ok.Truncated || len(ok.Result) != trace.MaxResultBytes || len(ok.Repairs) == 0 || string(ok.Args) == "" || ok.Iteration != 1 {
		t.Errorf("read_file a.txt: error %v, truncated %v, %d bytes, repairs %q, args %s, iteration %d", ok.IsError, ok.Truncated, len(ok.Result), ok.Repairs, ok.Args, ok.Iteration)
	}
	if m := outcomes["read_file/ran/missing"]; !m.IsError || m.Result != "no such file" || m.Truncated {
		t.Errorf("read_file missing = %+v", m)
	}
	if d := outcomes["write_file/denied"]; !d.IsError || !strings.Contains(d.Result, "--yes") {
		t.Errorf("write_file = %+v", d)
	}
	if inv := outcomes["nope/invalid"]; !inv.IsError || inv.Result == "" {
		t.Errorf("unknown tool = %+v (all: %+v)", inv, outcomes)
	}
}

func TestAgentFailedRun(t *testing.T) {
	m := &script{err: &llm.Error{Kind: llm.ErrConnection, Message: "connection refused"}}
	r := run(t, m, agent.ModeAuto, 5)
	if r.Status != trace.StatusError || r.ErrorCode != string(ptk.LLMCallFailed) || r.ErrorMessage == "" {
		t.Errorf("run = %+v", r.Run)
	}
	if len(r.ModelCalls) != 1 || r.ModelCalls[0].Error == "" || r.ModelCalls[0].Mode != "native" {
		t.Errorf("model calls = %+v", r.ModelCalls)
	}
	loop := &script{}
	for range 3 {
		loop.replies = append(loop.replies, llm.Response{Calls: []ptk.Call{{ID: "1", Tool: "read_file", Args: json.RawMessage(`{"path":"a"}`)}}})
	}
	r = run(t, loop, agent.ModeNative, 2)
	if r.Status != trace.StatusError || r.ErrorCode != string(ptk.MaxIterationsReached) || len(r.ModelCalls) != 2 {
		t.Errorf("run at its limit = %+v, %d model calls", r.Run, len(r.ModelCalls))
	}
}

// TestIntoStore records a run into a real store and reads it back.
func TestIntoStore(t *testing.T) {
	ctx := context.Background()
	s, err := trace.Open(ctx, filepath.Join(t.TempDir(), "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := trace.NewWriter(s, nil)
	rec := record.NewAgent(w, trace.Run{Model: "scripted", Mode: "ptk"})
	m := &script{replies: []llm.Response{{Content: `<PTK_CALL>{"tool": "read_file", "args": {"path": "missing"}}</PTK_CALL>`}, {Content: "done"}}}
	for e, err := range agent.Stream(ctx, agent.Prompt("go"), agent.Options{Model: m, Mode: agent.ModePTK, Tools: tools()}) {
		rec.Event(e, err)
	}
	if err := w.Close(0); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, rec.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Output != "done" || len(got.ToolCalls) != 1 || !got.ToolCalls[0].IsError || got.ToolCalls[0].Result != "no such file" {
		t.Errorf("stored = %+v", got)
	}
}

// A run that compacts its conversation records the notes calls as model
// calls of mode "compact", and each other call still gets its own reply.
func TestAgentRunCompacted(t *testing.T) {
	const turns = 30
	m := &agenttest.WindowModel{Window: 4096, Turns: turns, IsNotes: func(req llm.Request) bool {
		return len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You write the working notes")
	}}
	s := &sink{}
	rec := record.NewAgent(s, trace.Run{Model: "small", Mode: "ptk"})
	opts := agent.Options{Model: m, Mode: agent.ModePTK, Tools: agenttest.FileTools(900), MaxIterations: turns, MaxToolCalls: turns}
	for e, err := range agent.Stream(context.Background(), agent.Prompt("Read every file."), opts) {
		rec.Event(e, err)
	}
	r := s.recs[0]
	compacts, replies := 0, 0
	for _, mc := range r.ModelCalls {
		switch {
		case mc.Mode == record.ModeCompact:
			compacts++
			if !strings.HasPrefix(mc.Text, "[ptk compacted this conversation") || mc.Usage.PromptTokens == 0 {
				t.Errorf("compaction call: %+v", mc)
			}
		case strings.Contains(mc.Text, "<PTK_CALL>") || mc.Text == "Done: every file was read or edited.":
			replies++
		default:
			t.Errorf("a model call without its reply: %+v", mc)
		}
	}
	if compacts == 0 || replies != turns || r.Status != trace.StatusOK {
		t.Fatalf("%d compaction calls, %d replies, status %s", compacts, replies, r.Status)
	}
}

// liveSink is a Live sink that keeps what it is given.
type liveSink struct {
	begun    []trace.Run
	appended []trace.ModelCall
	finished []*trace.Record
}

func (s *liveSink) RecordFunc(build func() *trace.Record) { s.finished = append(s.finished, build()) }
func (s *liveSink) Begin(run trace.Run)                   { s.begun = append(s.begun, run) }
func (s *liveSink) Append(rec *trace.Record, from [3]int) {
	if from[0] != len(s.appended) && len(rec.ModelCalls) > 0 {
		panic("model calls appended out of order")
	}
	s.appended = append(s.appended, rec.ModelCalls...)
}
func (s *liveSink) Finish(build func() *trace.Record)   { s.finished = append(s.finished, build()) }
func (s *liveSink) Progress(build func() *trace.Record) { build() }

var _ record.Live = (*liveSink)(nil)

// TestAgentLiveCallsWhole: a run recorded live appends each model call
// whole as it ends (its reply, the calls read in it, the hash of the
// conversation it was sent), since Finish does not write it again: what
// is appended is what a recorder that sees the run only at its end puts
// together from the finished conversation.
func TestAgentLiveCallsWhole(t *testing.T) {
	u := ptk.Usage{PromptTokens: 100, CompletionTokens: 10}
	scripts := map[agent.Mode]func() llm.Model{
		agent.ModePTK: func() llm.Model {
			return &script{replies: []llm.Response{
				{Content: "Reading.\n<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a.txt\",}}</PTK_CALL>\n" +
					"<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"missing\"}}</PTK_CALL>", Usage: u},
				{Content: "<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"b.txt\"}}</PTK_CALL>", Usage: u},
				{Content: "a.txt holds x's.", Usage: u},
			}}
		},
		agent.ModeNative: func() llm.Model {
			return &script{replies: []llm.Response{
				{Content: "Reading.", Calls: []ptk.Call{{ID: "c1", Tool: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)}}, Usage: u},
				{Calls: []ptk.Call{{ID: "c2", Tool: "read_file", Args: json.RawMessage(`{"path":"missing"}`)}}, Usage: u},
				{Content: "Done.", Usage: u},
			}}
		},
	}
	for mode, model := range scripts {
		t.Run(string(mode), func(t *testing.T) {
			whole := run(t, model(), mode, 5)
			live := &liveSink{}
			opts := agent.Options{Model: model(), ModelName: "scripted", Mode: mode, Tools: tools(), MaxIterations: 5, MaxResultBytes: 1 << 20}
			rec := record.NewAgent(live, trace.Run{Model: "scripted", Mode: string(mode), Input: "Read a.txt"})
			for e, err := range agent.Stream(context.Background(), agent.Prompt("Read a.txt"), opts) {
				rec.Event(e, err)
			}
			if len(live.begun) != 1 || len(live.finished) != 1 || len(live.appended) != 3 || len(whole.ModelCalls) != 3 {
				t.Fatalf("begun %d, appended %d model calls, finished %d; the whole record has %d", len(live.begun), len(live.appended), len(live.finished), len(whole.ModelCalls))
			}
			for i, got := range live.appended {
				want := whole.ModelCalls[i]
				if got.Text != want.Text || got.RequestHash != want.RequestHash || len(got.RequestHash) != 64 || !reflect.DeepEqual(got.Calls, want.Calls) {
					t.Errorf("model call %d appended: text %q, hash %s, calls %+v\nthe whole record's: text %q, hash %s, calls %+v",
						i, got.Text, got.RequestHash, got.Calls, want.Text, want.RequestHash, want.Calls)
				}
			}
			if live.appended[0].RequestHash == live.appended[1].RequestHash || len(live.appended[0].Calls) == 0 {
				t.Errorf("appended = %+v", live.appended)
			}
			if f := live.finished[0]; !reflect.DeepEqual(f.ModelCalls, live.appended) {
				t.Errorf("the finished record's model calls are not the ones appended:\n%+v\n%+v", f.ModelCalls, live.appended)
			}
		})
	}
}
