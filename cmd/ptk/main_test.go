package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ptkit/ptk/protocol"
)

func runPTK(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

const reply = "Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"Celsius\"}}\n</tool_call>\n" +
	"<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"go.mod\", \"limit\": \"20\"}}</PTK_CALL>\n" +
	"<PTK_CALL>{\"tool\": \"delete_all\", \"args\": {}}</PTK_CALL>\nDone."

func TestParseJSONShape(t *testing.T) {
	code, out, errOut := runPTK(t, reply, "parse", "--tools", "testdata/tools.json", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The output is exactly one JSON object with these keys.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	if keys := slices.Sorted(maps.Keys(raw)); !reflect.DeepEqual(keys, []string{"calls", "diagnostics", "text"}) {
		t.Fatalf("top-level keys = %v", keys)
	}
	var got struct {
		Calls []map[string]json.RawMessage `json:"calls"`
		Text  string                       `json:"text"`
		Diags []map[string]json.RawMessage `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Calls) != 2 {
		t.Fatalf("calls = %d, want 2: %s", len(got.Calls), out)
	}
	for _, c := range got.Calls {
		if keys := slices.Sorted(maps.Keys(c)); !reflect.DeepEqual(keys, []string{"args", "id", "repairs", "tool"}) {
			t.Errorf("call keys = %v", keys)
		}
	}
	if string(got.Calls[0]["tool"]) != `"get_weather"` || string(got.Calls[0]["args"]) != `{"city":"Paris","unit":"celsius"}` {
		t.Errorf("first call = %s %s", got.Calls[0]["tool"], got.Calls[0]["args"])
	}
	if string(got.Calls[1]["args"]) != `{"path":"go.mod","limit":20}` {
		t.Errorf("second call args = %s", got.Calls[1]["args"])
	}
	if got.Text != "Let me check both.\n\n\n\nDone." {
		t.Errorf("text = %q", got.Text)
	}
	var kinds []string
	for _, d := range got.Diags {
		if keys := slices.Sorted(maps.Keys(d)); !reflect.DeepEqual(keys, []string{"kind", "message", "offset"}) {
			t.Errorf("diagnostic keys = %v", keys)
		}
		var k string
		json.Unmarshal(d["kind"], &k)
		kinds = append(kinds, k)
	}
	if !strings.Contains(strings.Join(kinds, ","), "unknown_tool") {
		t.Errorf("no unknown_tool diagnostic in %v", kinds)
	}
}

func TestParseEmptyArraysNotNull(t *testing.T) {
	code, out, _ := runPTK(t, "just prose", "parse", "--json")
	if code != 0 || strings.TrimSpace(out) != `{"calls":[],"text":"just prose","diagnostics":[]}` {
		t.Fatalf("exit %d, output %q", code, out)
	}
}

func TestParseChunkedEqualsWhole(t *testing.T) {
	_, whole, _ := runPTK(t, reply, "parse", "--tools", "testdata/tools.json", "--json")
	for _, n := range []string{"1", "2", "7", "4096"} {
		code, out, errOut := runPTK(t, reply, "parse", "--tools", "testdata/tools.json", "--json", "--chunk", n)
		if code != 0 || out != whole {
			t.Errorf("--chunk %s: exit %d (%s), output differs:\n%s\nwant\n%s", n, code, errOut, out, whole)
		}
	}
}

func TestParseThink(t *testing.T) {
	in := "Maybe <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>? No.\n</think>\nIt is sunny."
	_, plain, _ := runPTK(t, in, "parse", "--tools", "testdata/tools.json", "--json")
	if !strings.Contains(plain, "unopened_think") {
		t.Errorf("without --think: no unopened_think diagnostic in %s", plain)
	}
	code, out, _ := runPTK(t, in, "parse", "--tools", "testdata/tools.json", "--json", "--think")
	if code != 0 || strings.TrimSpace(out) != `{"calls":[],"text":"It is sunny.","diagnostics":[]}` {
		t.Errorf("--think: exit %d, output %s", code, out)
	}
}

func TestParseFileArgAndHumanOutput(t *testing.T) {
	f := filepath.Join(t.TempDir(), "reply.txt")
	if err := os.WriteFile(f, []byte(reply), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runPTK(t, "", "parse", "--tools", "testdata/tools.json", f)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Let me check both.", "call call_1 get_weather", "TOOL_NOT_FOUND"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"parse", "--chunk", "-1"},
		{"parse", "--tools", "testdata/missing.json"},
		{"parse", "a", "b"},
		{"parse", "--nope"},
		{"parse", "testdata/no-such-reply.txt"},
		{"prompt"},
		{"prompt", "--tools", "testdata/missing.json"},
		{"bogus"},
	} {
		code, _, errOut := runPTK(t, "", args...)
		if code != 2 {
			t.Errorf("ptk %v: exit %d, want 2 (stderr %q)", args, code, errOut)
		}
		if !strings.HasPrefix(errOut, "ptk: ") {
			t.Errorf("ptk %v: stderr %q does not say what is wrong", args, errOut)
		}
	}
}

func TestBadToolsFileExit2(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"notjson.json":   "{",
		"noname.json":    `[{"description": "x"}]`,
		"badschema.json": `[{"name": "x", "parameters": {"type": "object", "properties": {"a": {"type": 7}}}}]`,
	}
	for name, body := range files {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(body), 0o600)
		if code, _, errOut := runPTK(t, "x", "parse", "--tools", f); code != 2 {
			t.Errorf("%s: exit %d, want 2 (%s)", name, code, errOut)
		}
	}
}

func TestPromptPrintsTheFormattersPrompt(t *testing.T) {
	code, out, _ := runPTK(t, "", "prompt", "--tools", "testdata/tools.json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	data, _ := os.ReadFile("testdata/tools.json")
	tools, err := protocol.ParseToolDefs(data)
	if err != nil {
		t.Fatal(err)
	}
	want := (protocol.PTK{}).SystemPrompt("", tools) + "\n"
	if out != want {
		t.Errorf("prompt output differs from the formatter's:\n%s", out)
	}
	for _, want := range []string{"<PTK_CALL>", "## read_file", "## get_weather", `"celsius" | "fahrenheit"`} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
}
