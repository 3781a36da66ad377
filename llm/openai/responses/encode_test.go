package responses_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/openai/responses"
)

// appender is what the events and the response write themselves with.
type appender interface {
	AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool)
}

// checkAppend checks that v.AppendJSON writes v as encoding/json does,
// with and without HTML escaping, and fails where it fails.
func checkAppend(t *testing.T, v appender) {
	t.Helper()
	// Each way twice: what the echo's cache keeps the second time is
	// written the third.
	for _, html := range []bool{true, false, true, false, true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		err := enc.Encode(v)
		got, ok := v.AppendJSON([]byte("x"), html)
		if ok != (err == nil) {
			t.Fatalf("AppendJSON(%+v, %v): ok %v, encoding/json: %v", v, html, ok, err)
		}
		if !ok {
			if string(got) != "x" {
				t.Fatalf("AppendJSON failed and appended %q", got[1:])
			}
			continue
		}
		if want := bytes.TrimSuffix(b.Bytes(), []byte("\n")); !bytes.Equal(got[1:], want) {
			t.Fatalf("AppendJSON(%T, %v) wrote\n%s\nencoding/json\n%s", v, html, got[1:], want)
		}
	}
}

// valuesOf builds every event, and a response, from a fuzzer's values,
// the optional fields there or not by a bit of shape.
func valuesOf(shape uint32, s1, s2, raw string, n int64, f float64) []appender {
	bit := func(i uint) bool { return shape&(1<<i) != 0 }
	ni := int(uint64(n) % 1000)
	part := func(typ string) responses.Part {
		p := responses.Part{Type: typ, Text: s1}
		if bit(0) {
			p.Refusal, p.ImageURL, p.FileID, p.Filename = s2, s1, s2, s1
		}
		switch {
		case bit(1):
			a := []json.RawMessage{json.RawMessage(raw), json.RawMessage(`{"a": 1}`)}
			p.Annotations = &a
		case bit(2):
			var a []json.RawMessage
			p.Annotations = &a
		}
		return p
	}
	types := []string{"output_text", "input_text", "reasoning_text", "summary_text", "refusal", "input_image", s2}
	content := func(k uint) *responses.Content {
		switch {
		case bit(k):
			return nil
		case bit(k + 1):
			return &responses.Content{Text: s1}
		case bit(k + 2):
			return &responses.Content{Parts: []responses.Part{}}
		}
		return &responses.Content{Parts: []responses.Part{part(types[ni%len(types)]), part(types[(ni+1)%len(types)])}}
	}
	itemTypes := []string{"function_call", "reasoning", "message", "function_call_output", "custom_tool_call", "", s2}
	item := responses.Item{Type: itemTypes[ni%len(itemTypes)], Content: content(3), Output: content(6)}
	if bit(9) {
		item.ID, item.Status, item.Role = s1, s2, "assistant"
	}
	if bit(10) {
		item.CallID, item.Name, item.Namespace, item.Arguments, item.EncryptedContent, item.Input = s1, s2, s1, raw, s2, s1
	}
	if bit(11) {
		item.Summary = []responses.Part{part("summary_text")}
	}
	var tools []responses.Tool
	if !bit(12) {
		strict := bit(13)
		tools = []responses.Tool{{Type: "function", Name: s1, Description: s2, Parameters: json.RawMessage(raw), Strict: &strict},
			{Type: "namespace", Name: s2, Tools: []responses.Tool{{Type: "function", Name: s1}}}, {Type: "web_search"}}
	}
	resp := &responses.Response{ID: s1, Object: "response", CreatedAt: n, Status: s2, Model: s1, Tools: tools,
		ParallelToolCalls: bit(14), Store: bit(15)}
	if !bit(16) {
		resp.Output = []responses.Item{item, {Type: "message", ID: "msg_1", Role: "assistant", Content: content(17)}}
	}
	if bit(20) {
		resp.Usage = &responses.Usage{InputTokens: ni, TotalTokens: ni + 1}
		resp.Usage.InputTokensDetails.CachedTokens = ni / 2
	}
	if bit(21) {
		resp.Error = &responses.Error{Code: s1, Message: s2}
		resp.IncompleteDetails = &responses.Incomplete{Reason: s2}
	}
	if bit(22) {
		resp.Instructions, resp.PreviousID = &s1, &s2
		resp.Temperature, resp.TopP, resp.MaxOutputTokens = &f, &f, &ni
	}
	if !bit(23) {
		resp.ToolChoice, resp.Metadata = json.RawMessage(raw), json.RawMessage(`{"k": "<v>"}`)
	}
	var itemPtr *responses.Item
	if !bit(24) {
		itemPtr = &item
	}
	var respPtr *responses.Response
	if !bit(25) {
		respPtr = resp
	}
	// The response's echo, encoded once with and without HTML escaped (an
	// event written the other way does not use it).
	var echoes [2]*responses.Echo
	if respPtr != nil {
		echoes[0], _ = respPtr.Echo(false)
		echoes[1], _ = respPtr.Echo(true)
	}
	return []appender{
		resp,
		responses.ResponseEvent{Type: "response.created", SequenceNumber: ni, Response: respPtr},
		responses.ResponseEvent{Type: "response.in_progress", SequenceNumber: ni, Response: respPtr, Echo: echoes[0]},
		responses.ResponseEvent{Type: "response.completed", SequenceNumber: ni, Response: respPtr, Echo: echoes[1]},
		responses.ItemEvent{Type: "response.output_item.added", SequenceNumber: ni, OutputIndex: ni, Item: itemPtr},
		responses.PartEvent{Type: "response.content_part.added", SequenceNumber: ni, ItemID: s1, OutputIndex: ni, ContentIndex: ni, Part: part(types[ni%len(types)])},
		responses.TextDelta{Type: "response.output_text.delta", SequenceNumber: ni, ItemID: s1, OutputIndex: ni, Delta: s2},
		responses.TextDone{Type: "response.output_text.done", SequenceNumber: ni, ItemID: s2, ContentIndex: ni, Text: s1},
		responses.ArgsDelta{Type: "response.function_call_arguments.delta", SequenceNumber: ni, ItemID: s1, OutputIndex: ni, Delta: raw},
		responses.ArgsDone{Type: "response.function_call_arguments.done", SequenceNumber: ni, ItemID: s1, OutputIndex: ni, Name: s2, Arguments: raw},
	}
}

var encodeSeeds = []struct {
	s1, s2, raw string
	f           float64
}{
	{"resp_1", "completed", `{"type":"object","properties":{"city":{"type":"string"}}}`, 0.2},
	{"<PTK_CALL> & \u2028 \xff \x01\t\n", "café 😀 <b>", "{\n  \"a\": [1, 2],\n  \"b\": \"<x> \u2028\"\n}", 1e-7},
	{"", "", "", 0},
	{"x", "y", `not json`, 1e21},
	{"x", "y", `"auto"`, -0.5},
	// A schema long enough for the echo's cache, spaced, with HTML.
	{"resp_2", "completed", `{"type": "object", "properties": {"html": {"type": "string", "description": "<b>bold</b> & \u2028 ` + strings.Repeat("long ", 60) + `"}}}`, 0.5},
}

// TestAppendJSON: the response and every event, in every shape, are
// written as encoding/json writes them.
func TestAppendJSON(t *testing.T) {
	// Every shape of the low bits, and a spread of the others.
	var shapes []uint32
	for shape := range uint32(256) {
		shapes = append(shapes, shape, shape*2654435761)
	}
	for _, s := range encodeSeeds {
		for _, shape := range shapes {
			for _, v := range valuesOf(shape, s.s1, s.s2, s.raw, int64(shape), s.f) {
				checkAppend(t, v)
			}
		}
	}
}

func FuzzAppendJSON(f *testing.F) {
	for i, s := range encodeSeeds {
		f.Add(uint32(i*2654435761), s.s1, s.s2, s.raw, int64(i*7), s.f)
	}
	f.Fuzz(func(t *testing.T, shape uint32, s1, s2, raw string, n int64, fl float64) {
		for _, v := range valuesOf(shape, s1, s2, raw, n, fl) {
			checkAppend(t, v)
		}
	})
}

// TestEchoCopied: an event with an Echo writes the echo's bytes from
// instructions on (what the response held when it was made), and its
// own state before them.
func TestEchoCopied(t *testing.T) {
	instr := "be brief"
	resp := &responses.Response{ID: "resp_1", Object: "response", Status: "in_progress", Model: "m", Output: []responses.Item{},
		Instructions: &instr, Tools: []responses.Tool{{Type: "function", Name: "get_weather", Parameters: json.RawMessage(`{ "type": "object" }`)}},
		ToolChoice: json.RawMessage(`"auto"`), Metadata: json.RawMessage(`{}`)}
	echo, ok := resp.Echo(false)
	if !ok {
		t.Fatal("Echo failed")
	}
	later := *resp
	later.Status, later.Tools = "completed", nil
	got, ok := responses.ResponseEvent{Type: "response.completed", SequenceNumber: 7, Response: &later, Echo: echo}.AppendJSON(nil, false)
	if !ok {
		t.Fatal("AppendJSON failed")
	}
	want := `{"type":"response.completed","sequence_number":7,"response":{"id":"resp_1","object":"response","created_at":0,"status":"completed","model":"m","output":[],"usage":null,"error":null,"incomplete_details":null,` +
		`"instructions":"be brief","previous_response_id":null,"parallel_tool_calls":false,"tool_choice":"auto","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}],"temperature":null,"top_p":null,"max_output_tokens":null,"store":false,"metadata":{}}}`
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// A field AppendJSON leaves to encoding/json: no echo.
	bad := *resp
	bad.Metadata = json.RawMessage(`{`)
	if e, ok := bad.Echo(false); ok || e != nil {
		t.Fatalf("Echo of invalid metadata = %v, %v; want nil, false", e, ok)
	}
}

// BenchmarkResponseEvent: a stream's last event, the response written
// whole or with its echo copied (the request's five tools).
func BenchmarkResponseEvent(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Paris"},"unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"Temperature unit"}},"required":["city"],"additionalProperties":false}`)
	var tools []responses.Tool
	for range 5 {
		tools = append(tools, responses.Tool{Type: "function", Name: "get_weather", Description: "Get the current weather for a city.", Parameters: schema})
	}
	resp := &responses.Response{ID: "resp_1", Object: "response", Status: "completed", Model: "m", Tools: tools,
		Output:     []responses.Item{{Type: "message", ID: "msg_1", Role: "assistant", Status: "completed", Content: &responses.Content{Parts: []responses.Part{responses.OutputText("I'll check the weather.")}}}},
		ToolChoice: json.RawMessage(`"auto"`), Metadata: json.RawMessage(`{}`), Usage: &responses.Usage{InputTokens: 900, OutputTokens: 40, TotalTokens: 940}}
	echo, _ := resp.Echo(false)
	for _, c := range []struct {
		name string
		echo *responses.Echo
	}{{"whole", nil}, {"echo", echo}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 8192)
			for b.Loop() {
				buf, _ = responses.ResponseEvent{Type: "response.completed", SequenceNumber: 20, Response: resp, Echo: c.echo}.AppendJSON(buf[:0], false)
			}
		})
	}
}
