package responses_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/ptkit/ptk/llm/openai/responses"
)

// requestSeeds are Responses requests as clients send them (the SDK,
// Codex), with every field the type reads, and shapes the one-pass
// decoder leaves to encoding/json. The request Codex sent
// (testdata/codex-0.169.0.json) is added to them.
var requestSeeds = []string{
	`{"model":"m","instructions":"You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> ","input":[{"role":"user","content":"Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> "},{"type":"message","role":"user","content":[{"type":"input_text","text":"Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> "},{"type":"input_text","text":null}]},{"type":"reasoning","summary":[{"type":"summary_text","text":"Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> "}],"encrypted_content":"gAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABogAAAAABo"},{"type":"function_call","call_id":"c1","name":"shell","arguments":"{\"command\":[\"ls\"],\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}"},{"type":"function_call_output","call_id":"c1","output":"Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> "}],"tools":[{"type":"function","name":"shell","description":"Runs a shell command and returns its output. Use it to read files, list directories and run the project's tests.","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]},"strict":false}, {"type":"namespace","name":"mcp","tools":[{"type":"function","name":"f","parameters":{},"strict":true}]}, {"type":"web_search"}]}`,
	`{"model":"gpt-5","instructions":"Be brief.","input":"What's the weather in Paris?","tools":[{"type":"function","name":"get_weather","description":"Get the weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":false}],"temperature":0.2,"store":false,"stream":true}`,
	`{"model":"m","input":[{"role":"developer","content":"dev"},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"},{"type":"input_image","image_url":"data:,"},{"type":"input_file","file_id":"f","filename":"a.txt"}]},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"e"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}","namespace":"ns","status":"completed","id":"fc_1"},{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"ok"}]},{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a","annotations":[]},{"type":"refusal","refusal":"no"}]}],"tools":[{"type":"namespace","name":"ns","tools":[{"type":"function","name":"f","parameters":null}]},{"type":"web_search"}],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"f"}]},"parallel_tool_calls":false,"max_output_tokens":100,"top_p":1,"previous_response_id":"resp_1","reasoning":{"effort":"low"},"include":["reasoning.encrypted_content"],"prompt_cache_key":"k","metadata":{"a":"b"},"text":{"format":{"type":"json_schema","name":"x","schema":{}}}}`,
	`{"model":"m","input":null,"instructions":null,"tools":null,"text":null,"store":null}`,
	` { "model" : "m" , "input" : [ ] , "include" : [ null ] } `,
	`{"model":"m","input":5}`,
	`{"model":"m","input":[{"type":"message","role":"user","content":7}]}`,
	`{"model":"m","input":"x","max_output_tokens":1.5}`,
	`{"Model":"m","input":"x"}`,
	`{"model":"m","input":"x","input":"y"}`,
	"{\"model\":\"m\",\"input\":\"bad \xff utf-8\"}",
	`null`,
}

func seeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, s := range requestSeeds {
		out = append(out, []byte(s))
	}
	data, err := os.ReadFile("testdata/codex-0.169.0.json")
	if err != nil {
		tb.Fatal(err)
	}
	return append(out, data)
}

// TestUnmarshalRequest: requests read in one pass read to what
// encoding/json reads; Codex's and the SDK's are read in one pass.
func TestUnmarshalRequest(t *testing.T) {
	all := seeds(t)
	fast := 0
	for _, data := range all {
		if checkRequest(t, data) {
			fast++
		}
	}
	var r responses.Request
	if !responses.DecodeRequest(all[len(all)-1], &r) {
		t.Error("Codex's request was not read in one pass")
	}
	if fast < 5 {
		t.Errorf("only %d of the seeds were read in one pass", fast)
	}
}

func FuzzUnmarshalRequest(f *testing.F) {
	for _, data := range seeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkRequest(t, data) })
}

// checkRequest checks that UnmarshalRequest gives encoding/json's result
// and error, and that what the one-pass decoder reads, encoding/json reads
// the same; it reports whether the one-pass decoder read it.
func checkRequest(t *testing.T, data []byte) bool {
	t.Helper()
	var slow responses.Request
	slowErr := json.Unmarshal(data, &slow)
	// Three times, each from its own copy: the tools are seen, kept, and
	// taken from the memo.
	for range 3 {
		var viaAPI responses.Request
		apiErr := responses.UnmarshalRequest(bytes.Clone(data), &viaAPI)
		if (slowErr == nil) != (apiErr == nil) || slowErr != nil && slowErr.Error() != apiErr.Error() {
			t.Fatalf("UnmarshalRequest(%q): error %v, encoding/json %v", data, apiErr, slowErr)
		}
		if slowErr == nil && !reflect.DeepEqual(slow, viaAPI) {
			t.Fatalf("UnmarshalRequest read %q as\n%+v\nencoding/json as\n%+v", data, viaAPI, slow)
		}
	}
	var fast responses.Request
	if !responses.DecodeRequest(data, &fast) {
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
