package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/trace"
)

// TestServeRecordsRequests: ptk serve records each request as a run of
// kind request (its API, route, status, the model asked for and the one
// that served it, streamed or not): a request passed through with its one
// model call under it; a request served with the gateway's own tools with
// its agent run under it, as a run whose parent is the request; a request
// refused before any model saw it, with its status and no model call.
func TestServeRecordsRequests(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hi\n"), 0o644)
	_, upstream := newFakeOpenAI(t,
		fakeReply{content: "Hello."},
		fakeReply{calls: [][2]string{{"read_file", `{"path":"hello.txt"}`}}},
		fakeReply{content: "It says hi."},
		fakeReply{content: "Hi."},
	)
	db := filepath.Join(t.TempDir(), "traces.db")
	url := startServe(t, "--base-url", upstream, "--model", "m", "--mode", "native", "--tools", "read_file", "--workspace", ws, "--trace-db", db,
		"--model-map", "gpt-4o=m")

	withTools := `{"model":"gpt-4o","messages":[{"role":"user","content":"Say hello."}],
	  "tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{}}}}]}`
	if status, out := postChat(t, url, "", withTools); status != http.StatusOK {
		t.Fatalf("a request with tools: %d %v", status, out)
	}
	if status, out := postChat(t, url, "", `{"messages":[{"role":"user","content":"What does hello.txt say?"}]}`); status != http.StatusOK {
		t.Fatalf("a request for the gateway's tools: %d %v", status, out)
	}
	// a hostile client's model name of 200 KB: recorded cut
	huge := strings.Repeat("m", 200<<10)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"`+huge+`","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages": [`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a broken body: %d", resp.StatusCode)
	}

	ctx := context.Background()
	var reqs []trace.Run
	for deadline := time.Now().Add(20 * time.Second); ; {
		s, err := trace.OpenReadOnly(ctx, db)
		if err == nil {
			reqs, _ = s.List(ctx, trace.Filter{Kind: trace.KindRequest})
			s.Close()
		}
		if len(reqs) == 4 && reqs[2].Status != trace.StatusRunning || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(reqs) != 4 {
		t.Fatalf("%d requests recorded, want 4: %+v", len(reqs), reqs)
	}
	s, err := trace.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	detail := func(r *trace.Record) trace.Request {
		var q trace.Request
		if err := json.Unmarshal(r.Detail, &q); err != nil {
			t.Errorf("request %s: detail %s: %v", r.ID, r.Detail, err)
		}
		return q
	}
	// newest first: the broken body, the huge name, the tools, the pass-through
	broken, hostile, tools, plain := get(t, s, reqs[0].ID), get(t, s, reqs[1].ID), get(t, s, reqs[2].ID), get(t, s, reqs[3].ID)
	hostileKids, _ := s.List(ctx, trace.Filter{Parent: hostile.ID})
	if b, _ := json.Marshal(hostile); len(b) > 8<<10 || len(hostileKids) != 1 || len(hostileKids[0].Model) > 256 {
		t.Errorf("the request with a 200 KB model name: recorded in %d bytes, its runs %d", len(b), len(hostileKids))
	}

	q := detail(plain)
	if q.API != "chat" || q.Method != "POST" || q.Route != "/v1/chat/completions" || q.Status != 200 || q.Asked != "gpt-4o" || q.Model != "m" ||
		q.Stream || q.Mode != "native" || plain.Status != trace.StatusOK || plain.Name != "/v1/chat/completions" {
		t.Errorf("the request passed through: %+v, run %+v", q, plain.Run)
	}
	if len(plain.ModelCalls) != 1 || plain.ModelCalls[0].Usage.PromptTokens != 120 || plain.ModelCalls[0].Parent != "" || plain.Usage.PromptTokens != 120 {
		t.Errorf("the model call of the request passed through: %+v (usage %+v)", plain.ModelCalls, plain.Usage)
	}

	q = detail(tools)
	if q.Status != 200 || !strings.HasPrefix(q.Mode, "server-tools") || len(tools.ModelCalls) != 0 || tools.Usage.PromptTokens != 240 {
		t.Errorf("the request served with the gateway's tools: %+v, %d model calls, usage %+v", q, len(tools.ModelCalls), tools.Usage)
	}
	kids, err := s.List(ctx, trace.Filter{Parent: tools.ID})
	if err != nil || len(kids) != 1 {
		t.Fatalf("the runs under the request: %+v, %v", kids, err)
	}
	run := get(t, s, kids[0].ID)
	if run.Kind != trace.KindAgent || run.ParentID != tools.ID || len(run.ModelCalls) != 2 || len(run.ToolCalls) != 1 || run.ToolCalls[0].Tool != "read_file" ||
		run.Input != "What does hello.txt say?" || run.Output != "It says hi." {
		t.Errorf("the agent run under the request: %+v, %d model calls, tool calls %+v", run.Run, len(run.ModelCalls), run.ToolCalls)
	}
	if run.StartedAt.Before(tools.StartedAt) || run.StartedAt.Add(time.Duration(run.Duration)).After(tools.StartedAt.Add(time.Duration(tools.Duration)+time.Millisecond)) {
		t.Errorf("the agent run (%v, %v) is not within its request (%v, %v)", run.StartedAt, run.Duration, tools.StartedAt, tools.Duration)
	}

	q = detail(broken)
	if q.Status != 400 || broken.Status != trace.StatusError || broken.ErrorCode != "HTTP_400" || broken.ErrorMessage == "" || len(broken.ModelCalls) != 0 {
		t.Errorf("the broken request: %+v, run %+v", q, broken.Run)
	}

	code, out, errOut := runPTK(t, "", "traces", "show", tools.ID, "--trace-db", db)
	if code != 0 || !strings.Contains(out, "request   POST /v1/chat/completions → 200 (chat)") || !strings.Contains(out, "runs under it\n  "+run.ID+"  agent serve  ok") {
		t.Errorf("traces show of a request: exit %d\n%s%s", code, out, errOut)
	}
}

func get(t *testing.T, s *trace.Store, id string) *trace.Record {
	t.Helper()
	r, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
