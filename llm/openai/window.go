package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/ollama"
)

var _ llm.Windower = (*Client)(nil)

// windows remembers the windows a client's server told, by model.
type windows struct {
	mu sync.Mutex
	m  map[string]llm.Window
}

// probeTimeout bounds each question asked about the window.
const probeTimeout = 3 * time.Second

// ContextWindow asks the server for the model's context window, once per
// model, when the client was made WithWindowProbe: vLLM's max_model_len
// (GET /models), llama.cpp's n_ctx (GET /props), or, from Ollama (found by
// its /api/version), the context its OpenAI-compatible API serves the
// model with. A server that tells none of these, or a client that does not
// ask, gives the zero Window.
func (c *Client) ContextWindow(ctx context.Context, model string) (llm.Window, error) {
	if !c.probe {
		return llm.Window{}, nil
	}
	c.windows.mu.Lock()
	w, ok := c.windows.m[model]
	c.windows.mu.Unlock()
	if ok {
		return w, nil
	}
	w = c.probeWindow(ctx, model)
	c.windows.mu.Lock()
	if c.windows.m == nil {
		c.windows.m = map[string]llm.Window{}
	}
	c.windows.m[model] = w
	c.windows.mu.Unlock()
	return w, nil
}

func (c *Client) probeWindow(ctx context.Context, model string) llm.Window {
	base := c.t.BaseURL
	root := strings.TrimSuffix(base, "/v1")
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if c.get(ctx, base+"/models", &list) == nil {
		for _, m := range list.Data {
			if m.MaxModelLen > 0 && (m.ID == model || len(list.Data) == 1) {
				return llm.Window{Tokens: m.MaxModelLen, Trained: m.MaxModelLen, Source: "the server's max_model_len"}
			}
		}
	}
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if c.get(ctx, root+"/props", &props) == nil && props.Settings.NCtx > 0 {
		return llm.Window{Tokens: props.Settings.NCtx, Source: "llama.cpp's n_ctx"}
	}
	if _, err := ollama.Detect(ctx, root, c.t.HTTP); err == nil {
		if w, err := ollama.OpenAIWindow(ctx, root, model, c.t.HTTP); err == nil {
			return w
		}
	}
	return llm.Window{}
}

// get reads a small JSON answer to a GET, with the client's headers.
func (c *Client) get(ctx context.Context, url string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header = c.t.Header.Clone()
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	r, err := c.t.Client().Do(req)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return errors.New(r.Status)
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
