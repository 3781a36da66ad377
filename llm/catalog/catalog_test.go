package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm"
)

func TestDefaultCatalog(t *testing.T) {
	c := Default()
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Models[c.DefaultModel]; !ok || len(c.Models) < 10 {
		t.Errorf("default model %q, %d models", c.DefaultModel, len(c.Models))
	}
	for _, name := range c.Names() {
		p := c.Providers[c.Models[name].Provider]
		if _, ok := builders[cmpOr(p.API)]; !ok {
			t.Errorf("model %s: no client for API %q", name, p.API)
		}
	}
}

func cmpOr(api string) string {
	if api == "" {
		return "openai"
	}
	return api
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		`{"models": {"m": {"model_id": "x", "tool_protocol": "native"}}}`,
		`{"models": {"m": {"provider": "p", "tool_protocol": "maybe"}}}`,
		`{"models": {"m": {"provider": "p", "tool_protocol": "ptk", "cost": {"input": -1}}}}`,
		`{"providers": {"p": {"api": "soap", "api_base": "http://x"}}}`,
		`{"providers": {"p": {"api": "openai"}}}`,
		`{"models": {}, "extra": 1}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestMergeAndResolve(t *testing.T) {
	var got struct {
		Model string `json:"model"`
	}
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &got)
		auth = r.Header.Get("Authorization")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"local-7b","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000000,"completion_tokens":500000}}`)
	}))
	defer srv.Close()
	user, err := Parse([]byte(`{
		"default_model": "mine",
		"providers": {"local": {"api": "openai", "api_base": "` + srv.URL + `/v1", "api_key_env": "LOCAL_KEY"}},
		"models": {
			"mine": {"provider": "local", "model_id": "local-7b", "cost": {"input": 1, "output": 4}, "tool_protocol": "ptk", "streaming": true},
			"gpt-4o-mini": {"provider": "local", "model_id": "cheap", "cost": {"input": 0, "output": 0}, "tool_protocol": "native"}
		}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := Default().Merge(user)
	if err := c.Check(); err != nil || c.DefaultModel != "mine" || c.Models["gpt-4o-mini"].ModelID != "cheap" || c.Models["gpt-4o"].ModelID != "gpt-4o" {
		t.Fatalf("merged: %v, default %q", err, c.DefaultModel)
	}
	m, err := c.Resolve("mine", Options{Getenv: func(k string) string { return map[string]string{"LOCAL_KEY": "sk-local"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), llm.Request{Model: "ignored", Messages: nil})
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "local-7b" || auth != "Bearer sk-local" || math.Abs(resp.Cost-3) > 1e-12 {
		t.Errorf("model %q, auth %q, cost %v; want local-7b, the key from LOCAL_KEY, $3", got.Model, auth, resp.Cost)
	}
	if ts, ok := m.(llm.ToolSupporter); !ok || ts.SupportsNativeTools() {
		t.Error("a ptk model says it takes native tools")
	}
	if _, err := c.Resolve("nope", Options{}); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown: %v", err)
	}
	// --api-key and --base-url win over the catalog.
	m, _ = c.Resolve("mine", Options{APIKey: "sk-flag", BaseURL: srv.URL + "/v1"})
	m.Generate(context.Background(), llm.Request{})
	if auth != "Bearer sk-flag" {
		t.Errorf("auth %q, want the flag's key", auth)
	}
}
