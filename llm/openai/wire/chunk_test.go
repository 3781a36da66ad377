package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ptkit/ptk/llm/openai/wire"
)

// chunkSeeds are chunks as servers send them: OpenAI, vLLM (reasoning),
// Ollama (reasoning), DeepSeek, llama.cpp; with escapes, surrogate pairs,
// invalid UTF-8; and shapes DecodeChunk leaves to encoding/json.
var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Let me check.\n\u003ctool_call\u003e \"quoted\" \\ \/ \t"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"reasoning_content":"think \ud83d\ude00 \ud83d x \udc00"},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"reasoning":"ollama's way","content":null},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	"{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xc3\xa9 \xff\xfe bad\"},\"finish_reason\":null}]}",
	` { "id" : "c" , "choices" : [ { "index" : 0 , "delta" : { "content" : "spaced" } , "finish_reason" : null } ] } `,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c","ID":"d","choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"id":"c","id":"d","choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"error":{"message":"boom"}}`,
	`{"id":"c","created":01,"choices":[{"index":0,"delta":{"content":"x"}}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"x"}}]} trailing`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"x`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"a\u00"}}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"error":null}`,
}

// TestDecodeChunk: the common chunks are read in one pass, to what
// encoding/json reads from them; the others are left to it.
func TestDecodeChunk(t *testing.T) {
	fast := 0
	for _, s := range chunkSeeds {
		if checkChunk(t, []byte(s)) {
			fast++
		}
	}
	if fast < 7 {
		t.Errorf("only %d of the seeds were read in one pass", fast)
	}
}

func FuzzDecodeChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkChunk(t, data) })
}

// checkChunk checks that what DecodeChunk reads, encoding/json reads the
// same; it reports whether DecodeChunk read it.
func checkChunk(t *testing.T, data []byte) bool {
	var fast wire.Completion
	if !wire.DecodeChunk(data, &fast) {
		return false
	}
	var slow wire.Completion
	if err := json.Unmarshal(data, &slow); err != nil {
		t.Fatalf("DecodeChunk read %q, which encoding/json refuses: %v", data, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("DecodeChunk read %q as\n%+v\nencoding/json as\n%+v", data, fast, slow)
	}
	return true
}
