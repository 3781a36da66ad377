package gateway_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
)

// The decoders keep the tools and the long texts clients send again and
// again (jsonfast.Memo). Two clients whose tools and system prompts begin
// with the same bytes, and differ after, each get their own, on every API,
// with their requests at once: the model is shown the system prompt and
// the tools of the request it answers, never the other client's.
func TestMemoNoCrossTalk(t *testing.T) {
	t.Parallel()
	model := newTextModel(func(req llm.Request) said {
		// The model repeats which client's prompt and tools it was shown.
		sys := systemPrompt(req)
		var saw []string
		for _, c := range []string{"client-a", "client-b"} {
			if strings.Contains(sys, "prompt of "+c) {
				saw = append(saw, "prompt:"+c)
			}
			if strings.Contains(sys, "schema_of_"+c) {
				saw = append(saw, "tools:"+c)
			}
		}
		return said{text: strings.Join(saw, " ")}
	})
	url := agentGateway(t, model, agent.ModePTK)
	// The same first 64 bytes and more, then each client's own.
	shared := strings.Repeat("You are a careful coding agent; read before you write. ", 6)
	desc := strings.Repeat("Run a shell command in the workspace and return its output. ", 5)
	schema := func(c string) string {
		return `{"type":"object","properties":{"command":{"type":"string"},"schema_of_` + c + `":{"type":"string"}}}`
	}
	bodies := map[string]map[string]string{}
	for _, c := range []string{"client-a", "client-b"} {
		system := shared + "This is the prompt of " + c + "."
		bodies[c] = map[string]string{
			"/v1/chat/completions": fmt.Sprintf(`{"model":"local-model","messages":[{"role":"system","content":%q},{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"bash","description":%q,"parameters":%s}}]}`, system, desc, schema(c)),
			"/v1/messages":         fmt.Sprintf(`{"model":"local-model","max_tokens":100,"system":%q,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"bash","description":%q,"input_schema":%s}]}`, system, desc, schema(c)),
			"/v1/responses":        fmt.Sprintf(`{"model":"local-model","instructions":%q,"input":"hi","tools":[{"type":"function","name":"bash","description":%q,"parameters":%s}]}`, system, desc, schema(c)),
		}
	}
	var wg sync.WaitGroup
	for _, c := range []string{"client-a", "client-b"} {
		for path, body := range bodies[c] {
			wg.Go(func() {
				want := "prompt:" + c + " tools:" + c
				other := map[string]string{"client-a": "client-b", "client-b": "client-a"}[c]
				for range 6 {
					status, _, out := post(t, url+path, body, "anthropic-version", "2023-06-01")
					if status != 200 || !strings.Contains(string(out), want) ||
						strings.Contains(string(out), "prompt:"+other) || strings.Contains(string(out), "tools:"+other) {
						t.Errorf("%s %s: %d %s, want the model to have seen %q only", c, path, status, out, want)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}
