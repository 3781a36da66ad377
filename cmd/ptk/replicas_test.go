package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Replicas of ptk serve share one PostgreSQL store and nothing else: the
// tests here run three of them as processes of their own behind a proxy
// that sends each request to the next one in turn, as a load balancer
// with no session affinity does.

// replicaPG returns the URL of a fresh schema on the PostgreSQL server of
// $PTK_TEST_POSTGRES (default: what .ci/run sets up), dropped when the
// test ends. Without a server the test skips, except under CI.
func replicaPG(t *testing.T) string {
	t.Helper()
	base := os.Getenv("PTK_TEST_POSTGRES")
	if base == "" {
		base = "postgres://ptk:ptk@127.0.0.1:5432/ptk_test?sslmode=disable"
	}
	db, err := sql.Open("pgx", base)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = db.PingContext(ctx)
		cancel()
	}
	if err != nil {
		msg := fmt.Sprintf("no PostgreSQL server at %s (%v): set PTK_TEST_POSTGRES, or start one as .ci/run does", base, err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "replicas_" + hex.EncodeToString(b[:])
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// echoUpstream is an OpenAI-compatible model whose answer depends only on
// the conversation it is sent, so that any replica, in any order, gets
// the same answer: to a last user message "weather CITY" it calls
// get_weather; otherwise it answers with every user and tool message of
// the conversation, joined by "|" (what it was given of the chain).
func echoUpstream(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		var seen []string
		last := ""
		for _, m := range req.Messages {
			var text string
			if json.Unmarshal(m.Content, &text) != nil {
				var parts []struct {
					Text string `json:"text"`
				}
				json.Unmarshal(m.Content, &parts)
				for _, p := range parts {
					text += p.Text
				}
			}
			if m.Role == "user" || m.Role == "tool" {
				seen = append(seen, text)
			}
			last = m.Role + ":" + text
		}
		msg := map[string]any{"role": "assistant", "content": strings.Join(seen, "|")}
		finish := "stop"
		if city, ok := strings.CutPrefix(last, "user:weather "); ok {
			msg["content"] = ""
			msg["tool_calls"] = []any{map[string]any{"index": 0, "id": "call_" + city, "type": "function",
				"function": map[string]any{"name": "get_weather", "arguments": `{"city":"` + city + `"}`}}}
			finish = "tool_calls"
		}
		usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []map[string]any{
			{"choices": []any{map[string]any{"index": 0, "delta": msg, "finish_reason": nil}}},
			{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, "usage": usage},
		} {
			chunk["id"], chunk["object"], chunk["created"], chunk["model"] = "chatcmpl-1", "chat.completion.chunk", 1700000000, req.Model
			b, _ := json.Marshal(chunk)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// replica is one ptk serve process.
type replica struct {
	cmd    *exec.Cmd
	url    *url.URL
	stderr *syncBuffer
}

func (r *replica) stop(sig syscall.Signal) {
	if r.cmd.ProcessState != nil {
		return
	}
	r.cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
}

// startReplicas starts n ptk serve processes at once with args, and waits
// until each answers.
func startReplicas(t *testing.T, n int, args ...string) []*replica {
	t.Helper()
	bin := ptkBinary(t)
	reps := make([]*replica, n)
	for i := range reps {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		r := &replica{stderr: &syncBuffer{}, url: &url.URL{Scheme: "http", Host: addr}}
		r.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr}, args...)...)
		r.cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+t.TempDir())
		r.cmd.Stderr = r.stderr
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.stop(syscall.SIGTERM) })
		reps[i] = r
	}
	for i, r := range reps {
		end := time.Now().Add(60 * time.Second)
		for {
			resp, err := http.Get(r.url.String() + "/healthz")
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(end) {
				t.Fatalf("replica %d did not answer: %v; stderr:\n%s", i, err, r.stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return reps
}

// roundRobin is a proxy that sends each request to the next of its
// backends, with no affinity of any kind, and remembers who served what.
type roundRobin struct {
	mu       sync.Mutex
	backends []*url.URL
	next     int
	served   map[string]int // backend host: requests
}

func (p *roundRobin) handler() http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			p.mu.Lock()
			b := p.backends[p.next%len(p.backends)]
			p.next++
			p.served[b.Host]++
			p.mu.Unlock()
			r.SetURL(b)
		},
		FlushInterval: -1,
	}
}

// remove takes a backend out of the rotation, as a load balancer does
// with one that fails its health check.
func (p *roundRobin) remove(u *url.URL) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, b := range p.backends {
		if b == u {
			p.backends = append(p.backends[:i:i], p.backends[i+1:]...)
			return
		}
	}
}

// respond sends a Responses API request with key, and returns the
// response's status, id and text (the output_text of a non-streamed
// answer; the completed response of a streamed one).
func respond(t *testing.T, base, key string, body map[string]any) (status int, id, text string, calls []map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/responses", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID     string `json:"id"`
		Output []struct {
			Type    string `json:"type"`
			CallID  string `json:"call_id"`
			Name    string `json:"name"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if stream, _ := body["stream"].(bool); stream && resp.StatusCode == http.StatusOK {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type     string          `json:"type"`
				Response json.RawMessage `json:"response"`
			}
			if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "response.completed" {
				json.Unmarshal(ev.Response, &out)
			}
		}
	} else {
		data, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("answer is not JSON: %v\n%s", err, data)
		}
		if out.Error != nil {
			text = out.Error.Message
		}
	}
	for _, it := range out.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				text += c.Text
			}
		case "function_call":
			calls = append(calls, map[string]any{"call_id": it.CallID, "name": it.Name})
		}
	}
	return resp.StatusCode, out.ID, text, calls
}

// TestServeReplicas: three ptk serve processes on one PostgreSQL store,
// behind a round-robin proxy, keep conversations together: each turn of a
// chain of previous_response_ids, a function call's output among them,
// goes to another replica than the turn before and gets the whole
// conversation; twenty conversations at once do too; a client with
// another key cannot continue one (the attack: a guessed or leaked
// response id); and when a replica dies and leaves the rotation, the
// others go on with its conversations.
func TestServeReplicas(t *testing.T) {
	dsn := replicaPG(t)
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("key-a\nkey-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reps := startReplicas(t, 3, "--base-url", echoUpstream(t), "--model", "qwen3:8b", "--mode", "native",
		"--trace-db", dsn, "--api-keys", keys)
	lb := &roundRobin{served: map[string]int{}}
	for _, r := range reps {
		lb.backends = append(lb.backends, r.url)
	}
	proxy := httptest.NewServer(lb.handler())
	defer proxy.Close()
	tools := []any{map[string]any{"type": "function", "name": "get_weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}

	// One conversation, turn by turn, each on the next replica.
	turn := func(key, prev string, input any, stream bool) (int, string, string, []map[string]any) {
		t.Helper()
		body := map[string]any{"model": "qwen3:8b", "input": input, "tools": tools, "stream": stream}
		if prev != "" {
			body["previous_response_id"] = prev
		}
		return respond(t, proxy.URL, key, body)
	}
	status, id1, text, _ := turn("key-a", "", "My name is Ada.", false)
	if status != 200 || text != "My name is Ada." {
		t.Fatalf("turn 1: %d %q", status, text)
	}
	status, id2, _, calls := turn("key-a", id1, "weather Paris", false)
	if status != 200 || len(calls) != 1 || calls[0]["name"] != "get_weather" {
		t.Fatalf("turn 2: %d %v", status, calls)
	}
	output := []any{map[string]any{"type": "function_call_output", "call_id": calls[0]["call_id"], "output": "18C"}}
	status, id3, text, _ := turn("key-a", id2, output, true)
	if want := "My name is Ada.|weather Paris|18C"; status != 200 || text != want {
		t.Fatalf("turn 3 (streamed): %d %q, want %q", status, text, want)
	}
	// Another key, on the next replica: not found, and no word of it.
	status, _, text, _ = turn("key-b", id3, "What is my name?", false)
	if status != http.StatusNotFound || !strings.Contains(text, "not found") || strings.Contains(text, "Ada") {
		t.Errorf("another key continued the conversation: %d %q", status, text)
	}
	status, id4, text, _ := turn("key-a", id3, "What is my name?", false)
	if want := "My name is Ada.|weather Paris|18C|What is my name?"; status != 200 || text != want {
		t.Fatalf("turn 4: %d %q, want %q", status, text, want)
	}
	// An earlier response starts a branch of its own.
	status, _, text, _ = turn("key-a", id1, "Forget the weather.", false)
	if want := "My name is Ada.|Forget the weather."; status != 200 || text != want {
		t.Errorf("branch from turn 1: %d %q, want %q", status, text, want)
	}
	lb.mu.Lock()
	for i, r := range reps {
		if lb.served[r.url.Host] < 2 {
			t.Errorf("replica %d served %d requests, want 2", i, lb.served[r.url.Host])
		}
	}
	lb.mu.Unlock()

	// Twenty conversations at once, three turns each, every turn on
	// whichever replica comes next.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for c := range 20 {
		wg.Go(func() {
			prev, want := "", ""
			for k := range 3 {
				in := fmt.Sprintf("c%d t%d", c, k)
				want = strings.TrimPrefix(want+"|"+in, "|")
				body := map[string]any{"model": "qwen3:8b", "input": in, "stream": k == 1}
				if prev != "" {
					body["previous_response_id"] = prev
				}
				status, id, text, _ := respond(t, proxy.URL, "key-a", body)
				if status != 200 || text != want {
					errs <- fmt.Errorf("conversation %d turn %d: %d %q, want %q", c, k, status, text, want)
					return
				}
				prev = id
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// A replica dies (kill -9) and leaves the rotation: the other two go
	// on with the conversation it served.
	reps[0].stop(syscall.SIGKILL)
	lb.remove(reps[0].url)
	prev := id4
	want := "My name is Ada.|weather Paris|18C|What is my name?"
	for k := range 2 {
		in := fmt.Sprintf("after the crash %d", k)
		want += "|" + in
		status, id, text, _ := turn("key-a", prev, in, false)
		if status != 200 || text != want {
			t.Fatalf("after replica 0 died, turn %d: %d %q, want %q", k, status, text, want)
		}
		prev = id
	}
	for i, r := range reps[1:] {
		if s := r.stderr.String(); strings.Contains(s, "not stored") || strings.Contains(s, "panic") {
			t.Errorf("replica %d:\n%s", i+1, s)
		}
	}
}
