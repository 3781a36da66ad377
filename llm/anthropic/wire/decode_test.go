package wire_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/ptkit/ptk/llm/anthropic/wire"
)

// requestSeeds are Messages requests as clients send them (the SDK, Claude
// Code), with every field the type reads, and shapes the one-pass decoder
// leaves to encoding/json. The request Claude Code sent
// (testdata/claude-code-2.1.328.json) is added to them.
var requestSeeds = []string{
	`{"model":"m","max_tokens":5,"system":"You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> ","messages":[{"role":"user","content":[{"type":"text","text":"You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> "},{"type":"text","text":null}]},{"role":"assistant","content":"You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> You are a coding agent. Read the files before you change them; run the tests after. \u00e9 \"quoted\" <b>&</b> "},{"role":"assistant","content":[{"type":"thinking","thinking":"Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> Let me look at the tests first, then change the parser. \u00e9 \"q\" <&> ","signature":"EqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQLEqQBCkgIARABGAIiQL"},{"type":"redacted_thinking","data":"Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFy"},{"type":"text","text":null}]}],"tools":[{"name":"Read","description":"Reads a file from the local filesystem. You can access any file directly by using this tool, and read a range of its lines.","input_schema":{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"number"}},"required":["file_path"]},"cache_control":{"type":"ephemeral"}}, {"type":"web_search_20250305","name":"web_search","max_uses":5}, {"name":"t","input_schema":null,"defer_loading":true}]}`,
	`{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"Be brief.","messages":[{"role":"user","content":"What's the weather in Paris?"}],"tools":[{"name":"get_weather","description":"Get the weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"temperature":0.2,"stream":true}`,
	`{"model":"m","max_tokens":10,"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok"},{"type":"tool_reference","tool_name":"g"}],"is_error":true}]}],"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true},"top_p":0.9,"top_k":40,"stop_sequences":["END",null],"metadata":{"user_id":"u"},"thinking":{"type":"enabled","budget_tokens":2048,"display":"omitted"},"context_management":{"edits":[]},"output_config":{"effort":"high"}}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":null},{"role":"system","content":[]}],"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5},{"name":"t","input_schema":{},"defer_loading":true,"cache_control":{"type":"ephemeral"}}],"system":null,"thinking":null,"tool_choice":null}`,
	` { "model" : "m" , "max_tokens" : 5 , "messages" : [ { "role" : "user" , "content" : "spaced \u00e9 \ud83d\ude00 <b>&amp;</b>" } ] } `,
	`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":5}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":{"type":"text"}}]}`,
	`{"model":"m","max_tokens":1.5,"messages":[]}`,
	`{"Model":"m","max_tokens":1,"messages":[]}`,
	`{"model":"m","max_tokens":1,"max_tokens":2,"messages":[]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`,
	`{"model":"m","max_tokens":1,"messages":[],"stop_sequences":[1]}`,
	"{\"model\":\"m\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"bad \xff utf-8\"}]}",
	`null`,
}

func seeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, s := range requestSeeds {
		out = append(out, []byte(s))
	}
	data, err := os.ReadFile("testdata/claude-code-2.1.328.json")
	if err != nil {
		tb.Fatal(err)
	}
	return append(out, data)
}

// TestUnmarshalRequest: requests read in one pass read to what
// encoding/json reads; Claude Code's and the SDK's are read in one pass.
func TestUnmarshalRequest(t *testing.T) {
	all := seeds(t)
	fast := 0
	for _, data := range all {
		if checkRequest(t, data) {
			fast++
		}
	}
	var r wire.Request
	if !wire.DecodeRequest(all[len(all)-1], &r) {
		t.Error("Claude Code's request was not read in one pass")
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
