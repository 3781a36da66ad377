package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/browser"
	"github.com/ptkit/ptk/llm/replay"
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
	if ts, ok := llm.As[llm.ToolSupporter](m); !ok || ts.SupportsNativeTools() {
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

// TestCapabilitiesSurviveWrappers is `ptk run --max-cost 0.01 --model a,b
// --record`: a catalog model's price and base URL, which the budget's
// look-ahead and the native-tools memory need, are found through Fallback
// and the recorder, and through a replay of the recording.
func TestCapabilitiesSurviveWrappers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"text":"hi","finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	c, err := Parse([]byte(`{
		"providers": {
			"local": {"api": "completions", "api_base": "` + srv.URL + `/v1/"},
			"cloud": {"api": "anthropic", "api_base": "http://127.0.0.1:9/anthropic"}
		},
		"models": {
			"a": {"provider": "local", "model_id": "a-7b", "cost": {"input": 2, "output": 8, "cache_read": 1}, "tool_protocol": "ptk"},
			"b": {"provider": "local", "model_id": "b-7b", "cost": {"input": 3, "output": 6}, "tool_protocol": "native"},
			"c": {"provider": "cloud", "model_id": "c", "cost": {"input": 1, "output": 1}, "tool_protocol": "native"}
		}}`))
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(name string) llm.Model {
		m, err := c.Resolve(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := resolve("a"), resolve("b")
	base := srv.URL + "/v1"
	if p, ok := llm.PriceOf(a); !ok || p != (llm.Price{Input: 2, Output: 8, CacheRead: 1}) {
		t.Errorf("PriceOf(catalog entry) = %v, %v", p, ok)
	}
	if got := llm.BaseURLOf(a); got != base {
		t.Errorf("BaseURLOf(catalog entry) = %q, want %q", got, base)
	}

	var rec strings.Builder
	f := replay.Record(llm.Fallback(a, b), &rec)
	// The lowest price of each kind: a lower bound of what a call costs
	// whichever model answers (a's cache price 1, b's cache priced as
	// its input, 3).
	want := llm.Price{Input: 2, Output: 6, CacheRead: 1, CacheWrite: 2}
	if p, ok := llm.PriceOf(f); !ok || p != want {
		t.Errorf("PriceOf(Record(Fallback(a, b))) = %v, %v; want %v", p, ok, want)
	}
	if got := llm.BaseURLOf(f); got != base {
		t.Errorf("BaseURLOf(Record(Fallback(a, b))) = %q, want %q", got, base)
	}
	if ts, ok := llm.As[llm.ToolSupporter](f); !ok || ts.SupportsNativeTools() {
		t.Error("a fallback with a ptk model claims native tools")
	}
	// Two servers: no one base URL.
	if got := llm.BaseURLOf(llm.Fallback(a, resolve("c"))); got != "" {
		t.Errorf("BaseURLOf(Fallback over two servers) = %q, want none", got)
	}
	// A model with no known price may be free: the lower bound is zero,
	// not a's price; with no price at all, there is none.
	unpriced := Named(resolve("c").(llm.Unwrapper).Unwrap(), "c")
	if p, ok := llm.PriceOf(llm.Fallback(a, unpriced)); !ok || p != (llm.Price{}) {
		t.Errorf("PriceOf(Fallback(a, unpriced)) = %v, %v; want a zero price", p, ok)
	}
	if p, ok := llm.PriceOf(llm.Fallback(unpriced, unpriced)); ok {
		t.Errorf("PriceOf(Fallback of unpriced models) = %v, want none", p)
	}

	// The recording says what the player needs to say the same.
	if _, err := f.Generate(context.Background(), llm.Request{Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	p, err := replay.Load(strings.NewReader(rec.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := llm.PriceOf(p); !ok || got != want {
		t.Errorf("PriceOf(replay) = %v, %v; want %v (recording: %s)", got, ok, want, rec.String())
	}
	if got := llm.BaseURLOf(p); got != base {
		t.Errorf("BaseURLOf(replay) = %q, want %q", got, base)
	}
	if ts, ok := llm.As[llm.ToolSupporter](p); !ok || ts.SupportsNativeTools() {
		t.Error("the replay of a ptk model claims native tools")
	}
}

// seedLLMS is the LLMS.json of the seed design (ptool_framework's
// architecture), as it is written there.
const seedLLMS = `{
  "default_model": "deepseek-v3",
  "models": {
    "deepseek-v3": {
      "provider": "together",
      "model_id": "deepseek-ai/DeepSeek-V3",
      "cost": {"input": 0.0005, "output": 0.001}
    },
    "gpt-4o": {
      "provider": "openai",
      "model_id": "gpt-4o",
      "cost": {"input": 0.005, "output": 0.015}
    }
  },
  "providers": {
    "together": {
      "api_base": "https://api.together.xyz/v1",
      "env_key": "TOGETHER_API_KEY"
    }
  }
}`

func TestSeedLLMSJSON(t *testing.T) {
	seed, err := Parse([]byte(seedLLMS))
	if err != nil {
		t.Fatal(err)
	}
	c := Default().Merge(seed)
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if got := c.Models["gpt-4o"].Cost; math.Abs(got.Input-5) > 1e-9 || math.Abs(got.Output-15) > 1e-9 {
		t.Errorf("gpt-4o costs %+v per million tokens, want $5 / $15", got)
	}
	if got := c.Models["deepseek-v3"].Cost; math.Abs(got.Input-0.5) > 1e-9 || math.Abs(got.Output-1) > 1e-9 {
		t.Errorf("deepseek-v3 costs %+v per million tokens, want $0.5 / $1", got)
	}
	if p := c.Providers["together"]; p.APIKeyEnv != "TOGETHER_API_KEY" || p.APIBase != "https://api.together.xyz/v1" {
		t.Errorf("together = %+v", p)
	}
	m, err := c.Resolve("gpt-4o", Options{Getenv: func(string) string { return "k" }})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := llm.PriceOf(m); !ok || math.Abs(p.Cost(ptk.Usage{PromptTokens: 1000, CompletionTokens: 1000})-0.02) > 1e-12 {
		t.Errorf("1,000 tokens in and out cost %v, want $0.02", p.Cost(ptk.Usage{PromptTokens: 1000, CompletionTokens: 1000}))
	}
	// ptk's own format keeps its prices per million, and env_key is only
	// another name for api_key_env there
	own, err := Parse([]byte(`{"models": {"m": {"provider": "p", "tool_protocol": "native", "cost": {"input": 2}}},
		"providers": {"p": {"api_base": "http://x", "env_key": "K"}}}`))
	if err != nil || own.Models["m"].Cost.Input != 2 || own.Providers["p"].APIKeyEnv != "K" {
		t.Errorf("own format: %+v, %v", own, err)
	}
	if _, err := Parse([]byte(`{"providers": {"p": {"api_base": "http://x", "env_key": "K", "api_key_env": "L"}}}`)); err == nil {
		t.Error("env_key and api_key_env that differ: no error")
	}
}

// TestBrowserModels: the catalog has a browser model for each built-in
// site, taught the text protocol; the provider's api_base (or
// $PTK_BROWSER) says where the browser is, never --base-url; a model id
// may be a site file; an unknown site is an error when it is resolved.
func TestBrowserModels(t *testing.T) {
	c := Default()
	for _, name := range browser.Builtins() {
		m, ok := c.Models["browser:"+name]
		if !ok || m.Provider != "browser" || m.ModelID != name || m.ToolProtocol != "ptk" || !m.Streaming {
			t.Errorf("browser:%s: %+v", name, m)
		}
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	m, err := c.Resolve("browser:chatgpt", Options{Getenv: getenv, BaseURL: "http://localhost:11434/v1"})
	if err != nil {
		t.Fatal(err)
	}
	bm, ok := llm.As[*browser.Model](m)
	if !ok || bm.Site().Name != "chatgpt" {
		t.Fatalf("browser:chatgpt resolves to %T", m)
	}
	if _, ok := llm.As[llm.TextCompleter](m); !ok {
		t.Error("a browser model is not a TextCompleter")
	}
	if ts, ok := llm.As[llm.ToolSupporter](m); !ok || ts.SupportsNativeTools() {
		t.Error("a browser model takes native tools")
	}
	if !strings.Contains(fmt.Sprint(bm.Browser()), "http://127.0.0.1:9222") {
		t.Errorf("where: %v, want the provider's api_base, not --base-url", bm.Browser())
	}
	env["PTK_BROWSER"] = "~/profiles/ptk"
	m, _ = c.Resolve("browser:claude", Options{Getenv: getenv})
	bm, _ = llm.As[*browser.Model](m)
	if where := fmt.Sprint(bm.Browser()); !strings.Contains(where, "profile") || !strings.HasSuffix(where, "/profiles/ptk") || strings.Contains(where, "~") {
		t.Errorf("PTK_BROWSER as a profile directory: %s", where)
	}

	site := filepath.Join(t.TempDir(), "mine.json")
	os.WriteFile(site, []byte(`{"name": "mine", "url": "https://chat.example.com/", "selectors": {"input": "textarea", "answer": ".a"}}`), 0o644)
	user, err := Parse([]byte(`{"models": {"browser:mine": {"provider": "browser", "model_id": "` + site + `", "tool_protocol": "ptk"},
		"browser:nosuch": {"provider": "browser", "model_id": "nosuch", "tool_protocol": "ptk"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c = c.Merge(user)
	if m, err := c.Resolve("browser:mine", Options{}); err != nil {
		t.Errorf("a site file: %v", err)
	} else if bm, _ := llm.As[*browser.Model](m); bm.Site().Name != "mine" {
		t.Errorf("a site file: %+v", bm.Site())
	}
	if _, err := c.Resolve("browser:nosuch", Options{}); err == nil || !strings.Contains(err.Error(), `no site "nosuch"`) {
		t.Errorf("an unknown site: %v", err)
	}
}
