package wire_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ptkit/ptk/llm/openai/wire"
)

// requestSeeds are Chat Completions requests as clients send them (the
// OpenAI SDKs, LangChain, opencode), with every field the type reads, and
// shapes the one-pass decoder leaves to encoding/json.
var requestSeeds = []string{
	`{"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"What's the weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Get the weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}}],"tool_choice":"auto","temperature":0.2,"stream":true,"stream_options":{"include_usage":true}}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:,"}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"call_1","content":"done"}],"parallel_tool_calls":false,"max_completion_tokens":100,"max_tokens":50,"n":1,"stop":["\n\n"],"user":"u-1","metadata":{"k":"v"}}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a": [1, 2]}}}]},{"role":"function","name":"f","content":"x"}],"tool_choice":{"type":"function","function":{"name":"f"}},"stop":"END","temperature":null,"stream_options":null}`,
	` { "model" : "m" , "messages" : [ { "role" : "user" , "content" : "spaced \u00e9 \ud83d\ude00 <b>&amp;</b>" } ] } `,
	`{"model":"m","messages":[{"role":"user","content":""}],"tools":[],"stream":false}`,
	`{"model":"m","messages":[{"role":"system","content":"You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> "},{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file of the workspace, whole or a range of its lines, and return its text with line numbers.","parameters":{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"}},"required":["path"]},"strict":false}}, {"type":"function","function":{"name":"ls","parameters":null}}, null]}`,
	`{"model":"m","messages":[null,{"role":"user","content":[]}],"tools":null}`,
	`{"Model":"m","messages":[]}`,
	`{"model":"m","model":"n","messages":[]}`,
	`{"model":"m","messages":[{"role":"user","content":42}]}`,
	`{"model":"m","messages":[{"role":"user","content":[1,2]}]}`,
	`{"model":"m","messages":[],"max_tokens":1.5}`,
	`{"model":"m","messages":[],"temperature":1e400}`,
	`{"model":"m","messages":[],"n":-0}`,
	`{"model":"m","messages":[{"role":"user","content":"a"}],"extra":{"deep":[[[{"x":null}]]]}}`,
	`{"model":"m","messages":[{"role":"user","content":"a"}]} trailing`,
	`{"model":"m\u0000","messages":[{"role":"user","content":"caf\u00e9"}]}`,
	"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"bad \xff utf-8\"}]}",
	`null`,
	`[]`,
}

// TestUnmarshalRequest: requests read in one pass read to what
// encoding/json reads; the seeds in real clients' shapes are read in one
// pass.
func TestUnmarshalRequest(t *testing.T) {
	fast := 0
	for _, s := range requestSeeds {
		if checkRequest(t, []byte(s)) {
			fast++
		}
	}
	if fast < 6 {
		t.Errorf("only %d of the seeds were read in one pass", fast)
	}
}

func FuzzUnmarshalRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkRequest(t, data) })
}

// checkRequest checks that what the one-pass decoder reads, encoding/json
// reads the same, and that UnmarshalRequest gives encoding/json's result
// and error; it reports whether the one-pass decoder read it.
func checkRequest(t *testing.T, data []byte) bool {
	t.Helper()
	var slow wire.Request
	slowErr := json.Unmarshal(data, &slow)
	// Three times, each from its own copy: the tools are seen, kept, and
	// taken from the memo.
	for range 3 {
		var viaAPI wire.Request
		apiErr := wire.UnmarshalRequest(bytes.Clone(data), &viaAPI)
		if (slowErr == nil) != (apiErr == nil) || slowErr != nil && slowErr.Error() != apiErr.Error() {
			t.Fatalf("UnmarshalRequest(%q): error %v, encoding/json %v", data, apiErr, slowErr)
		}
		if slowErr == nil && !reflect.DeepEqual(slow, viaAPI) {
			t.Fatalf("UnmarshalRequest read %q as\n%+v\nencoding/json as\n%+v", data, viaAPI, slow)
		}
	}
	var fast wire.Request
	if !wire.DecodeRequest(data, &fast) {
		return false
	}
	if slowErr != nil {
		t.Fatalf("the one-pass decoder read %q, which encoding/json refuses: %v", data, slowErr)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("the one-pass decoder read %q as\n%+v\nencoding/json as\n%+v", data, fast, slow)
	}
	return true
}

// completionSeeds are whole answers and stream chunks as servers send
// them: OpenAI, vLLM and Ollama (reasoning), DeepSeek, llama.cpp,
// OpenRouter; escapes, surrogate pairs, invalid UTF-8; and shapes the
// one-pass decoder leaves to encoding/json. The provider tests' recorded
// answers and streams are added to them.
var completionSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Let me check.\n\u003ctool_call\u003e \"quoted\" \\ \/ \t"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"reasoning_content":"think \ud83d\ude00 \ud83d x \udc00"},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"reasoning":"ollama's way","content":null},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	"{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xc3\xa9 \xff\xfe bad\"},\"finish_reason\":null}]}",
	` { "id" : "c" , "choices" : [ { "index" : 0 , "delta" : { "content" : "spaced" } , "finish_reason" : null } ] } `,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":1},"prompt_cache_hit_tokens":1}}`,
	`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}],"refusal":null},"logprobs":{"content":[]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
	`{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"image","text":"b"},{"type":"text","text":"c"}],"reasoning_content":5}}]}`,
	`{"id":"c","ID":"d","choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"id":"c","id":"d","choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"error":{"message":"boom"}}`,
	`{"object":"error","message":"vLLM's way"}`,
	`{"id":"c","created":01,"choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"id":"c","created":-5,"choices":[{"index":1.0,"delta":{"content":"x"}}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"x"}}]} trailing`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"x`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"a\u00"}}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"error":null}`,
}

// recordedCompletions adds the provider tests' recorded answers and the
// data of their recorded streams.
func recordedCompletions(tb testing.TB) [][]byte {
	var out [][]byte
	for _, s := range completionSeeds {
		out = append(out, []byte(s))
	}
	files, _ := filepath.Glob("../testdata/generate/*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	streams, _ := filepath.Glob("../testdata/stream/*.sse")
	for _, f := range streams {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.ReplaceAll(data, []byte("\r"), nil), []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(bytes.TrimSpace(d)) > 0 && string(bytes.TrimSpace(d)) != "[DONE]" {
				out = append(out, bytes.TrimSpace(d))
			}
		}
	}
	if len(files) == 0 || len(streams) == 0 {
		tb.Fatal("no recorded answers or streams in ../testdata")
	}
	return out
}

// TestUnmarshalCompletion: answers and chunks read in one pass read to what
// encoding/json reads; the common ones are read in one pass.
func TestUnmarshalCompletion(t *testing.T) {
	fast, all := 0, recordedCompletions(t)
	for _, data := range all {
		if checkCompletion(t, data) {
			fast++
		}
	}
	if fast < len(all)*2/3 {
		t.Errorf("only %d of %d answers and chunks were read in one pass", fast, len(all))
	}
}

func FuzzUnmarshalCompletion(f *testing.F) {
	for _, data := range recordedCompletions(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkCompletion(t, data) })
}

func checkCompletion(t *testing.T, data []byte) bool {
	t.Helper()
	var slow, viaAPI wire.Completion
	slowErr := json.Unmarshal(data, &slow)
	apiErr := wire.UnmarshalCompletion(data, &viaAPI)
	if (slowErr == nil) != (apiErr == nil) || slowErr != nil && slowErr.Error() != apiErr.Error() {
		t.Fatalf("UnmarshalCompletion(%q): error %v, encoding/json %v", data, apiErr, slowErr)
	}
	if slowErr == nil && !reflect.DeepEqual(slow, viaAPI) {
		t.Fatalf("UnmarshalCompletion read %q as\n%+v\nencoding/json as\n%+v", data, viaAPI, slow)
	}
	var fast wire.Completion
	if !wire.DecodeCompletion(data, &fast) {
		return false
	}
	if slowErr != nil {
		t.Fatalf("the one-pass decoder read %q, which encoding/json refuses: %v", data, slowErr)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("the one-pass decoder read %q as\n%+v\nencoding/json as\n%+v", data, fast, slow)
	}
	return true
}

// TestChunkReader: a stream's chunks read one after another by one
// ChunkReader read to what encoding/json reads from each, whatever the
// chunk before them.
func TestChunkReader(t *testing.T) {
	all := recordedCompletions(t)
	var r wire.ChunkReader
	for _, data := range all {
		checkChunkReader(t, &r, data)
	}
	// And each after every other, for the strings reused from the one
	// before.
	for _, a := range all[:24] {
		for _, b := range all {
			var r wire.ChunkReader
			checkChunkReader(t, &r, a)
			checkChunkReader(t, &r, b)
		}
	}
}

func FuzzChunkReader(f *testing.F) {
	all := recordedCompletions(f)
	for i, data := range all {
		f.Add(all[(i+1)%len(all)], data)
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var r wire.ChunkReader
		checkChunkReader(t, &r, first)
		checkChunkReader(t, &r, second)
		checkChunkReader(t, &r, first)
	})
}

func checkChunkReader(t *testing.T, r *wire.ChunkReader, data []byte) {
	t.Helper()
	var slow wire.Completion
	slowErr := json.Unmarshal(data, &slow)
	c, err := r.Read(data)
	if (slowErr == nil) != (err == nil) || slowErr != nil && slowErr.Error() != err.Error() {
		t.Fatalf("ChunkReader.Read(%q): error %v, encoding/json %v", data, err, slowErr)
	}
	if err == nil && !reflect.DeepEqual(*c, slow) {
		t.Fatalf("ChunkReader read %q as\n%+v\nencoding/json as\n%+v", data, *c, slow)
	}
}
