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

// A stream's chunks share the bytes around their choices, which the reader
// reads once: in OpenAI's key order (before) and in sorted order (after).
// A chunk that shares them and then differs — a key again, a field
// missing, a usage — is read as encoding/json reads it all the same.
func TestChunkReaderRegions(t *testing.T) {
	const (
		head = `{"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","system_fingerprint":"fp","choices":`
		tail = `,"created":7,"id":"c1","model":"m","object":"chat.completion.chunk"}`
	)
	choice := func(text string) string {
		return `[{"index":0,"delta":{"content":"` + text + `"},"logprobs":null,"finish_reason":null}]`
	}
	for _, tt := range []struct {
		name          string
		chunks        []string
		before, after string // what the reader remembers at the end
	}{
		{"OpenAI's order", []string{head + choice("a") + `}`, head + choice("b") + `}`, head + choice("c") + `}`}, head, `}`},
		{"sorted", []string{`{"choices":` + choice("a") + tail, `{"choices":` + choice("b") + tail, `{"choices":` + choice("c") + tail}, `{"choices":`, tail},
		{"a key again after", []string{head + choice("a") + `}`, head + choice("b") + `,"id":"c2"}`, head + choice("c") + `,"model":"n"}`}, head, `}`},
		{"a key again before", []string{`{"choices":` + choice("a") + tail, `{"id":"x","choices":` + choice("b") + tail}, `{"choices":`, tail},
		{"a field missing", []string{head + choice("a") + `}`, `{"id":"c1","choices":` + choice("b") + `}`, head + choice("c") + `}`}, head, `}`},
		{"the usage", []string{head + choice("a") + `,"usage":null}`, head + `[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`, head + choice("c") + `,"usage":null}`}, head, `,"usage":null}`},
		{"the choices again", []string{`{"choices":` + choice("a") + tail, `{"choices":` + choice("b") + `,"choices":[]` + tail}, `{"choices":`, tail},
		{"cut off", []string{head + choice("a") + `}`, head + choice("b"), head + choice("c") + `} x`}, head, `}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r wire.ChunkReader
			for _, c := range tt.chunks {
				checkChunkReader(t, &r, []byte(c))
			}
			if before, after := r.Regions(); before != tt.before || after != tt.after {
				t.Errorf("the reader remembers %q and %q, want %q and %q", before, after, tt.before, tt.after)
			}
		})
	}
}

// FuzzChunkReaderRegions reads a chunk, then one with its bytes before (or
// after) a cut and others after (or before) it: what the reader
// remembers of the first is used for the second only when it reads the
// same.
func FuzzChunkReaderRegions(f *testing.F) {
	all := recordedCompletions(f)
	for i, data := range all {
		f.Add(data, uint16(len(data)/2), all[(i+1)%len(all)][len(all[(i+1)%len(all)])/2:])
	}
	f.Fuzz(func(t *testing.T, first []byte, cut uint16, other []byte) {
		n := min(int(cut), len(first))
		var r wire.ChunkReader
		checkChunkReader(t, &r, first)
		checkChunkReader(t, &r, append(append([]byte(nil), first[:n]...), other...))
		checkChunkReader(t, &r, first)
		checkChunkReader(t, &r, append(append([]byte(nil), other...), first[n:]...))
	})
}
