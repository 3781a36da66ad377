package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

// Forward sends the body byte for byte, with the key, and hands back the
// answer unread; a failure is classified and retried like any call.
func TestForward(t *testing.T) {
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":7,"response_format":{"type":"json_object"}}`
	var got []byte
	var auth, accept string
	c, n := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		auth, accept = r.Header.Get("Authorization"), r.Header.Get("Accept")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"x\":1}\n\ndata: [DONE]\n\n")
	}, WithAPIKey("sk-test"))
	resp, err := c.Forward(context.Background(), []byte(body), true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if string(got) != body || auth != "Bearer sk-test" || accept != "text/event-stream" {
		t.Errorf("sent %s with Authorization %q, Accept %q", got, auth, accept)
	}
	if string(answer) != "data: {\"x\":1}\n\ndata: [DONE]\n\n" || n.Load() != 1 {
		t.Errorf("answer %q after %d requests", answer, n.Load())
	}
}

func TestForwardErrors(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		kind     error
		requests int32
	}{
		{"tools unsupported", 400, `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools"}}`, llm.ErrToolsUnsupported, 1},
		{"bad request", 400, `{"error":{"message":"messages: field required"}}`, llm.ErrBadRequest, 1},
		{"server error, retried", 500, `{"error":{"message":"boom"}}`, llm.ErrServer, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, n := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			_, err := c.Forward(context.Background(), []byte(`{}`), false)
			var le *llm.Error
			if !errors.Is(err, tt.kind) || !errors.As(err, &le) || le.Status != tt.status || n.Load() != tt.requests {
				t.Errorf("err %v after %d requests; want %v, HTTP %d, %d requests", err, n.Load(), tt.kind, tt.status, tt.requests)
			}
		})
	}
}

func TestModels(t *testing.T) {
	url, _ := providertest.Serve(t, "GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"bad key"}}`)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"qwen3:8b","object":"model"},{"id":"llama3.2","object":"model"},{"id":"qwen3:8b"}]}`)
	})
	ids, err := New(url+"/v1", WithAPIKey("k")).Models(context.Background())
	if err != nil || len(ids) != 2 || ids[0] != "llama3.2" || ids[1] != "qwen3:8b" {
		t.Errorf("Models = %v, %v", ids, err)
	}
	if _, err := New(url + "/v1").Models(context.Background()); !errors.Is(err, llm.ErrAuth) {
		t.Errorf("no key: %v, want ErrAuth", err)
	}
}

// Extra fields go into the body after the client's own, which they never
// replace.
func TestRequestExtra(t *testing.T) {
	req := ask
	req.Extra = map[string]json.RawMessage{
		"seed":            json.RawMessage(`7`),
		"response_format": json.RawMessage(`{"type":"json_object"}`),
		"model":           json.RawMessage(`"other"`),
		"broken":          json.RawMessage(`{`),
	}
	body, err := New("http://127.0.0.1").marshal(req, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"What is the capital of France?"}],"response_format":{"type":"json_object"},"seed":7}`
	if string(body) != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
}

// A stream request answered with a page that is no event stream fails
// with what the page said; an event stream with another type is read.
func TestStreamOtherContentType(t *testing.T) {
	page, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>502 Bad Gateway (nginx)</body></html>")
	}, WithMaxRetries(0))
	var err error
	for _, e := range page.Stream(context.Background(), ask) {
		if e != nil {
			err = e
		}
	}
	var le *llm.Error
	if !errors.Is(err, llm.ErrBadResponse) || !errors.As(err, &le) || !strings.Contains(le.Message, "502 Bad Gateway (nginx)") {
		t.Errorf("HTML page: %v", err)
	}
	plain, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Paris\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	var text string
	for ch, e := range plain.Stream(context.Background(), ask) {
		if e != nil {
			t.Fatal(e)
		}
		text += ch.Text
	}
	if text != "Paris" {
		t.Errorf("text/plain event stream: %q", text)
	}
}
