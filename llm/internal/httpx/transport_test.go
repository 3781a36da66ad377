package httpx

import (
	"testing"
)

// A server on this machine gets the client that asks for no compression;
// any other, the default client.
func TestNewLocalClient(t *testing.T) {
	for url, local := range map[string]bool{
		"http://127.0.0.1:8000/v1":     true,
		"http://127.9.9.9:8000/v1":     true,
		"http://[::1]:11434":           true,
		"http://localhost:8080/v1":     true,
		"http://LocalHost:8080/v1":     true,
		"http://vllm.localhost/v1":     true,
		"https://api.openai.com/v1":    false,
		"http://10.0.0.5:8000/v1":      false,
		"http://localhost.example/v1":  false,
		"http://127.0.0.1.nip.io/v1":   false,
		"::not a url":                  false,
		"http://[::ffff:127.0.0.1]:80": true,
	} {
		tr := New("test", url)
		want := DefaultClient
		if local {
			want = LocalClient
		}
		if tr.HTTP != want || Local(url) != local {
			t.Errorf("%s: local = %v, want %v", url, Local(url), local)
		}
	}
	if lt, ok := LocalClient.Transport.(*localTransport); !ok || !lt.fallback.DisableCompression || lt.fallback.MaxIdleConnsPerHost != 128 || lt.maxIdle != 128 {
		t.Errorf("LocalClient's transport: %+v", LocalClient.Transport)
	}
}
