package httpguard

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// raw sends a request to addr with exactly these headers and returns the
// status.
func raw(t *testing.T, addr, method, host string, headers ...string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := ""
	if method == http.MethodPost {
		body = `{"model":"m"}`
	}
	fmt.Fprintf(c, "%s /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Length: %d\r\n", method, host, len(body))
	for _, h := range headers {
		fmt.Fprintf(c, "%s\r\n", h)
	}
	fmt.Fprintf(c, "\r\n%s", body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewServer(Guard(Options{Hosts: []string{"ptk.internal:443", "[fd00::1]"}, Origins: []string{"https://app.example"}})(ok))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	const json = "Content-Type: application/json"
	for _, c := range []struct {
		name, method, host string
		headers            []string
		want               int
	}{
		{"an SDK at the server's address", "POST", addr, []string{json}, http.StatusTeapot},
		{"a JSON type with a charset", "POST", addr, []string{"Content-Type: application/json; charset=utf-8"}, http.StatusTeapot},
		{"another JSON type", "POST", addr, []string{"Content-Type: application/merge-patch+json"}, http.StatusTeapot},
		{"localhost on a loopback address", "POST", "localhost:" + port, []string{json}, http.StatusTeapot},
		{"a name under .localhost", "GET", "ptk.localhost:" + port, nil, http.StatusTeapot},
		{"a listed name, any port", "GET", "PTK.internal:8443", nil, http.StatusTeapot},
		{"a listed IPv6 address", "GET", "[fd00::1]:80", nil, http.StatusTeapot},
		{"a rebinding page's name", "GET", "attacker.example:" + port, nil, http.StatusForbidden},
		{"a name that ends like localhost", "GET", "evil-localhost:" + port, nil, http.StatusForbidden},
		{"another address", "GET", "10.1.2.3:" + port, nil, http.StatusForbidden},
		{"an empty Host", "GET", "", nil, http.StatusForbidden},
		{"text/plain from a page", "POST", addr, []string{"Content-Type: text/plain"}, http.StatusUnsupportedMediaType},
		{"a form", "POST", addr, []string{"Content-Type: application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"multipart", "POST", addr, []string{"Content-Type: multipart/form-data; boundary=x"}, http.StatusUnsupportedMediaType},
		{"a blob without a type", "POST", addr, nil, http.StatusUnsupportedMediaType},
		{"a page of its own origin", "POST", addr, []string{json, "Origin: http://" + addr}, http.StatusTeapot},
		{"a listed origin", "POST", addr, []string{json, "Origin: https://app.example"}, http.StatusTeapot},
		{"a page of another port", "POST", addr, []string{json, "Origin: http://127.0.0.1:1"}, http.StatusForbidden},
		{"a page of another site", "GET", addr, []string{"Origin: https://attacker.example"}, http.StatusForbidden},
		{"a sandboxed page", "POST", addr, []string{json, "Origin: null"}, http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := raw(t, addr, c.method, c.host, c.headers...); got != c.want {
				t.Errorf("%s with Host %q and %q: %d, want %d", c.method, c.host, c.headers, got, c.want)
			}
		})
	}
}

func TestAnyHost(t *testing.T) {
	srv := httptest.NewServer(Hosts("*")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	t.Cleanup(srv.Close)
	if got := raw(t, srv.Listener.Addr().String(), "GET", "whatever.example"); got != http.StatusOK {
		t.Errorf("with * any Host passes: %d", got)
	}
}

// A handler called without a server (no local address) knows only the
// names it was given.
func TestWithoutAServer(t *testing.T) {
	h := Hosts("gw")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for host, want := range map[string]int{"gw": 200, "127.0.0.1": 403, "localhost": 403} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %s: %d, want %d", host, w.Code, want)
		}
		if w.Code == 403 && !strings.Contains(w.Body.String(), "--allowed-hosts") {
			t.Errorf("the refusal does not say what to do: %s", w.Body.String())
		}
	}
}
