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

// The chunks of every recorded stream that carry text, reasoning or a
// call — what a stream is made of — are read by the fast path, as
// encoding/json reads them; the rest (the usage with OpenAI's details, an
// error) may be left to the general decoder, never read otherwise.
func TestFastChunkRecorded(t *testing.T) {
	streams, _ := filepath.Glob("../testdata/stream/*.sse")
	if len(streams) == 0 {
		t.Fatal("no recorded streams")
	}
	fast := 0
	for _, f := range streams {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.ReplaceAll(data, []byte("\r"), nil), []byte("\n")) {
			d, ok := bytes.CutPrefix(line, []byte("data:"))
			d = bytes.TrimSpace(d)
			if !ok || len(d) == 0 || string(d) == "[DONE]" {
				continue
			}
			var want wire.Completion
			if err := json.Unmarshal(d, &want); err != nil {
				continue
			}
			var got wire.Completion
			if !wire.FastChunk(d, &got) {
				if !bytes.Contains(d, []byte(`"error"`)) && !bytes.Contains(d, []byte(`_details":{`)) && !bytes.Contains(d, []byte(`"timings":{`)) {
					t.Errorf("%s: the fast path left %s", filepath.Base(f), d)
				}
				continue
			}
			fast++
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the fast path read %s as\n%+v\nencoding/json as\n%+v", filepath.Base(f), d, got, want)
			}
		}
	}
	if fast < 40 {
		t.Errorf("the fast path read %d recorded chunks", fast)
	}
}

// What the fast path must leave to the general decoder, each read right
// by ChunkReader all the same: the attack is a chunk shaped to make a
// shortcut read it otherwise than encoding/json.
func TestFastChunkLeaves(t *testing.T) {
	head := `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",`
	for _, d := range []string{
		head + `"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`, // two choices
		head + `"Choices":[{"index":0,"delta":{"content":"a"}}]}`,                                     // a known key in another case
		head + `"choices":[{"index":0,"delta":{"content":"a","CONTENT":"b"}}]}`,                       // a duplicate, folded
		head + `"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,                       // a duplicate
		head + `"choices":[{"index":0,"delta":{"content":"a"},"delta":{"role":"x"}}]}`,                // merged by encoding/json
		head + `"choices":[{"index":0,"delta":{"content":["a"]}}]}`,                                   // parts
		head + `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":{"a":1}}}]}}]}`,
		head + `"choices":[{"index":1e0,"delta":{"content":"a"}}]}`,             // a number that is not an integer
		head + `"choices":[{"index":007,"delta":{"content":"a"}}]}`,             // invalid JSON
		head + `"choices":[{"index":0,"delta":{"content":"a\u00"}}]}`,           // a bad escape
		head + `"choices":[{"index":0,"delta":{"content":"a` + "\x01" + `"}}]}`, // a control character
		head + `"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[]}}]}`,
		head + `"choices":[{"index":0,"delta":{"content":"a"}}],"error":{"message":"x"}}`,
		head + `"choices":[{"index":0,"delta":{"content":"a"}}],"x":{"nested":true}}`,
		head + `"choices":[{"index":0,"delta":{"content":"a"}}]} trailing`,
		head + `"cre\u0061ted":5,"choices":[]}`,                               // an escaped key
		head + `"choices":[{"index":0,"delta":{"content":"a"}}],"ſ":1}`,       // a key beyond ASCII
		head + `"choices":[{"index":0,"delta":{"content":"a"}}],"created":2}`, // a duplicate at the top
		head + `"choices":[{"index":0,"delta":{"content":"a"}}],"model":"n"`,  // cut off
		head + `"choices":[null]}`,
		head + `"choices":null}`,
	} {
		var c wire.Completion
		if wire.FastChunk([]byte(d), &c) {
			t.Errorf("the fast path read %s", d)
		}
		var r wire.ChunkReader
		checkChunkReader(t, &r, []byte(d))
	}
	// And what it reads, read right.
	for _, d := range []string{
		head + `"choices":[{"index":0,"delta":{"content":"a\n\"b\" é \u00e9 \ud83d\ude00"}}]}`,
		head + `"system_fingerprint":null,"service_tier":"default","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null,"native_finish_reason":null}],"usage":null}`,
		head + `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}},{"index":1,"function":{"arguments":"{\"a\""}},{"index":2,"function":{"arguments":null}}]}}]}`,
		head + `"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":3}}}`,
		" \n" + head + `"choices":[ { "index" : 0 , "delta" : { } , "finish_reason" : "stop" } ] } ` + "\r\n",
		`{"id":"c1","object":"o","model":"m","created":null,"x":-12,"y":true,"z":false,"choices":[{"index":null,"delta":null}]}`,
	} {
		var c wire.Completion
		if !wire.FastChunk([]byte(d), &c) {
			t.Errorf("the fast path left %s", d)
		}
		var r wire.ChunkReader
		checkChunkReader(t, &r, []byte(d))
		checkChunkReader(t, &r, []byte(d))
	}
}

// FuzzFastChunk holds the fast path alone to encoding/json: whatever it
// reads, it reads as encoding/json does, and it reads nothing that
// encoding/json refuses.
func FuzzFastChunk(f *testing.F) {
	for _, d := range recordedCompletions(f) {
		f.Add(d)
	}
	f.Add([]byte(`{"id":"c","choices":[{"index":0,"delta":{"content":"x"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got wire.Completion
		if !wire.FastChunk(data, &got) {
			return
		}
		var want wire.Completion
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("the fast path read %q, which encoding/json refuses: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the fast path read %q as\n%+v\nencoding/json as\n%+v", data, got, want)
		}
	})
}
