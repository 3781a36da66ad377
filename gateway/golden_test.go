package gateway

import (
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite the golden files in testdata")

// What a model taught the protocol is sent, exactly: the system prompt with
// the client's instructions and the tools, the client's earlier call
// written as a PTK call, its result as a PTK_RESULT, the tool choice said
// at the end of the last message; then, after an answer in prose, the
// sharper instruction.
func TestConversationGolden(t *testing.T) {
	m := llmtest.New(llmtest.Text("It is sunny in Paris."), llmtest.Text("Still sunny."))
	s, err := New(Config{
		Resolve: func(string) (Upstream, error) { return Upstream{Model: m, Mode: agent.ModePTK}, nil },
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	body := `{"model": "gemma3:4b", "parallel_tool_calls": false,
	  "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
	  "messages": [
	    {"role": "system", "content": "You are a weather assistant."},
	    {"role": "user", "content": "Weather in Paris, then in Rome?"},
	    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_a1", "type": "function",
	      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
	    {"role": "tool", "tool_call_id": "call_a1", "content": "sunny, 24 °C"}],
	  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.",
	    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}}}]}`
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(answer), `"content":"Still sunny."`) {
		t.Fatalf("%d %s", resp.StatusCode, answer)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2 (one re-ask)", len(reqs))
	}
	var b strings.Builder
	for _, msg := range reqs[1].Messages {
		b.WriteString("=== " + string(msg.Role) + "\n" + msg.Content + "\n")
	}
	got := b.String()
	path := filepath.Join("testdata", "conversation.golden")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update-golden to create it)", err)
	}
	if got != string(want) {
		t.Errorf("the model was sent something else than %s (run with -update-golden if the change is intended):\n%s", path, got)
	}
}
