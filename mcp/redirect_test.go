package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The attack: a streamable HTTP server (or an open redirect on its host)
// answers 307 to another origin. The headers in mcp.json — the user's
// token for that server — were added to every request the client made,
// the redirected one too, so the other origin received the token (over
// plain HTTP, when it said http://), and ptk spoke MCP to whatever it
// named, a service on the user's loopback included. A redirect to another
// origin is not followed; one within the server's origin is.
func TestHTTPServerRedirectKeepsTheToken(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	defer other.Close()
	srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	addFakeTools(srv)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
		default:
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	token := map[string]string{"Authorization": "Bearer s3cret-token"}

	_, err := startFake(t, Options{}, map[string]ServerConfig{"away": {URL: hs.URL + "/away", Headers: token}})
	if err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("a server that redirects to another origin: %v", err)
	}
	mu.Lock()
	if len(seen) > 0 {
		t.Errorf("the other origin was asked %d times, with Authorization %q", len(seen), seen)
	}
	mu.Unlock()

	c, err := startFake(t, Options{}, map[string]ServerConfig{"moved": {URL: hs.URL + "/moved", Headers: token}})
	if err != nil {
		t.Fatalf("a redirect within the server's origin: %v", err)
	}
	if r := call(t, toolNamed(t, c, "moved__echo"), `{"text":"hi"}`); r.Content != "echo: hi" {
		t.Errorf("echo after a redirect within the origin: %+v", r)
	}
}
