package gateway_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
)

// TestSDKModelsAndHealth: GET /v1/models lists the models as OpenAI does,
// behind the API key; GET /healthz answers without one.
func TestSDKModelsAndHealth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		models func(context.Context) ([]string, error)
		want   []string
		status int
	}{
		{name: "default model", want: []string{modelName}},
		{name: "listed", models: func(context.Context) ([]string, error) { return []string{"gemma:2b", "qwen3:8b"}, nil }, want: []string{"gemma:2b", "qwen3:8b"}},
		{name: "listing fails", models: func(context.Context) ([]string, error) { return nil, errors.New("ollama is not running") }, status: 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, newUpstream(t), agent.ModeAuto, func(c *gateway.Config) {
				c.APIKeys = []string{"sk-right"}
				c.Models = tt.models
			})
			page, err := g.client.Models.List(t.Context())
			if tt.status != 0 {
				apiError(t, err, tt.status, "upstream_error", "", "ollama is not running")
				return
			}
			if err != nil {
				t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
			}
			var ids []string
			for _, m := range page.Data {
				if m.Object != "model" || m.OwnedBy == "" {
					t.Errorf("model %s", m.RawJSON())
				}
				ids = append(ids, m.ID)
			}
			if !slices.Equal(ids, tt.want) || page.Object != "list" {
				t.Errorf("models %q (object %q), want %q", ids, page.Object, tt.want)
			}

			wrong := sdkClient(g.url, "sk-wrong")
			_, err = wrong.Models.List(t.Context())
			apiError(t, err, 401, "invalid_request_error", "invalid_api_key", "API key")

			for _, key := range []string{"sk-right", "sk-wrong"} {
				root := openai.NewClient(option.WithBaseURL(g.url+"/"), option.WithAPIKey(key), option.WithMaxRetries(0))
				var health struct {
					Status string `json:"status"`
				}
				if err := root.Get(t.Context(), "healthz", nil, &health); err != nil || health.Status != "ok" {
					t.Errorf("GET /healthz with key %s: %+v, %v; want status ok", key, health, err)
				}
			}
		})
	}
}
