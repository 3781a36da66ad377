package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptkit/ptk"
)

func startFake(t *testing.T, opts Options, servers map[string]ServerConfig) (*Client, error) {
	t.Helper()
	c, err := Start(context.Background(), &Config{Servers: servers}, opts)
	t.Cleanup(func() { c.Close() })
	return c, err
}

func toolNamed(t *testing.T, c *Client, name string) ptk.Tool {
	t.Helper()
	for _, tl := range c.Tools() {
		if tl.Info().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s among %v", name, names(c.Tools()))
	return nil
}

func names(tools []ptk.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Info().Name)
	}
	return out
}

func call(t *testing.T, tl ptk.Tool, args string) ptk.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: a Go error, which would end the run: %v", tl.Info().Name, err)
	}
	return res
}

func TestStartFailuresAreOneLineEach(t *testing.T) {
	// Servers that fail fail fast: the timeout is only for a slow machine.
	c, err := startFake(t, Options{StartTimeout: 30 * time.Second}, map[string]ServerConfig{
		"good":    fakeConfig("tools"),
		"exits":   fakeConfig("exit"),
		"garbage": fakeConfig("garbage"),
		"missing": {Command: "/nonexistent/mcp-server"},
		"nohttp":  {URL: "http://127.0.0.1:1/mcp"},
		"off":     {Command: "/nonexistent/too", Disabled: true},
	})
	if got := c.Servers(); !slices.Equal(got, []string{"good"}) {
		t.Errorf("started %v, want only good", got)
	}
	if len(c.Tools()) != 6 {
		t.Errorf("tools %v, want good's six", names(c.Tools()))
	}
	want := map[string]string{
		"exits":   "FAKE_TOKEN is not set",
		"garbage": "invalid character",
		"missing": "/nonexistent/mcp-server",
		"nohttp":  "http://127.0.0.1:1/mcp",
	}
	var failed []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *StartError
		if !errors.As(e, &se) {
			t.Fatalf("%v is not a *StartError", e)
		}
		failed = append(failed, se.Server)
		msg := se.Error()
		t.Logf("%s", msg)
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: the message takes more than a line: %q", se.Server, msg)
		}
		if w := want[se.Server]; !strings.Contains(msg, w) {
			t.Errorf("%s: %q does not say %q", se.Server, msg, w)
		}
	}
	slices.Sort(failed)
	if !slices.Equal(failed, []string{"exits", "garbage", "missing", "nohttp"}) {
		t.Errorf("failed %v", failed)
	}
}

// TestStartHangingServer: a server that never answers the handshake is
// killed at StartTimeout.
func TestStartHangingServer(t *testing.T) {
	start := time.Now()
	_, err := startFake(t, Options{StartTimeout: time.Second}, map[string]ServerConfig{"hangs": fakeConfig("hang")})
	if d := time.Since(start); d > 15*time.Second { // the default is 60s; a loaded machine is slow to kill
		t.Errorf("the start took %s with StartTimeout 1s", d)
	}
	if err == nil || !strings.Contains(err.Error(), `MCP server "hangs" did not start:`) || !strings.Contains(err.Error(), "did not answer within 1s") {
		t.Errorf("got %v", err)
	}
}

func TestCallsAndFailuresOfACall(t *testing.T) {
	// The slow server's own timeout wins over CallTimeout.
	slow := fakeConfig("tools")
	slow.Timeout = Duration(500 * time.Millisecond)
	c, err := startFake(t, Options{CallTimeout: time.Minute}, map[string]ServerConfig{"fake": fakeConfig("tools"), "slow": slow})
	if err != nil {
		t.Fatal(err)
	}
	echo := toolNamed(t, c, "fake__echo")
	if !echo.Info().ReadOnly || toolNamed(t, c, "fake__write").Info().ReadOnly {
		t.Error("readOnlyHint must make a tool read-only, and its absence not")
	}
	if !toolNamed(t, c, "fake__write").(*Tool).Destructive() || echo.(*Tool).Destructive() {
		t.Error("a tool that says nothing is destructive, as MCP assumes; a read-only one is not")
	}
	if r := call(t, echo, `{"text":"hi"}`); r.Content != "echo: hi" || r.IsError {
		t.Errorf("echo: %+v", r)
	}
	if r := call(t, toolNamed(t, c, "fake__fail"), `{"text":"42"}`); !r.IsError || !strings.Contains(r.Content, `no such record "42"`) {
		t.Errorf("an isError result must reach the model as an error with the server's words: %+v", r)
	}
	if r := call(t, echo, `{"text": 5}`); !r.IsError {
		t.Errorf("arguments the server refuses must be an error result: %+v", r)
	}

	start := time.Now()
	r := call(t, toolNamed(t, c, "slow__stall"), `{}`)
	if d := time.Since(start); d > 15*time.Second { // CallTimeout is a minute
		t.Errorf("a call to a server that never answers took %s; its timeout is 500ms", d)
	}
	if !r.IsError || !strings.Contains(r.Content, "did not answer within 500ms") {
		t.Errorf("stall: %+v", r)
	}
	if r := call(t, echo, `{"text":"still there"}`); r.Content != "echo: still there" {
		t.Errorf("after a call timed out the server must still answer: %+v", r)
	}

	// A run that ends during a call ends the call with the run's error.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := toolNamed(t, c, "fake__stall").Run(ctx, json.RawMessage(`{}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the run's own deadline must end the call with its error, got %v", err)
	}

	r = call(t, toolNamed(t, c, "fake__die"), `{}`)
	if !r.IsError || !strings.Contains(r.Content, "stopped during the call") || !strings.Contains(r.Content, "segmentation fault") {
		t.Errorf("a server that dies during a call: %+v", r)
	}
	r = call(t, echo, `{"text":"anyone?"}`)
	if !r.IsError || !strings.Contains(r.Content, "is not running") && !strings.Contains(r.Content, "stopped") {
		t.Errorf("a call to a server that died: %+v", r)
	}
}

// TestGarbageDuringACall has a server write something that is not
// JSON-RPC on stdout during a call: the call ends at once with an error
// the model reads, not at the timeout.
func TestGarbageDuringACall(t *testing.T) {
	c, err := startFake(t, Options{CallTimeout: 20 * time.Second}, map[string]ServerConfig{"fake": fakeConfig("tools")})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := call(t, toolNamed(t, c, "fake__babble"), `{}`)
	if d := time.Since(start); d > 15*time.Second { // CallTimeout is 20s
		t.Errorf("the call took %s", d)
	}
	if !r.IsError || !strings.Contains(r.Content, `The MCP server "fake" stopped during the call`) {
		t.Errorf("babble: %+v", r)
	}
	if r := call(t, toolNamed(t, c, "fake__echo"), `{"text": "x"}`); !r.IsError || !strings.Contains(r.Content, "not running") {
		t.Errorf("the connection is closed after garbage, so the next call must say so: %+v", r)
	}
}

// TestHTTPServerHeadersAndListChanged runs a streamable HTTP server that
// wants a bearer token, and changes its tools while the client holds them.
func TestHTTPServerHeadersAndListChanged(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	addFakeTools(srv)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // after the clients', which run first

	_, err := startFake(t, Options{}, map[string]ServerConfig{"web": {URL: hs.URL}})
	if err == nil {
		t.Fatal("a server that refuses the client must not start")
	}
	t.Logf("without the header: %v", err)

	c, err := startFake(t, Options{}, map[string]ServerConfig{"web": {URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}}})
	if err != nil {
		t.Fatal(err)
	}
	echo := toolNamed(t, c, "web__echo")
	if r := call(t, echo, `{"text":"over http"}`); r.Content != "echo: over http" {
		t.Fatalf("echo: %+v", r)
	}

	srv.AddTool(&sdk.Tool{Name: "added.later", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "new"}}}, nil
		})
	srv.RemoveTools("echo")
	added := ToolName("web", "added.later")
	waitFor(t, func() bool {
		return slices.Contains(names(c.Tools()), added) && !slices.Contains(names(c.Tools()), "web__echo")
	})
	if r := call(t, toolNamed(t, c, added), `{}`); r.Content != "new" {
		t.Errorf("the tool added later: %+v", r)
	}
	if r := call(t, echo, `{"text":"x"}`); !r.IsError || !strings.Contains(r.Content, "no longer offers") {
		t.Errorf("a tool the server removed: %+v", r)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestToolWithAnUnusableSchemaIsLeftOutAndSaidSo: one bad tool costs only
// itself, and the logger says which and why.
func TestToolWithAnUnusableSchemaIsLeftOutAndSaidSo(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	addFakeTools(srv)
	srv.AddTool(&sdk.Tool{Name: "broken", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/nowhere"}}}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	var log bytes.Buffer
	c, err := startFake(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))}, map[string]ServerConfig{"web": {URL: hs.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(c.Tools()); slices.Contains(got, "web__broken") || !slices.Contains(got, "web__echo") {
		t.Errorf("tools: %v", got)
	}
	if !strings.Contains(log.String(), "tool=broken") || !strings.Contains(log.String(), "nowhere") {
		t.Errorf("the log does not say which tool was left out and why:\n%s", log.String())
	}
}
