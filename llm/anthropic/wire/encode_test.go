package wire_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ptkit/ptk/llm/anthropic/wire"
)

// appender is what the events and the response write themselves with.
type appender interface {
	AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool)
}

// checkAppend checks that v.AppendJSON writes v as encoding/json does,
// with and without HTML escaping; where it leaves v to encoding/json, it
// appends nothing.
func checkAppend(t *testing.T, v appender) bool {
	t.Helper()
	fast := true
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		err := enc.Encode(v)
		got, ok := v.AppendJSON([]byte("x"), html)
		if !ok {
			fast = false
			if string(got) != "x" {
				t.Fatalf("AppendJSON failed and appended %q", got[1:])
			}
			continue
		}
		if err != nil {
			t.Fatalf("AppendJSON wrote %T %+v, which encoding/json refuses: %v", v, v, err)
		}
		if want := bytes.TrimSuffix(b.Bytes(), []byte("\n")); !bytes.Equal(got[1:], want) {
			t.Fatalf("AppendJSON(%T, %v) wrote\n%s\nencoding/json\n%s", v, html, got[1:], want)
		}
	}
	return fast
}

// valuesOf builds every event, a response and an error from a fuzzer's
// values, the optional fields there or not by a bit of shape.
func valuesOf(shape uint32, s1, s2, raw string, n int64) []appender {
	bit := func(i uint) bool { return shape&(1<<i) != 0 }
	ni := int(uint64(n) % 1000)
	types := []string{"text", "thinking", "tool_use", "tool_result", "image", "redacted_thinking", s2}
	block := func(k uint) wire.Block {
		b := wire.Block{Type: types[(ni+int(k))%len(types)], Text: s1}
		if bit(k) {
			b.Thinking, b.Signature, b.Data, b.ID, b.Name, b.ToolUseID, b.ToolName = s2, s1, s2, s1, s2, s1, s2
		}
		if bit(k + 1) {
			b.Input, b.Source, b.CacheControl = json.RawMessage(raw), json.RawMessage(`{"type": "base64", "data": "<x>"}`), json.RawMessage(`{"type":"ephemeral"}`)
		}
		if bit(k + 2) {
			b.Input = json.RawMessage("  ")
		}
		switch {
		case bit(k + 3):
			b.Content = wire.TextContent(s2)
		case bit(k + 4):
			c := wire.BlockContent(wire.Block{Type: "text", Text: s1}, wire.Block{Type: "tool_reference", ToolName: s2})
			b.Content = &c
		}
		b.IsError = bit(k + 5)
		return b
	}
	resp := &wire.Response{ID: s1, Type: "message", Role: "assistant", Model: s2,
		Usage: wire.Usage{InputTokens: ni, OutputTokens: ni + 1, CacheReadInputTokens: ni / 2}}
	if !bit(10) {
		resp.Content = []wire.Block{block(0), block(6), block(12)}
	}
	if bit(11) {
		resp.StopReason, resp.StopSequence = &s1, &s2
	}
	if bit(18) {
		resp.Error = &wire.Error{Type: s1, Message: s2}
	}
	deltaTypes := []string{"text_delta", "thinking_delta", "signature_delta", "input_json_delta", s1, "we<ird", "a\"b"}
	var msg *wire.Response
	if !bit(19) {
		msg = resp
	}
	var stopSeq *string
	if bit(20) {
		stopSeq = &s2
	}
	return []appender{
		resp,
		wire.MessageStart{Type: "message_start", Message: msg},
		wire.BlockStart{Type: "content_block_start", Index: ni, ContentBlock: block(21)},
		wire.BlockDelta{Type: "content_block_delta", Index: ni, Delta: wire.Delta{Type: deltaTypes[ni%len(deltaTypes)], Text: s1, Thinking: s2, Signature: raw, PartialJSON: raw}},
		wire.BlockStop{Type: "content_block_stop", Index: ni},
		wire.MessageDelta{Type: "message_delta", Delta: wire.StopDelta{StopReason: s1, StopSequence: stopSeq}, Usage: resp.Usage},
		wire.NewError(400+ni%200, s1),
	}
}

var encodeSeeds = []struct{ s1, s2, raw string }{
	{"msg_1", "end_turn", `{"city":"Paris"}`},
	{"<PTK_CALL> & \u2028 \xff \x01\t\n", "café 😀 <b>", "{\n  \"a\": [1, 2],\n  \"b\": \"<x> \u2028\"\n}"},
	{"", "", ""},
	{"x", "y", `not json`},
}

// TestAppendJSON: the response, the error and every event, in every
// shape, are written as encoding/json writes them; only deltas of a type
// that is not a plain name are left to it.
func TestAppendJSON(t *testing.T) {
	var shapes []uint32
	for shape := range uint32(256) {
		shapes = append(shapes, shape, shape*2654435761)
	}
	left := 0
	for _, s := range encodeSeeds {
		for _, shape := range shapes {
			for _, v := range valuesOf(shape, s.s1, s.s2, s.raw, int64(shape)) {
				if !checkAppend(t, v) {
					left++
				}
			}
		}
	}
	if left > len(encodeSeeds)*len(shapes)*2 {
		t.Errorf("%d values left to encoding/json", left)
	}
}

func FuzzAppendJSON(f *testing.F) {
	for i, s := range encodeSeeds {
		f.Add(uint32(i*2654435761), s.s1, s.s2, s.raw, int64(i*7))
	}
	f.Fuzz(func(t *testing.T, shape uint32, s1, s2, raw string, n int64) {
		for _, v := range valuesOf(shape, s1, s2, raw, n) {
			checkAppend(t, v)
		}
	})
}
