package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
)

// probeTimeout bounds each question the client asks the server about a
// model (/api/show, /api/ps, /api/version).
const probeTimeout = 5 * time.Second

// ContextWindow returns the window the client sends as num_ctx for model,
// and the context the model was trained for (its model_info's
// context_length): WithNumCtx, else the Modelfile's num_ctx, else the
// context the model is loaded with (/api/ps), else DefaultNumCtx; never
// more than it was trained for. It asks the server once per model.
func (c *Client) ContextWindow(ctx context.Context, model string) (llm.Window, error) {
	c.mu.Lock()
	w, ok := c.windows[model]
	c.mu.Unlock()
	if ok {
		return w, nil
	}
	w, err := c.window(ctx, model)
	if err != nil {
		return w, err
	}
	c.mu.Lock()
	c.windows[model] = w
	c.mu.Unlock()
	return w, nil
}

func (c *Client) window(ctx context.Context, model string) (llm.Window, error) {
	var w llm.Window
	show, err := c.show(ctx, model)
	switch {
	case err != nil && c.numCtx > 0:
		return llm.Window{Tokens: c.numCtx, Source: "num_ctx"}, nil
	case err != nil:
		// The chat call will say what is wrong (an unknown model); until
		// then the default is what would be sent.
		return llm.Window{Tokens: DefaultNumCtx, Source: "ptk's default num_ctx"}, err
	}
	w.Trained = trainedContext(show.ModelInfo)
	switch n := parameter(show.Parameters, "num_ctx"); {
	case c.numCtx > 0:
		w.Tokens, w.Source = c.numCtx, "num_ctx"
	case n > 0:
		w.Tokens, w.Source = n, "the Modelfile's num_ctx"
	default:
		if loaded := c.loadedContext(ctx, model); loaded > 0 {
			w.Tokens, w.Source = loaded, "the context Ollama loaded the model with"
		} else {
			w.Tokens, w.Source = DefaultNumCtx, "ptk's default num_ctx"
		}
	}
	if w.Trained > 0 && w.Tokens > w.Trained {
		w.Tokens = w.Trained
		w.Source += ", at most what the model was trained for"
	}
	return w, nil
}

// show asks the server about a model (POST /api/show).
func (c *Client) show(ctx context.Context, model string) (*showResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"model": model})
	r, err := c.post(ctx, "/api/show", body)
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	var s showResponse
	data, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		return nil, httpx.ConnectionError(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, httpx.BadResponse(err, data)
	}
	return &s, nil
}

// loadedContext is the context model is loaded with (GET /api/ps), or 0.
func (c *Client) loadedContext(ctx context.Context, model string) int {
	var ps psResponse
	if get(ctx, c.t.HTTP, c.t.BaseURL+"/api/ps", &ps) != nil {
		return 0
	}
	for _, m := range ps.Models {
		if m.Name == model || m.Model == model || m.Name == model+":latest" {
			return m.ContextLength
		}
	}
	return 0
}

// trainedContext is the "<architecture>.context_length" of a model's
// model_info.
func trainedContext(info map[string]json.RawMessage) int {
	for k, v := range info {
		if strings.HasSuffix(k, ".context_length") {
			var n int
			if json.Unmarshal(v, &n) == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// parameter is a numeric PARAMETER of a Modelfile's parameters text, or 0.
func parameter(params, name string) int {
	for line := range strings.SplitSeq(params, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name {
			if n, err := strconv.Atoi(strings.Trim(f[1], `"`)); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// ErrNotOllama is the error of Detect for a server that is not Ollama.
var ErrNotOllama = errors.New("not an Ollama server")

// Detect reports whether the server at baseURL (its root, or its /v1) is
// Ollama, by its GET /api/version, and returns the version it says. hc nil
// uses a client with the default transport.
func Detect(ctx context.Context, baseURL string, hc *http.Client) (string, error) {
	if hc == nil {
		hc = httpx.DefaultClient
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := get(ctx, hc, Root(baseURL)+"/api/version", &v); err != nil {
		return "", err
	}
	if v.Version == "" {
		return "", ErrNotOllama
	}
	return v.Version, nil
}

// get reads a small JSON answer to a GET.
func get(ctx context.Context, hc *http.Client, url string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	r, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: GET %s: %s", ErrNotOllama, url, r.Status)
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%w: GET %s: %v", ErrNotOllama, url, err)
	}
	return nil
}

// OllamaDefault is the context Ollama gives a model that nothing sets one
// for, on a machine with less than 24 GiB of VRAM.
const OllamaDefault = 4096

// OpenAIWindow is the window model has through the OpenAI-compatible API
// (/v1) of the Ollama server at baseURL, which takes no context size per
// request: the context it is loaded with, else its Modelfile's num_ctx,
// else Ollama's default (OllamaDefault; more on a machine with more VRAM,
// or with OLLAMA_CONTEXT_LENGTH set, which /api/ps shows once the model is
// loaded).
func OpenAIWindow(ctx context.Context, baseURL, model string, hc *http.Client) (llm.Window, error) {
	c := New(baseURL, WithHTTPClient(hc))
	show, err := c.show(ctx, model)
	if err != nil {
		return llm.Window{}, err
	}
	w := llm.Window{Trained: trainedContext(show.ModelInfo)}
	switch loaded := c.loadedContext(ctx, model); {
	case loaded > 0:
		w.Tokens, w.Source = loaded, "the context Ollama loaded the model with"
	case parameter(show.Parameters, "num_ctx") > 0:
		w.Tokens, w.Source = parameter(show.Parameters, "num_ctx"), "the Modelfile's num_ctx"
	default:
		w.Tokens, w.Source = OllamaDefault, "Ollama's default context (its OpenAI-compatible API takes no size per request)"
	}
	return w, nil
}
