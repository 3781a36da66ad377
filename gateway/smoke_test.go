package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
)

func TestSmoke(t *testing.T) {
	m := llmtest.New(
		llmtest.Text("Let me look.\n<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}\n</PTK_CALL>"),
		llmtest.Text("Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"),
	)
	s, err := New(Config{Resolve: func(name string) (Upstream, error) { return Upstream{Model: m, Mode: agent.ModePTK}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, stream := range []string{"false", "true"} {
		body := `{"model":"m","stream":` + stream + `,"messages":[{"role":"user","content":"weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		t.Logf("%d %s", resp.StatusCode, b)
	}
}
