package wire_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/ptkit/ptk/llm/anthropic/wire"
)

// TestClaudeCodeRequest reads a request Claude Code 2.1.328 sent, as it
// sent it: the system prompt as blocks with cache_control, a system
// message after the first user message, twelve tools with draft 2020-12
// schemas (one deferred), adaptive thinking, and fields the types do not
// know (context_management, output_config), which are ignored.
func TestClaudeCodeRequest(t *testing.T) {
	data, err := os.ReadFile("testdata/claude-code-2.1.328.json")
	if err != nil {
		t.Fatal(err)
	}
	var r wire.Request
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.System == nil || len(r.System.Blocks) < 2 || r.System.Blocks[1].Type != "text" || len(r.System.Blocks[1].CacheControl) == 0 {
		t.Errorf("system %+v: want text blocks, the second with cache_control", r.System)
	}
	roles := ""
	for _, m := range r.Messages {
		roles += m.Role[:1]
		if m.Content.Blocks == nil {
			t.Errorf("a %s message's content is not blocks", m.Role)
		}
	}
	if roles != "us" {
		t.Errorf("roles %q, want user then system", roles)
	}
	if len(r.Tools) != 12 {
		t.Fatalf("%d tools, want 12", len(r.Tools))
	}
	deferred := 0
	for _, tl := range r.Tools {
		if !tl.Custom() || len(tl.InputSchema) == 0 {
			t.Errorf("tool %s: type %q, schema %d bytes", tl.Name, tl.Type, len(tl.InputSchema))
		}
		if tl.DeferLoading {
			deferred++
		}
	}
	if deferred != 1 {
		t.Errorf("%d deferred tools, want 1", deferred)
	}
	if !r.Thinking.On() || r.Thinking.Type != "adaptive" || !r.Stream || r.MaxTokens != 128000 {
		t.Errorf("thinking %+v, stream %v, max_tokens %d", r.Thinking, r.Stream, r.MaxTokens)
	}
}

// TestContent: content reads from a string or blocks, writes back as it
// came; anything else is an error.
func TestContent(t *testing.T) {
	for _, in := range []string{`"hi"`, `[{"type":"text","text":"hi"}]`, `[]`} {
		var c wire.Content
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, _ := json.Marshal(c)
		if string(out) != in {
			t.Errorf("%s written back as %s", in, out)
		}
	}
	var m wire.Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":7}`), &m); err == nil {
		t.Error("content 7 read without an error")
	}
	var b wire.Block
	if err := json.Unmarshal([]byte(`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64"}}],"is_error":true}`), &b); err != nil {
		t.Fatal(err)
	}
	if b.Content == nil || len(b.Content.Blocks) != 2 || b.Content.Blocks[1].Type != "image" || !b.IsError {
		t.Errorf("tool_result read as %+v", b)
	}
}

// TestWrittenShapes: blocks and deltas are written with exactly their
// type's fields, as the API writes them.
func TestWrittenShapes(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{wire.Block{Type: "text"}, `{"type":"text","text":""}`},
		{wire.Block{Type: "thinking"}, `{"type":"thinking","thinking":"","signature":""}`},
		{wire.Block{Type: "tool_use", ID: "toolu_1", Name: "Read"}, `{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}`},
		{wire.Block{Type: "tool_result", ToolUseID: "toolu_1", Content: wire.TextContent("ok")}, `{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}`},
		{wire.Delta{Type: "text_delta", Text: "a<b"}, `{"type":"text_delta","text":"a\u003cb"}`},
		{wire.Delta{Type: "input_json_delta", PartialJSON: `{"a":`}, `{"type":"input_json_delta","partial_json":"{\"a\":"}`},
		{wire.MessageDelta{Type: "message_delta", Delta: wire.StopDelta{StopReason: "end_turn"}}, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`},
		{wire.NewError(529, "busy"), `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`},
	} {
		got, err := json.Marshal(c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%+v written as %s (%v), want %s", c.v, got, err, c.want)
		}
	}
}
