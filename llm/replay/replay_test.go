package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/llm/replay"
)

var ctx = context.Background()

// readTool reads from a fixed set of files.
func readTool() ptk.Tool {
	files := map[string]string{"a.txt": "alpha", "b.txt": "beta"}
	return ptk.NewTool(ptk.ToolInfo{
		Name:        "read",
		Description: "Reads a file.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		ReadOnly:    true,
	}, func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
		var a struct{ Path string }
		if err := json.Unmarshal(args, &a); err != nil {
			return ptk.Result{}, err
		}
		c, ok := files[a.Path]
		if !ok {
			return ptk.Result{Content: "no such file", IsError: true}, nil
		}
		return ptk.Result{Content: c}, nil
	})
}

// script is a model that reads two files, one of them missing, then
// answers; with native, it calls the tools natively.
func script(native bool) *llmtest.Script {
	first := llmtest.Reply{Content: "Let me look.", Usage: ptk.Usage{PromptTokens: 120, CompletionTokens: 30, CacheReadTokens: 100}}
	if native {
		first.Calls = []ptk.Call{
			{ID: "x1", Tool: "read", Args: json.RawMessage(`{"path": "a.txt"}`)},
			{ID: "x2", Tool: "read", Args: json.RawMessage(`{"path":"c.txt"}`)},
		}
	} else {
		first.Content += ` <tool_call>{"name": "read", "arguments": {"path": "a.txt"}}</tool_call>` +
			`<tool_call>{"name": "read", "arguments": {"path": "c.txt"}}</tool_call>`
	}
	return llmtest.New(first,
		llmtest.Reply{Content: "a.txt says alpha; c.txt does not exist.", Reasoning: "Done.", Usage: ptk.Usage{PromptTokens: 200, CompletionTokens: 12}},
	)
}

type run struct{ native, stream bool }

func (r run) options(m llm.Model) agent.Options {
	o := agent.Options{Model: m, ModelName: "qwen3:8b", Mode: agent.ModePTK, Tools: []ptk.Tool{readTool()}, StreamModel: r.stream}
	if r.native {
		o.Mode = agent.ModeNative
	}
	return o
}

const prompt = "What do a.txt and c.txt say?"

// record runs the agent on the script, recording to a new file.
func record(t *testing.T, r run) (string, *agent.Result) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	m, f, err := replay.RecordFile(script(r.native), path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(ctx, agent.Prompt(prompt), r.options(m))
	if err != nil {
		t.Fatalf("recording run: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, res
}

func TestAgentReplay(t *testing.T) {
	for _, c := range []struct {
		name         string
		record, play run
	}{
		{"generate", run{}, run{}},
		{"stream", run{stream: true}, run{stream: true}},
		{"stream to generate", run{stream: true}, run{}},
		{"generate to stream", run{}, run{stream: true}},
		{"native", run{native: true}, run{native: true}},
		{"native stream to generate", run{native: true, stream: true}, run{native: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, want := record(t, c.record)
			if want.TotalToolCalls != 2 || !want.Success {
				t.Fatalf("the recorded run is not the one meant: %+v", want)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p, err := replay.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := agent.Run(ctx, agent.Prompt(prompt), c.play.options(p))
			if err != nil {
				t.Fatalf("replayed run: %v", err)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(agent.Result{}, "Duration"), cmpopts.IgnoreFields(agent.ToolCall{}, "Duration")); diff != "" {
				t.Errorf("replayed result (-recorded +replayed):\n%s", diff)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the replay changed the recording")
			}
			if n := bytes.Count(after, []byte("\n")); n != 2 {
				t.Errorf("%d lines recorded, want 2:\n%s", n, after)
			}
		})
	}
}

func TestMissSaysWhere(t *testing.T) {
	path, _ := record(t, run{})
	p, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.Run(ctx, agent.Prompt("What do a.txt and b.txt say?"), run{}.options(p))
	if !errors.Is(err, replay.ErrMiss) || !errors.Is(err, llm.ErrBadRequest) {
		t.Fatalf("err = %v, want a miss", err)
	}
	for _, s := range []string{
		"no recording of this request", path, "holds 2 calls of 2 distinct requests", "model \"qwen3:8b\", 2 messages",
		"the closest, on line 1, has 2 messages and differs first at message 1 (user)",
		`recorded …,"content":"What do a.txt and c.txt say?"}, now …,"content":"What do a.txt and b.txt say?"}`,
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the error does not say %q:\n%v", s, err)
		}
	}

	// Another model, and the same messages with another temperature.
	temp := 0.5
	req := llm.Request{Model: "qwen3:8b", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}}
	p, err = replay.Load(strings.NewReader(recordOne(t, req)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		req  llm.Request
		want string
	}{
		{llm.Request{Model: "llama3", Messages: req.Messages}, `the closest, on line 1, is for model "qwen3:8b"`},
		{llm.Request{Model: "qwen3:8b", Messages: req.Messages, Temperature: &temp}, `has the same messages, but recorded {"model":"qwen3:8b"}, now {"model":"qwen3:8b","temperature":0.5}`},
		{llm.Request{Model: "qwen3:8b", Messages: append(req.Messages, req.Messages...)}, "starts with the same 1 messages, but has 1"},
	} {
		if _, err := p.Generate(ctx, c.req); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v\nwant it to say %q", err, c.want)
		}
	}
}

// recordOne records one call of req to a scripted model.
func recordOne(t *testing.T, req llm.Request) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := replay.Record(llmtest.New(llmtest.Text("hello")), &b).Generate(ctx, req); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// lineWriter checks that every Write is one whole line of JSON.
type lineWriter struct {
	t     *testing.T
	mu    sync.Mutex
	lines [][]byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	if !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 || !json.Valid(b) {
		w.t.Errorf("a Write is not one line of JSON: %q", b)
	}
	w.mu.Lock()
	w.lines = append(w.lines, bytes.Clone(b))
	w.mu.Unlock()
	return len(b), nil
}

func TestConcurrentRecording(t *testing.T) {
	const n = 20
	var replies []llmtest.Reply
	for range n {
		replies = append(replies, llmtest.Text("ok"))
	}
	w := &lineWriter{t: t}
	m := replay.Record(llmtest.New(replies...), w)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := llm.Request{Messages: []ptk.Message{{Role: ptk.RoleUser, Content: fmt.Sprint("question ", i)}}}
			if i%2 == 0 {
				_, err := m.Generate(ctx, req)
				if err != nil {
					t.Error(err)
				}
				return
			}
			if _, err := llm.Collect(m.(llm.Streamer).Stream(ctx, req)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(w.lines) != n {
		t.Fatalf("%d lines, want %d", len(w.lines), n)
	}
	p, err := replay.Load(bytes.NewReader(bytes.Join(w.lines, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		req := llm.Request{Messages: []ptk.Message{{Role: ptk.RoleUser, Content: fmt.Sprint("question ", i)}}}
		if r, err := p.Generate(ctx, req); err != nil || r.Content != "ok" {
			t.Errorf("question %d: %v, %v", i, r, err)
		}
	}
}

// exact is a response whose every field is set, with arguments that JSON
// would not read back byte for byte.
var exact = llmtest.Reply{
	Content:   "<b>&amp;</b> \u2028 é",
	Reasoning: "because",
	Calls: []ptk.Call{
		{ID: "c1", Tool: "t", Args: json.RawMessage(`{"b": 1,  "a": [1.0, "<&>"]}`)},
		{ID: "c2", Tool: "t", Args: json.RawMessage(`{"a":"compact"}`)},
		{ID: "c3", Tool: "t", Args: json.RawMessage(`not json {`)},
		{ID: "c4", Tool: "t", Args: json.RawMessage(`"a string"`)},
		{ID: "c5", Tool: "t", Args: json.RawMessage(`null`)},
		{ID: "c6", Tool: "t", Args: json.RawMessage(`  {"a":1}`)},
	},
	Usage: ptk.Usage{PromptTokens: 1, CompletionTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4},
}

func TestByteForByte(t *testing.T) {
	req := llm.Request{Model: "m", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "go"}}}
	var b bytes.Buffer
	// Pieces of 4 bytes, so that no piece cuts a character in two: JSON
	// would make that half U+FFFD.
	s := &llmtest.Script{Replies: []llmtest.Reply{exact, exact}, ChunkSize: 4}
	priced := llm.Priced(s, llm.Price{Input: 1.5, Output: 3})
	m := replay.Record(priced, &b)
	want, err := m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wantChunks := collectChunks(t, m.(llm.Streamer).Stream(ctx, req))
	p, err := replay.Load(&b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Generate(ctx, req) // the recorded whole answer
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" || want.Cost == 0 {
		t.Errorf("Generate (-recorded +replayed):\n%s", diff)
	}
	if diff := cmp.Diff(wantChunks, collectChunks(t, p.Stream(ctx, req))); diff != "" {
		t.Errorf("Stream (-recorded +replayed):\n%s", diff)
	}
	// The recorded whole answer, streamed, assembles into itself.
	p, _ = replay.Load(strings.NewReader(recordOne(t, req)))
	if got, err := llm.Collect(p.Stream(ctx, req)); err != nil || got.Content != "hello" || got.FinishReason != "stop" {
		t.Errorf("whole answer streamed: %+v, %v", got, err)
	}
}

func collectChunks(t *testing.T, seq func(func(llm.Chunk, error) bool)) []llm.Chunk {
	t.Helper()
	var out []llm.Chunk
	for ch, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ch)
	}
	return out
}

func TestErrors(t *testing.T) {
	rate := &llm.Error{Kind: llm.ErrRateLimited, Status: 429, Message: "slow down", RetryAfter: 2 * time.Second}
	for _, c := range []struct {
		name string
		err  error
		kind error
	}{
		{"rate limited", rate, llm.ErrRateLimited},
		{"wrapped", fmt.Errorf("retries: %w", &llm.Error{Kind: llm.ErrToolsUnsupported, Status: 400, Message: "no tools"}), llm.ErrToolsUnsupported},
		{"canceled", context.Canceled, context.Canceled},
		{"other", errors.New("the cable is out"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := llm.Request{Messages: []ptk.Message{{Role: ptk.RoleUser, Content: c.name}}}
			var b bytes.Buffer
			m := replay.Record(llmtest.New(llmtest.Reply{Err: c.err}, llmtest.Reply{Err: c.err}), &b)
			if _, err := m.Generate(ctx, req); err != c.err {
				t.Fatalf("recording: %v", err)
			}
			if _, err := llm.Collect(m.(llm.Streamer).Stream(ctx, req)); err != c.err {
				t.Fatalf("recording a stream: %v", err)
			}
			p, err := replay.Load(&b)
			if err != nil {
				t.Fatal(err)
			}
			_, gen := p.Generate(ctx, req)
			_, str := llm.Collect(p.Stream(ctx, req))
			for _, err := range []error{gen, str} {
				if c.kind != nil && !errors.Is(err, c.kind) {
					t.Errorf("replayed %v, not %v", err, c.kind)
				}
				var le *llm.Error
				if errors.As(c.err, &le) && err.Error() != le.Error() || le == nil && err.Error() != c.err.Error() {
					t.Errorf("replayed %q, recorded %q", err, c.err)
				}
			}
			var le *llm.Error
			if c.err == error(rate) && (!errors.As(gen, &le) || le.RetryAfter != 2*time.Second || le.Status != 429) {
				t.Errorf("replayed %#v", gen)
			}
		})
	}
}

func TestRepeatedRequests(t *testing.T) {
	req := llm.Request{Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "again"}}}
	var b bytes.Buffer
	m := replay.Record(llmtest.New(llmtest.Text("one"), llmtest.Text("two")), &b)
	for range 2 {
		if _, err := m.Generate(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	p, err := replay.Load(&b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 4 {
		r, err := p.Generate(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Content)
	}
	if want := []string{"one", "two", "two", "two"}; !cmp.Equal(got, want) {
		t.Errorf("answers %q, want %q", got, want)
	}
}

func TestCorruptRecording(t *testing.T) {
	good := recordOne(t, llm.Request{Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}})
	for _, c := range []struct{ name, bad, want string }{
		{"truncated", good[:len(good)/2], "line 3 of "},
		{"not a call", `{"hello": "world"}`, "line 3 of .*: not a recorded call"},
		{"unknown kind", strings.Replace(good, `"response"`, `"error":{"kind":"flaky","message":"x"},"x"`, 1), `line 3 of .*: unknown error kind "flaky"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.jsonl")
			if err := os.WriteFile(path, []byte(good+"\n"+c.bad+"\n"+good), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := replay.Open(path)
			want := strings.ReplaceAll(c.want, ".*", path)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Open: %v, want it to say %q", err, want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	// Fields added to these types must be added to the key or to what it
	// leaves out, and to this test. (ptk.Message's Raw and Compacted are
	// left out: no provider is sent them.)
	for _, c := range []struct {
		v any
		n int
	}{{llm.Request{}, 10}, {ptk.Message{}, 8}, {ptk.Call{}, 5}, {ptk.ToolInfo{}, 5}} {
		if got := reflect.TypeOf(c.v).NumField(); got != c.n {
			t.Errorf("%T has %d fields, not %d: is the new one in the key?", c.v, got, c.n)
		}
	}
	temp, zero := 0.5, 0.0
	base := func() llm.Request {
		return llm.Request{
			Model: "m",
			Messages: []ptk.Message{
				{Role: ptk.RoleAssistant, Content: "c", Calls: []ptk.Call{{ID: "1", Tool: "t", Args: json.RawMessage(`{"a":1,"b":[2]}`)}}},
				{Role: ptk.RoleTool, Content: "r", CallID: "1", Tool: "t"},
			},
			Tools: []ptk.ToolInfo{{Name: "t", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
		}
	}
	for _, c := range []struct {
		name   string
		change func(r *llm.Request)
		inKey  bool
	}{
		{"model", func(r *llm.Request) { r.Model = "n" }, true},
		{"prompt", func(r *llm.Request) { r.Prompt = "USER:\nhi\n\nASSISTANT:\n" }, true},
		{"role", func(r *llm.Request) { r.Messages[1].Role = ptk.RoleUser }, true},
		{"content", func(r *llm.Request) { r.Messages[0].Content = "C" }, true},
		{"call id", func(r *llm.Request) { r.Messages[0].Calls[0].ID = "2" }, true},
		{"call tool", func(r *llm.Request) { r.Messages[0].Calls[0].Tool = "u" }, true},
		{"call args", func(r *llm.Request) { r.Messages[0].Calls[0].Args = json.RawMessage(`{"a":2,"b":[2]}`) }, true},
		{"call_id", func(r *llm.Request) { r.Messages[1].CallID = "2" }, true},
		{"tool", func(r *llm.Request) { r.Messages[1].Tool = "u" }, true},
		{"is_error", func(r *llm.Request) { r.Messages[1].IsError = true }, true},
		{"tool name", func(r *llm.Request) { r.Tools[0].Name = "u" }, true},
		{"tool description", func(r *llm.Request) { r.Tools[0].Description = "e" }, true},
		{"tool parameters", func(r *llm.Request) { r.Tools[0].Parameters = json.RawMessage(`{"type":"object"}`) }, true},
		{"tool choice", func(r *llm.Request) { r.ToolChoice = "none" }, true},
		{"temperature", func(r *llm.Request) { r.Temperature = &temp }, true},
		{"temperature 0", func(r *llm.Request) { r.Temperature = &zero }, true},
		{"max tokens", func(r *llm.Request) { r.MaxTokens = 9 }, true},
		{"stop", func(r *llm.Request) { r.Stop = []string{"x"} }, true},
		{"extra", func(r *llm.Request) { r.Extra = map[string]json.RawMessage{"seed": json.RawMessage(`7`)} }, true},
		{"response schema", func(r *llm.Request) { r.ResponseSchema = json.RawMessage(`{"type":"object"}`) }, true},
		{"raw", func(r *llm.Request) { r.Messages[0].Raw = "raw" }, false},
		{"args key order and spaces", func(r *llm.Request) { r.Messages[0].Calls[0].Args = json.RawMessage(`{ "b": [2], "a": 1 }`) }, false},
		{"parameters key order", func(r *llm.Request) {
			r.Tools[0].Parameters = json.RawMessage(`{"properties": {}, "type": "object"}`)
		}, false},
		{"call reasoning and repairs", func(r *llm.Request) {
			r.Messages[0].Calls[0].Reasoning, r.Messages[0].Calls[0].Repairs = "why", []string{"fixed"}
		}, false},
		{"read-only and cacheable", func(r *llm.Request) { r.Tools[0].ReadOnly, r.Tools[0].Cacheable = true, true }, false},
		{"empty stop", func(r *llm.Request) { r.Stop = []string{} }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := base()
			c.change(&req)
			p, err := replay.Load(strings.NewReader(recordOne(t, req)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Generate(ctx, base())
			if hit := err == nil; hit == c.inKey {
				t.Errorf("changing the %s: the original request hits: %v (err %v)", c.name, hit, err)
			}
		})
	}
}

func TestNoNativeTools(t *testing.T) {
	var b bytes.Buffer
	m := replay.Record(textOnly{llmtest.New(llmtest.Text("ok"))}, &b)
	if ts, ok := llm.As[llm.ToolSupporter](m); !ok || ts.SupportsNativeTools() {
		t.Error("the recorder says it takes native tools")
	}
	if u := llm.BaseURLOf(m); u != "http://localhost:8080/v1" {
		t.Errorf("BaseURL = %q", u)
	}
	if _, err := m.Generate(ctx, llm.Request{}); err != nil {
		t.Fatal(err)
	}
	p, err := replay.Load(&b)
	if err != nil {
		t.Fatal(err)
	}
	if p.SupportsNativeTools() {
		t.Error("the player says it takes native tools")
	}
}

func TestRecordNonStreamer(t *testing.T) {
	var b bytes.Buffer
	m := replay.Record(struct{ llm.Model }{llmtest.New(llmtest.Text("whole"))}, &b)
	r, err := llm.Collect(m.(llm.Streamer).Stream(ctx, llm.Request{}))
	if err != nil || r.Content != "whole" {
		t.Fatalf("stream of a model that does not stream: %+v, %v", r, err)
	}
	if !strings.Contains(b.String(), `"response":{"content":"whole"`) || strings.Contains(b.String(), `"stream"`) {
		t.Errorf("recorded as a stream: %s", b.String())
	}
}

type textOnly struct{ *llmtest.Script }

func (textOnly) SupportsNativeTools() bool { return false }
func (textOnly) BaseURL() string           { return "http://localhost:8080/v1" }
