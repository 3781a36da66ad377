package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
)

// An answer with native tool calls as OpenAI writes it, with fields the
// gateway has no use for (service_tier, system_fingerprint, the usage's
// details, a provider's own field): whole, and streamed.
const (
	nativeWhole = `{"id":"chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb","object":"chat.completion","created":1741576544,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_3PqV8tYk2mHn0aZ1xQwErT5u","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},{"id":"call_Xk9bN2cV7dLq4sWe1rTy6uIo","type":"function","function":{"name":"get_time","arguments":"{\"timezone\": \"Europe/Paris\"}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":312,"completion_tokens":48,"total_tokens":360,"prompt_tokens_details":{"cached_tokens":256,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","x_upstream_trace":"t-81f2"}`

	nativeStream = `data: {"id":"chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_3PqV8tYk2mHn0aZ1xQwErT5u","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1"}

data: {"id":"chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x2"}

data: {"id":"chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Paris\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x3"}

data: {"id":"chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_Xk9bN2cV7dLq4sWe1rTy6uIo","type":"function","function":{"name":"get_time","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x4"}

data: {"id":"chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"timezone\": \"Europe/Paris\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x5"}

data: {"id":"chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null,"obfuscation":"x6"}

data: {"id":"chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb","object":"chat.completion.chunk","created":1741576544,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f9f4fb6dbf","choices":[],"usage":{"prompt_tokens":312,"completion_tokens":48,"total_tokens":360,"prompt_tokens_details":{"cached_tokens":256,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"x7"}

data: [DONE]

`
)

// TestSDKPassThrough: in front of an upstream that takes tools (native, or
// auto before any rejection), a request with tools goes upstream as the
// client sent it (its model named again when the upstream's name differs)
// and the answer comes back as the upstream wrote it: its ids, its usage
// and the fields the gateway does not know.
func TestSDKPassThrough(t *testing.T) {
	t.Parallel()
	for _, mode := range []agent.Mode{agent.ModeAuto, agent.ModeNative} {
		for _, w := range bothWays {
			for _, rename := range []bool{false, true} {
				name := string(mode) + "/" + w.name
				if rename {
					name += "/renamed"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					rep := reply{raw: nativeWhole}
					if w.stream {
						rep = reply{raw: nativeStream, contentType: "text/event-stream"}
					}
					up := startUpstream(t, &upstream{tools: true, script: []reply{rep}})
					g := newGateway(t, up, mode, func(c *gateway.Config) {
						u := upstreamModel(up, mode)
						if rename {
							u.Name = "gpt-4o-2024-08-06"
						}
						c.Resolve = func(string) (gateway.Upstream, error) { return u, nil }
					})
					var sent []byte
					capture := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
						sent, _ = io.ReadAll(r.Body)
						r.Body = io.NopCloser(bytes.NewReader(sent))
						return next(r)
					})
					p := chat("What is the weather in Paris, and the time?", bothTools...)
					p.Model = "gpt-4o"
					p.ParallelToolCalls = openai.Bool(true)
					p.Seed = openai.Int(42)
					if w.stream {
						p.StreamOptions.IncludeUsage = openai.Bool(true)
					}
					a, err := ask(t, sdkClient(g.url, "sk-none", capture), p, w.stream)
					if err != nil {
						t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
					}

					got := up.requests()
					if len(got) != 1 {
						t.Fatalf("the upstream got %d requests, want 1", len(got))
					}
					wantBody := sent
					if rename {
						wantBody = bytes.Replace(sent, []byte(`"model":"gpt-4o"`), []byte(`"model":"gpt-4o-2024-08-06"`), 1)
					}
					if !jsonEqual(got[0].body, wantBody) || !rename && !bytes.Equal(got[0].body, sent) {
						t.Errorf("the upstream got\n%s\nwant what the client sent\n%s", got[0].body, wantBody)
					}

					if w.stream {
						var events []string
						for _, line := range strings.Split(nativeStream, "\n") {
							if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
								events = append(events, d)
							}
						}
						if len(a.chunks) != len(events) {
							t.Fatalf("%d chunks, want the upstream's %d", len(a.chunks), len(events))
						}
						for i, ch := range a.chunks {
							if strings.TrimSpace(ch.RawJSON()) != events[i] {
								t.Errorf("chunk %d is\n%s\nwant the upstream's\n%s", i, ch.RawJSON(), events[i])
							}
						}
					} else if strings.TrimSpace(a.RawJSON()) != nativeWhole {
						t.Errorf("the answer is\n%s\nwant the upstream's\n%s", a.RawJSON(), nativeWhole)
					}
					tcs := a.Choices[0].Message.ToolCalls
					if len(tcs) != 2 || tcs[0].ID != "call_3PqV8tYk2mHn0aZ1xQwErT5u" || tcs[1].ID != "call_Xk9bN2cV7dLq4sWe1rTy6uIo" {
						t.Errorf("tool calls %+v, want the upstream's ids", tcs)
					}
					//lint:ignore SA1019 deprecated by OpenAI, still sent by servers: pass-through must keep it
					if a.ID != "chatcmpl-B9Nx2kQyXhW1rWc7f0Z3TqLdJ8aVb" || a.SystemFingerprint != "fp_f9f4fb6dbf" || a.ServiceTier != "default" {
						//lint:ignore SA1019 as above
						t.Errorf("id %q, system_fingerprint %q, service_tier %q; want the upstream's", a.ID, a.SystemFingerprint, a.ServiceTier)
					}
					if u := a.Usage; u.PromptTokens != 312 || u.CompletionTokens != 48 || u.PromptTokensDetails.CachedTokens != 256 {
						t.Errorf("usage %+v, want the upstream's", u)
					}
				})
			}
		}
	}
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
