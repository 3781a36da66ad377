package wire_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/internal/jsoncache"
	"github.com/ptkit/ptk/llm/openai/wire"
)

// completionOf builds a completion from a fuzzer's values: a chunk or a
// whole answer, each optional field there or not by a bit of shape.
func completionOf(shape uint16, id, text, args string, n int64) wire.Completion {
	bit := func(i uint) bool { return shape&(1<<i) != 0 }
	idx := int(n % 7)
	finish := text
	c := wire.Completion{ID: id, Object: "chat.completion.chunk", Created: n, Model: text}
	tc := wire.ToolCall{ID: id, Type: "function", Function: wire.FunctionCall{Name: text, Arguments: wire.Arguments(args)}}
	if bit(0) {
		tc.Index = &idx
	}
	if bit(1) {
		tc.ID, tc.Type = "", ""
	}
	var calls []wire.ToolCall
	if bit(2) {
		calls = []wire.ToolCall{tc, {Function: wire.FunctionCall{Arguments: wire.Arguments(text)}}}
	}
	ch := wire.Choice{Index: idx}
	if bit(3) {
		ch.FinishReason = &finish
	}
	if bit(4) {
		lp := json.RawMessage(args)
		if bit(1) && args == "" {
			lp = nil
		}
		ch.Logprobs = &lp
	}
	if bit(5) {
		c.Object = "chat.completion"
		m := &wire.Reply{Role: "assistant", ToolCalls: calls}
		if bit(6) {
			t := wire.Text(text)
			m.Content = &t
		}
		if bit(7) {
			m.ReasoningContent, m.Reasoning = wire.Text(args), wire.Text(id)
		}
		if bit(8) {
			m.Refusal = &finish
		}
		ch.Message = m
	} else {
		d := &wire.Delta{ToolCalls: calls}
		if bit(6) {
			d.Role, d.Content = "assistant", wire.Text(text)
		}
		if bit(7) {
			d.ReasoningContent, d.Reasoning = wire.Text(args), wire.Text(id)
		}
		ch.Delta = d
	}
	switch {
	case bit(9):
		c.Choices = []wire.Choice{}
	case bit(10):
		c.Choices = []wire.Choice{ch, ch}
	case !bit(11):
		c.Choices = []wire.Choice{ch}
	}
	if bit(12) {
		c.Usage = &wire.Usage{PromptTokens: idx, CompletionTokens: int(n), TotalTokens: idx + int(n)}
		if bit(13) {
			c.Usage.PromptTokensDetails = &wire.TokenDetails{CachedTokens: idx}
			c.Usage.PromptCacheHitTokens = idx
		}
	}
	if bit(14) {
		c.Error = json.RawMessage(args)
	}
	return c
}

// checkAppendJSON checks that AppendJSON writes c as encoding/json does,
// with and without HTML escaping, and fails where it fails.
func checkAppendJSON(t *testing.T, c wire.Completion) {
	t.Helper()
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		err := enc.Encode(c)
		got, ok := c.AppendJSON([]byte("x"), html)
		if ok != (err == nil) {
			t.Fatalf("AppendJSON(%+v, %v): ok %v, encoding/json: %v", c, html, ok, err)
		}
		if !ok {
			if string(got) != "x" {
				t.Fatalf("AppendJSON failed and appended %q", got[1:])
			}
			continue
		}
		if want := bytes.TrimSuffix(b.Bytes(), []byte("\n")); !bytes.Equal(got[1:], want) {
			t.Fatalf("AppendJSON(%v) wrote\n%s\nencoding/json\n%s", html, got[1:], want)
		}
	}
}

var encodeSeeds = []struct {
	id, text, args string
}{
	{"chatcmpl-1", "I'll check the weather.", `{"city":"Paris"}`},
	{"c", "<PTK_CALL>{\"tool\": \"f\"}</PTK_CALL> & \u2028 \xff \x01\t\n", `{"a": [1, 2], "b": "<x>"}`},
	{"", "", ""},
	{"id", "café 😀", `not json`},
	{"id", "x", `null`},
}

// TestAppendJSON: chunks and whole answers of every shape are written as
// encoding/json writes them.
func TestAppendJSON(t *testing.T) {
	for _, s := range encodeSeeds {
		for shape := range 1 << 15 {
			if shape%97 != 0 && shape >= 64 {
				continue
			}
			checkAppendJSON(t, completionOf(uint16(shape), s.id, s.text, s.args, int64(shape)))
		}
	}
}

func FuzzAppendJSON(f *testing.F) {
	for i, s := range encodeSeeds {
		f.Add(uint16(i*4099), s.id, s.text, s.args, int64(i))
	}
	f.Fuzz(func(t *testing.T, shape uint16, id, text, args string, n int64) {
		checkAppendJSON(t, completionOf(shape, id, text, args, n))
	})
}

// requestOf builds a request from a fuzzer's values, each optional field
// there or not by a bit of shape.
func requestOf(shape uint16, model, text, params string, n int64) wire.Request {
	bit := func(i uint) bool { return shape&(1<<i) != 0 }
	idx, f, yes := int(n%7), float64(n)/3, bit(0)
	r := wire.Request{Model: model}
	m := wire.Message{Role: "user", Content: wire.TextContent(text)}
	switch {
	case bit(1):
		m.Content = &wire.Content{Parts: []wire.ContentPart{{Type: "text", Text: text}, {Type: "image_url"}}}
	case bit(2):
		m.Content = nil
		m.ToolCalls = []wire.ToolCall{{ID: model, Type: "function", Function: wire.FunctionCall{Name: text, Arguments: wire.Arguments(params)}}}
	}
	if bit(3) {
		m.Name, m.ToolCallID = text, model
	}
	switch {
	case bit(4):
		r.Messages = []wire.Message{}
	case !bit(5):
		r.Messages = []wire.Message{{Role: "system", Content: wire.TextContent(params)}, m}
	}
	if bit(6) {
		r.Temperature, r.MaxTokens, r.N = &f, &idx, &idx
	}
	if bit(7) {
		r.Stop = json.RawMessage(params)
	}
	if bit(8) {
		strict := bit(9)
		r.Tools = []wire.Tool{
			{Type: "function", Function: wire.Function{Name: text, Description: model, Parameters: json.RawMessage(params), Strict: &strict}},
			{Type: "function", Function: wire.Function{Name: model, Parameters: json.RawMessage(`{"type": "object"}`)}},
		}
		r.ToolChoice = json.RawMessage(`"auto"`)
	}
	if bit(10) {
		r.Stream, r.StreamOptions = true, &wire.StreamOptions{IncludeUsage: bit(11)}
	}
	if bit(12) {
		r.ParallelToolCalls, r.MaxCompletionTokens = &yes, &idx
	}
	if bit(13) {
		r.ToolChoice = json.RawMessage(params)
	}
	return r
}

// checkRequestJSON checks that Request.AppendJSON writes r as
// encoding/json does, with and without HTML escaping, and fails where it
// fails.
func checkRequestJSON(t *testing.T, r wire.Request) {
	t.Helper()
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		err := enc.Encode(&r)
		got, ok := r.AppendJSON([]byte("x"), html)
		if ok != (err == nil) {
			t.Fatalf("AppendJSON(%+v, %v): ok %v, encoding/json: %v", r, html, ok, err)
		}
		if !ok {
			if string(got) != "x" {
				t.Fatalf("AppendJSON failed and appended %q", got[1:])
			}
			continue
		}
		if want := bytes.TrimSuffix(b.Bytes(), []byte("\n")); !bytes.Equal(got[1:], want) {
			t.Fatalf("AppendJSON(%v) wrote\n%s\nencoding/json\n%s", html, got[1:], want)
		}
		// Through a cache, the first time (nothing kept), the second
		// (kept) and the third (taken from it): the same bytes.
		for i := range 3 {
			if cached, ok := r.AppendJSONCached([]byte("x"), html, requestCache); !ok || !bytes.Equal(cached, got) {
				t.Fatalf("AppendJSONCached(%v), call %d: %v\n%s\nAppendJSON\n%s", html, i+1, ok, cached, got)
			}
		}
	}
}

// requestCache is shared by every request checked, as a client's is by its
// calls; small, so that it also forgets.
var requestCache = jsoncache.New(256 << 10)

// padded pads text past jsoncache.MinLen, and params with trailing spaces
// (the same JSON, valid or not), so that a cache keeps them.
func padded(text, params string) (string, string) {
	pad := strings.Repeat(" ", jsoncache.MinLen)
	return text + pad + text, params + pad
}

// TestRequestAppendJSON: requests of every shape, the protocol's system
// prompt full of tags among them, are written as encoding/json writes
// them; a request it refuses (parameters that are not JSON, a temperature
// that is not a number) is refused.
func TestRequestAppendJSON(t *testing.T) {
	for _, s := range encodeSeeds {
		for shape := range 1 << 14 {
			if shape%89 != 0 && shape >= 64 {
				continue
			}
			checkRequestJSON(t, requestOf(uint16(shape), s.id, s.text, s.args, int64(shape)))
			text, args := padded(s.text, s.args)
			checkRequestJSON(t, requestOf(uint16(shape), s.id, text, args, int64(shape)))
		}
	}
	nan := math.NaN()
	if _, ok := (&wire.Request{Temperature: &nan}).AppendJSON(nil, true); ok {
		t.Error("AppendJSON wrote a NaN temperature, which encoding/json refuses")
	}
}

func FuzzRequestAppendJSON(f *testing.F) {
	for i, s := range encodeSeeds {
		f.Add(uint16(i*4099), s.id, s.text, s.args, int64(i))
	}
	f.Fuzz(func(t *testing.T, shape uint16, model, text, params string, n int64) {
		checkRequestJSON(t, requestOf(shape, model, text, params, n))
		text, params = padded(text, params)
		checkRequestJSON(t, requestOf(shape, model, text, params, n))
	})
}
