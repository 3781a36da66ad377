package otlp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk/trace/otlp"
)

// The attack: the OTLP endpoint (or an open redirect on its host) answers
// 307 to another origin. net/http follows a POST's 307 with the body and
// every header but Authorization and cookies, so a backend's key in a
// custom header (x-honeycomb-team, from OTEL_EXPORTER_OTLP_HEADERS) went
// to the redirect's host with the spans. The exporter refuses such a
// redirect; one within its endpoint's origin is still followed.
func TestRedirectToAnotherOrigin(t *testing.T) {
	var stolen atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		if r.Header.Get("x-honeycomb-team") != "" {
			t.Errorf("the other origin got the header")
		}
	}))
	defer evil.Close()
	var asked atomic.Int64
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Redirect(w, r, evil.URL+"/v1/traces", http.StatusTemporaryRedirect)
	}))
	defer endpoint.Close()
	exp, err := otlp.New(context.Background(), otlp.Options{Endpoint: endpoint.URL,
		Headers: map[string]string{"x-honeycomb-team": "planted-team-key"}})
	if err != nil {
		t.Fatal(err)
	}
	exp.Export(react())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	exp.Shutdown(ctx) // fails: the redirect is refused
	if asked.Load() == 0 {
		t.Fatal("the endpoint got no request")
	}
	if n := stolen.Load(); n != 0 {
		t.Errorf("the redirect was followed to another origin %d times", n)
	}
}

func TestRedirectWithinTheOrigin(t *testing.T) {
	c := newCollector(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/old/v1/traces", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/traces", http.StatusPermanentRedirect)
	})
	mux.Handle("/", c.srv.Config.Handler) // the collector's
	moved := httptest.NewServer(mux)
	defer moved.Close()
	exp, err := otlp.New(context.Background(), otlp.Options{Endpoint: moved.URL + "/old/v1/traces"})
	if err != nil {
		t.Fatal(err)
	}
	exp.Export(react())
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(c.received()) != 6 {
		t.Errorf("%d spans received through a redirect within the origin, want 6", len(c.received()))
	}
}
