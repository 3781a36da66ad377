package gateway_test

// The gateway's cost over loopback: a local upstream that answers at once
// with precomputed bytes (benchUpstream), and clients that send the same
// realistic request (a system and a user message, five tools with JSON
// Schemas, 2.5 KB) to it directly and through the gateway. What the
// gateway adds is the difference.
//
//	go test -run '^$' -bench . -benchmem -count 6 ./gateway/
//
// The client, the gateway and the upstream share the machine's cores, so
// the numbers are for the three together: compare them as ratios within
// one run (BenchmarkDirect is the floor). Latency percentiles are custom
// metrics in microseconds (p50-us, p90-us, p99-us); cpu-us/req is the CPU
// time of the three per request, which other processes on the machine
// change far less than they change the time per request.
//
// PTK_BENCH_GATEWAY=process runs the gateway in a process of its own, as
// ptk serve runs between its clients and its model server: the client and
// the upstream stay in this one, and the CPU figures count both processes
// (the gateway's to the 10 ms tick, from /proc).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	anthropicwire "github.com/ptkit/ptk/llm/anthropic/wire"
	"github.com/ptkit/ptk/llm/openai"
	"github.com/ptkit/ptk/llm/openai/responses"
)

// What the upstream answers, and what a client must get back.
const (
	benchModel = "bench-upstream"
	benchProse = "I'll check the current weather in Paris for you."
	benchArgs  = `{"city":"Paris","unit":"celsius"}`
	// benchPTKReply is the reply of a model taught the text protocol: a
	// sentence, then one call of a declared tool, as models write it.
	benchPTKReply = benchProse + "\n\n<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</PTK_CALL>"
	// benchFinal is the answer once the tool's result is in.
	benchFinal  = "It is 18 °C with light rain in Paris right now: take a rain jacket if you bike."
	benchResult = `{"temperature_c":18,"conditions":"light rain","wind_kph":14}`
	// benchCallID stands for the call's id in a follow-up request: a load
	// client replaces it with the id the gateway gave.
	benchCallID = "call_XXXXXXXXXXXXXXXXXXXXXXXX"
)

// The gateway's models: bench-ptk is taught the text protocol; bench-native
// and bench-alias pass through (bench-alias under another name upstream,
// so that the gateway rewrites the request's model).
const (
	benchPTK    = "bench-ptk"
	benchNative = "bench-native"
	benchAlias  = "bench-alias"
)

// benchDirectPTK is the model a direct request names to get the answer
// the gateway gets for a request it serves in the text protocol: so that
// the added latency of the PTK paths compares the same upstream answer
// (34 events streamed) read directly and through the gateway, not the
// native call's 22 events with the text protocol's 34.
const benchDirectPTK = "bench-direct-ptk"

// The kinds of answer the upstream gives.
const (
	benchAnswerPTK    = iota // the text protocol's call, for a request with no tools
	benchAnswerNative        // a native tool call, for a request with tools
	benchAnswerFinal         // the final answer, for a request with a tool result
	benchAnswers
)

// benchUpstream is an OpenAI-compatible Chat Completions server that answers
// at once from precomputed bytes: whole, or as an event stream of chunks of
// a few bytes each, flushed one by one as a model server sends them. It
// reads which answer to give from the request with three byte searches:
// the final answer once the tool's result ("light rain") is in, a native
// call when the request declares tools, the text protocol's call when it
// does not (the gateway in ptk mode writes them in the system prompt).
type benchUpstream struct {
	srv    *httptest.Server
	whole  [benchAnswers][]byte
	stream [benchAnswers][][]byte
	bufs   sync.Pool
	// pace, when not 0, is the pause between a stream's events, as a
	// model server makes them; lastEvent is when the last stream's last
	// event was written (UnixNano).
	pace      atomic.Int64 // a time.Duration
	lastEvent atomic.Int64
	// paused and pauses add up the pauses as they were.
	paused, pauses atomic.Int64
}

func benchStartUpstream() *benchUpstream {
	u := &benchUpstream{bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
	u.whole[benchAnswerPTK] = benchWholeAnswer(benchPTKReply, false, "stop")
	u.stream[benchAnswerPTK] = benchStreamAnswer(benchPTKReply, false, "stop")
	u.whole[benchAnswerNative] = benchWholeAnswer(benchProse, true, "tool_calls")
	u.stream[benchAnswerNative] = benchStreamAnswer(benchProse, true, "tool_calls")
	u.whole[benchAnswerFinal] = benchWholeAnswer(benchFinal, false, "stop")
	u.stream[benchAnswerFinal] = benchStreamAnswer(benchFinal, false, "stop")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", u.chat)
	u.srv = httptest.NewServer(mux)
	return u
}

func (u *benchUpstream) url() string { return u.srv.URL + "/v1/chat/completions" }

func (u *benchUpstream) close() { u.srv.Close() }

func (u *benchUpstream) chat(w http.ResponseWriter, r *http.Request) {
	buf := u.bufs.Get().(*bytes.Buffer)
	defer u.bufs.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body := buf.Bytes()
	kind := benchAnswerPTK
	switch {
	case bytes.Contains(body, []byte("light rain")): // the tool's result, in any form
		kind = benchAnswerFinal
	case bytes.Contains(body, []byte(`"model":"`+benchDirectPTK+`"`)):
	case bytes.Contains(body, []byte(`"tools":[`)):
		kind = benchAnswerNative
	}
	h := w.Header()
	if !bytes.Contains(body, []byte(`"stream":true`)) {
		h.Set("Content-Type", "application/json")
		w.Write(u.whole[kind])
		return
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	for i, ev := range u.stream[kind] {
		if pace := time.Duration(u.pace.Load()); i > 0 && pace > 0 {
			t0 := time.Now()
			time.Sleep(pace)
			u.paused.Add(int64(time.Since(t0)))
			u.pauses.Add(1)
		}
		if i == len(u.stream[kind])-1 {
			// Before the write, so that a client cannot have the answer
			// before its time is here.
			u.lastEvent.Store(time.Now().UnixNano())
		}
		w.Write(ev)
		f.Flush()
	}
}

// benchJSON is v as a server writes it: compact, HTML left as it is.
func benchJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

type benchObj = map[string]any

var benchUsage = benchObj{"prompt_tokens": 912, "completion_tokens": 41, "total_tokens": 953}

func benchWholeAnswer(content string, call bool, finish string) []byte {
	msg := benchObj{"role": "assistant", "content": content}
	if call {
		msg["tool_calls"] = []any{benchObj{"id": "call_up1", "type": "function",
			"function": benchObj{"name": "get_weather", "arguments": benchArgs}}}
	}
	return benchJSON(benchObj{"id": "chatcmpl-bench", "object": "chat.completion", "created": 1767225600, "model": benchModel,
		"choices": []any{benchObj{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   benchUsage})
}

// benchStreamAnswer is the events of a streamed answer: the role, the text
// and the call's arguments in pieces of a few bytes, the finish, the usage
// and [DONE].
func benchStreamAnswer(content string, call bool, finish string) [][]byte {
	var evs [][]byte
	add := func(delta benchObj, finish any, usage any) {
		choices := []any{}
		if delta != nil {
			choices = []any{benchObj{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}
		}
		c := benchObj{"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1767225600, "model": benchModel, "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		evs = append(evs, []byte("data: "+string(benchJSON(c))+"\n\n"))
	}
	add(benchObj{"role": "assistant", "content": ""}, nil, nil)
	for _, p := range benchPieces(content, 5) {
		add(benchObj{"content": p}, nil, nil)
	}
	if call {
		add(benchObj{"tool_calls": []any{benchObj{"index": 0, "id": "call_up1", "type": "function",
			"function": benchObj{"name": "get_weather", "arguments": ""}}}}, nil, nil)
		for _, p := range benchPieces(benchArgs, 5) {
			add(benchObj{"tool_calls": []any{benchObj{"index": 0, "function": benchObj{"arguments": p}}}}, nil, nil)
		}
	}
	add(benchObj{}, finish, nil)
	add(nil, nil, benchUsage)
	return append(evs, []byte("data: [DONE]\n\n"))
}

// benchPieces cuts s into pieces of about n bytes, whole runes each, as a
// model's tokens come.
func benchPieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// benchTools are five tools as an application declares them.
var benchTools = []any{
	benchTool("get_weather", "Get the current weather for a city.", `{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Paris"},"unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"Temperature unit"}},"required":["city"],"additionalProperties":false}`),
	benchTool("search_web", "Search the web and return the top results with their titles, URLs and snippets.", `{"type":"object","properties":{"query":{"type":"string","description":"What to search for"},"max_results":{"type":"integer","minimum":1,"maximum":20,"default":5},"site":{"type":"string","description":"Restrict the search to this domain"}},"required":["query"]}`),
	benchTool("read_file", "Read a text file from the user's workspace.", `{"type":"object","properties":{"path":{"type":"string","description":"Path relative to the workspace"},"offset":{"type":"integer","minimum":1,"description":"First line to read"},"limit":{"type":"integer","minimum":1,"description":"Number of lines to read"}},"required":["path"]}`),
	benchTool("send_email", "Send an email on the user's behalf. Ask before sending.", `{"type":"object","properties":{"to":{"type":"array","items":{"type":"string","format":"email"},"minItems":1},"cc":{"type":"array","items":{"type":"string","format":"email"}},"subject":{"type":"string"},"body":{"type":"string","description":"Plain text body"}},"required":["to","subject","body"]}`),
	benchTool("create_event", "Create a calendar event.", `{"type":"object","properties":{"title":{"type":"string"},"start":{"type":"string","format":"date-time","description":"RFC 3339 start time"},"duration_minutes":{"type":"integer","minimum":5,"default":30},"attendees":{"type":"array","items":{"type":"object","properties":{"email":{"type":"string"},"optional":{"type":"boolean"}},"required":["email"]}}},"required":["title","start"]}`),
}

func benchTool(name, desc, schema string) any {
	return benchObj{"type": "function", "function": benchObj{"name": name, "description": desc, "parameters": json.RawMessage(schema)}}
}

var benchMessages = []any{
	benchObj{"role": "system", "content": "You are the assistant of Acme Corp's employees. Be brief and concrete. Use the tools when they help; never invent a tool's result. Today is Thursday, 1 January 2026; the user is in Paris and works at the office on rue de Rivoli."},
	benchObj{"role": "user", "content": "What's the weather like in Paris right now? I'm deciding whether to bike to the office."},
}

// benchRequest is the client's request to model: the messages, the tools,
// and for a follow-up the assistant's call (its id benchCallID) and the
// tool's result.
func benchRequest(model string, stream, followUp bool) []byte {
	msgs := slices.Clone(benchMessages)
	if followUp {
		msgs = append(msgs,
			benchObj{"role": "assistant", "content": benchProse, "tool_calls": []any{benchObj{"id": benchCallID, "type": "function",
				"function": benchObj{"name": "get_weather", "arguments": benchArgs}}}},
			benchObj{"role": "tool", "tool_call_id": benchCallID, "content": benchResult})
	}
	req := benchObj{"model": model, "messages": msgs, "tools": benchTools, "temperature": 0.2}
	if stream {
		req["stream"] = true
	}
	return benchJSON(req)
}

// benchAgentTools are benchTools as the agents' APIs declare them.
func benchAgentTools(api string) []any {
	var out []any
	for _, t := range benchTools {
		f := t.(benchObj)["function"].(benchObj)
		if api == "messages" {
			out = append(out, benchObj{"name": f["name"], "description": f["description"], "input_schema": f["parameters"]})
		} else {
			out = append(out, benchObj{"type": "function", "name": f["name"], "description": f["description"], "parameters": f["parameters"]})
		}
	}
	return out
}

// benchAgentRequest is benchRequest's first turn as an agents' API asks
// it: Anthropic Messages ("messages") or Responses ("responses").
func benchAgentRequest(api, model string, stream bool) []byte {
	system := benchMessages[0].(benchObj)["content"]
	user := benchMessages[1].(benchObj)["content"]
	var req benchObj
	if api == "messages" {
		req = benchObj{"model": model, "max_tokens": 1024, "system": system, "messages": []any{benchObj{"role": "user", "content": user}},
			"tools": benchAgentTools(api), "temperature": 0.2}
	} else {
		req = benchObj{"model": model, "instructions": system, "input": user, "tools": benchAgentTools(api), "temperature": 0.2, "store": false}
	}
	if stream {
		req["stream"] = true
	}
	return benchJSON(req)
}

// benchCheckAgent reads an agents' API answer, whole or streamed (the
// stream checked against its grammar), and checks it is the weather call
// with its sentence.
func benchCheckAgent(api string, data []byte, stream bool) error {
	var text, name, args, stop string
	switch {
	case api == "messages":
		var m anthropicwire.Response
		if stream {
			var err error
			var errData []byte
			if m, errData, err = messagesStream(data); err != nil || errData != nil {
				return fmt.Errorf("%v %s", err, errData)
			}
		} else if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		for _, b := range m.Content {
			text += b.Text
			if b.Type == "tool_use" {
				name, args = b.Name, string(b.Input)
			}
		}
		stop = m.Stop()
		if stop == "tool_use" && m.Usage.OutputTokens > 0 {
			stop = "ok"
		}
	default:
		var r *responses.Response
		if stream {
			var err error
			if r, err = responsesStream(data); err != nil {
				return err
			}
		} else if err := json.Unmarshal(data, &r); err != nil {
			return err
		}
		for _, it := range r.Output {
			text += partsTextOf(it)
			if it.Type == "function_call" {
				name, args = it.Name, it.Arguments
			}
		}
		if r.Status == "completed" && r.Usage != nil && r.Usage.TotalTokens > 0 {
			stop = "ok"
		}
	}
	if strings.TrimSpace(text) != benchProse || name != "get_weather" || args != benchArgs || stop != "ok" {
		return fmt.Errorf("got %q, call %s(%s), %s: want %q and the weather call, with usage:\n%s", text, name, args, stop, benchProse, data)
	}
	return nil
}

// benchTransport keeps enough connections open for every client at once.
func benchTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// benchEnv is an upstream, a gateway in front of it serving the three
// models, and a client.
type benchEnv struct {
	up     *benchUpstream
	gw     string // the gateway's chat completions URL
	client *http.Client
	// stopGateway stops the gateway and returns what its Serve returned.
	stopGateway func() error
}

// benchStart starts an environment. The gateway reaches the upstream with
// the OpenAI client's default HTTP client, as ptk serve does. With
// PTK_BENCH_GATEWAY=process the gateway runs in a process of its own (this
// test binary again, see TestBenchGatewayProcess), as ptk serve does
// between its clients and its model server; by default in this one.
func benchStart(tb testing.TB) *benchEnv {
	tb.Helper()
	// Each part's goroutines carry a profiler label (role: upstream,
	// gateway, client), so that a CPU profile tells the gateway's time from
	// the harness's: go tool pprof -tagfocus role=gateway.
	e := &benchEnv{client: &http.Client{Transport: benchTransport()}}
	pprof.Do(context.Background(), pprof.Labels("role", "upstream"), func(context.Context) { e.up = benchStartUpstream() })
	if os.Getenv("PTK_BENCH_GATEWAY") == "process" {
		benchStartProcess(tb, e)
		return e
	}
	s, ln := benchGatewayListening(tb, e.up.srv.URL+"/v1")
	ctx, cancel := context.WithCancel(context.Background())
	serveDone := make(chan error, 1)
	go pprof.Do(ctx, pprof.Labels("role", "gateway"), func(ctx context.Context) { serveDone <- s.Serve(ctx, ln) })
	e.gw = "http://" + ln.Addr().String() + "/v1/chat/completions"
	e.stopGateway = func() error { cancel(); return <-serveDone }
	return e
}

// benchGateway is the benchmark's gateway in front of the upstream at base.
func benchGateway(base string) (*gateway.Server, error) {
	oc := openai.New(base, openai.WithMaxRetries(0))
	return gateway.New(gateway.Config{
		Logger: slog.New(slog.DiscardHandler),
		// The load test's slow-body clients are cut after this.
		BodyIdleTimeout: loadSlowIdle,
		Resolve: func(name string) (gateway.Upstream, error) {
			switch name {
			case benchPTK:
				return gateway.Upstream{Model: oc, Name: benchModel, Mode: agent.ModePTK}, nil
			case benchNative:
				return gateway.Upstream{Model: oc, Mode: agent.ModeNative, Forward: oc}, nil
			case benchAlias:
				return gateway.Upstream{Model: oc, Name: benchNative, Mode: agent.ModeNative, Forward: oc}, nil
			}
			return gateway.Upstream{}, fmt.Errorf("no model %q", name)
		},
	})
}

// benchGatewayListening is benchGateway and a loopback listener for it.
func benchGatewayListening(tb testing.TB, base string) (*gateway.Server, net.Listener) {
	tb.Helper()
	s, err := benchGateway(base)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return s, ln
}

// benchStartProcess starts the gateway in a process of its own: this
// binary running TestBenchGatewayProcess, which says its address on its
// standard output and serves until its standard input closes.
func benchStartProcess(tb testing.TB, e *benchEnv) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestBenchGatewayProcess$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "PTK_BENCH_GATEWAY_UPSTREAM="+e.up.srv.URL+"/v1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		in.Close()
		cmd.Wait()
		tb.Fatalf("the gateway's process: %v", err)
	}
	e.gw = "http://" + strings.TrimSpace(addr) + "/v1/chat/completions"
	benchGatewayPID.Store(int64(cmd.Process.Pid))
	e.stopGateway = func() error {
		benchGatewayPID.Store(0)
		in.Close()
		go io.Copy(io.Discard, out)
		return cmd.Wait()
	}
}

// TestBenchGatewayProcess is the gateway of benchStartProcess, run only as
// its child (PTK_BENCH_GATEWAY_UPSTREAM set).
func TestBenchGatewayProcess(t *testing.T) {
	base := os.Getenv("PTK_BENCH_GATEWAY_UPSTREAM")
	if base == "" {
		t.Skip("the gateway of BenchmarkAddedLatency with PTK_BENCH_GATEWAY=process")
	}
	s, ln := benchGatewayListening(t, base)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	fmt.Println(ln.Addr().String())
	if err := s.Serve(ctx, ln); err != nil {
		t.Fatal(err)
	}
}

func (e *benchEnv) stop() error {
	e.client.CloseIdleConnections()
	err := e.stopGateway()
	e.up.close()
	return err
}

// benchPost sends body to url and reads the whole answer into buf (which
// may be nil); an answer whose status is not 200 is an error.
func benchPost(ctx context.Context, c *http.Client, url string, body []byte, buf *bytes.Buffer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if buf != nil {
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	if resp.StatusCode != http.StatusOK {
		msg := ""
		if buf != nil {
			msg = buf.String()
		}
		return fmt.Errorf("status %d %s", resp.StatusCode, msg)
	}
	return err
}

// benchAnswer is what a client reads of an answer, whole or streamed.
type benchAnswer struct {
	content string
	calls   []benchCall
	finish  string
	usage   bool
}

type benchCall struct{ id, name, args string }

// benchRead reads an answer: a chat.completion, or the chunks of an event
// stream up to its [DONE].
func benchRead(data []byte, stream bool) (benchAnswer, error) {
	type call struct {
		Index    int    `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	type msg struct {
		Content   *string `json:"content"`
		ToolCalls []call  `json:"tool_calls"`
	}
	type completion struct {
		Object  string `json:"object"`
		Choices []struct {
			Message      *msg    `json:"message"`
			Delta        *msg    `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	var a benchAnswer
	if !stream {
		var c completion
		if err := json.Unmarshal(data, &c); err != nil {
			return a, fmt.Errorf("answer %q: %v", data, err)
		}
		if c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].Message == nil || c.Choices[0].FinishReason == nil {
			return a, fmt.Errorf("answer %s: not one choice with a message and a finish reason", data)
		}
		m := c.Choices[0].Message
		if m.Content != nil {
			a.content = *m.Content
		}
		for _, tc := range m.ToolCalls {
			a.calls = append(a.calls, benchCall{tc.ID, tc.Function.Name, tc.Function.Arguments})
		}
		a.finish, a.usage = *c.Choices[0].FinishReason, c.Usage != nil && c.Usage.TotalTokens > 0
		return a, nil
	}
	var text strings.Builder
	done := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		d, ok := bytes.CutPrefix(line, []byte("data: "))
		switch {
		case !ok:
			return a, fmt.Errorf("stream line %q is not an event", line)
		case done:
			return a, fmt.Errorf("stream goes on after [DONE]: %q", line)
		case string(d) == "[DONE]":
			done = true
			continue
		}
		var c completion
		if err := json.Unmarshal(d, &c); err != nil || c.Object != "chat.completion.chunk" {
			return a, fmt.Errorf("stream event %q is not a chunk (%v)", d, err)
		}
		if c.Usage != nil && c.Usage.TotalTokens > 0 {
			a.usage = true
		}
		for _, ch := range c.Choices {
			if ch.FinishReason != nil {
				a.finish = *ch.FinishReason
			}
			if ch.Delta == nil {
				continue
			}
			if ch.Delta.Content != nil {
				text.WriteString(*ch.Delta.Content)
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == len(a.calls) {
					a.calls = append(a.calls, benchCall{})
				}
				if tc.Index < 0 || tc.Index >= len(a.calls) {
					return a, fmt.Errorf("stream event %q: call index %d out of order", d, tc.Index)
				}
				c := &a.calls[tc.Index]
				c.id += tc.ID
				c.name += tc.Function.Name
				c.args += tc.Function.Arguments
			}
		}
	}
	if !done {
		return a, fmt.Errorf("stream ended without [DONE]: %q", data)
	}
	a.content = text.String()
	return a, nil
}

// benchCheck reads an answer and checks it is the one expected: the
// weather call with its sentence, or (final) the answer that uses the
// tool's result. It returns the call's id.
func benchCheck(data []byte, stream, final bool) (string, error) {
	a, err := benchRead(data, stream)
	if err != nil {
		return "", err
	}
	if !a.usage {
		return "", fmt.Errorf("answer %q has no usage", data)
	}
	if final {
		if a.content != benchFinal || len(a.calls) != 0 || a.finish != "stop" {
			return "", fmt.Errorf("got %+v, want the final answer %q with no call and finish_reason stop", a, benchFinal)
		}
		return "", nil
	}
	if strings.TrimSpace(a.content) != benchProse || len(a.calls) != 1 || a.finish != "tool_calls" {
		return "", fmt.Errorf("got %+v, want %q and one call with finish_reason tool_calls", a, benchProse)
	}
	c := a.calls[0]
	if c.name != "get_weather" || c.args != benchArgs || !strings.HasPrefix(c.id, "call_") {
		return "", fmt.Errorf("got the call %+v, want get_weather(%s) with an id call_…", c, benchArgs)
	}
	return c.id, nil
}

// benchPercentiles sorts ds and returns its 50th, 90th and 99th
// percentiles.
func benchPercentiles(ds []time.Duration) (p50, p90, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return at(0.50), at(0.90), at(0.99)
}

func benchMicros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// benchReportLatency reports the percentiles of ds as custom metrics.
func benchReportLatency(b *testing.B, prefix string, ds []time.Duration) {
	p50, p90, p99 := benchPercentiles(ds)
	b.ReportMetric(benchMicros(p50), prefix+"p50-us")
	b.ReportMetric(benchMicros(p90), prefix+"p90-us")
	b.ReportMetric(benchMicros(p99), prefix+"p99-us")
}

// benchCPU measures the CPU time the process (client, gateway and upstream
// together) spends per request, from getrusage: unlike the time per
// request, it does not change when other processes take the cores, so
// cores / cpu-us-per-req is the throughput the cores would give. Where
// there is no getrusage it reports nothing.
type benchCPU struct {
	t0 time.Duration
	ok bool
}

func (c *benchCPU) start() { c.t0, c.ok = benchProcessCPU() }

func (c *benchCPU) report(b *testing.B, requests int) { c.reportAs(b, requests, "cpu-us/req") }

// reportAs reports the CPU time per one of n as the metric unit.
func (c *benchCPU) reportAs(b *testing.B, n int, unit string) {
	t1, ok := benchProcessCPU()
	if !c.ok || !ok || n == 0 {
		return
	}
	b.ReportMetric(benchMicros(t1-c.t0)/float64(n), unit)
}

// benchCase is one request to one place: Chat Completions unless api
// says "messages" or "responses" (or "raw": the upstream's answer in the
// text protocol, read directly).
type benchCase struct {
	name   string
	url    func(*benchEnv) string
	body   []byte
	stream bool
	api    string
}

func benchDirectURL(e *benchEnv) string  { return e.up.url() }
func benchGatewayURL(e *benchEnv) string { return e.gw }

var (
	benchDirectWhole  = benchCase{"direct", benchDirectURL, benchRequest(benchNative, false, false), false, ""}
	benchDirectStream = benchCase{"direct-stream", benchDirectURL, benchRequest(benchNative, true, false), true, ""}
	// The same request, answered as the gateway's PTK requests are.
	benchDirectPTKWhole  = benchCase{"direct-ptk", benchDirectURL, benchRequest(benchDirectPTK, false, false), false, "raw"}
	benchDirectPTKStream = benchCase{"direct-ptk-stream", benchDirectURL, benchRequest(benchDirectPTK, true, false), true, "raw"}
	benchPTKWhole        = benchCase{"ptk", benchGatewayURL, benchRequest(benchPTK, false, false), false, ""}
	benchPTKStream       = benchCase{"ptk-stream", benchGatewayURL, benchRequest(benchPTK, true, false), true, ""}
	benchPassWhole       = benchCase{"passthrough", benchGatewayURL, benchRequest(benchNative, false, false), false, ""}
	benchPassStream      = benchCase{"passthrough-stream", benchGatewayURL, benchRequest(benchNative, true, false), true, ""}
	benchPassAlias       = benchCase{"passthrough-renamed", benchGatewayURL, benchRequest(benchAlias, false, false), false, ""}

	benchMessagesWhole   = benchCase{"messages", benchMessagesURL, benchAgentRequest("messages", benchPTK, false), false, "messages"}
	benchMessagesStream  = benchCase{"messages-stream", benchMessagesURL, benchAgentRequest("messages", benchPTK, true), true, "messages"}
	benchResponsesWhole  = benchCase{"responses", benchResponsesURL, benchAgentRequest("responses", benchPTK, false), false, "responses"}
	benchResponsesStream = benchCase{"responses-stream", benchResponsesURL, benchAgentRequest("responses", benchPTK, true), true, "responses"}
)

func benchMessagesURL(e *benchEnv) string {
	return strings.TrimSuffix(e.gw, "/chat/completions") + "/messages"
}
func benchResponsesURL(e *benchEnv) string {
	return strings.TrimSuffix(e.gw, "/chat/completions") + "/responses"
}

// benchVerify sends c once and checks its answer, so that a benchmark
// measures answers known to be right.
func benchVerify(b *testing.B, e *benchEnv, c benchCase) {
	b.Helper()
	var buf bytes.Buffer
	if err := benchPost(context.Background(), e.client, c.url(e), c.body, &buf); err != nil {
		b.Fatalf("%s: %v", c.name, err)
	}
	if c.api == "raw" {
		a, err := benchRead(buf.Bytes(), c.stream)
		if err == nil && (a.content != benchPTKReply || len(a.calls) != 0 || a.finish != "stop" || !a.usage) {
			err = fmt.Errorf("got %+v, want the text protocol's reply %q with usage", a, benchPTKReply)
		}
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		return
	}
	if c.api != "" {
		if err := benchCheckAgent(c.api, buf.Bytes(), c.stream); err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		return
	}
	if _, err := benchCheck(buf.Bytes(), c.stream, false); err != nil {
		b.Fatalf("%s: %v", c.name, err)
	}
}

// benchSequential sends c over and over from one client and reports the
// latency percentiles.
func benchSequential(b *testing.B, c benchCase) {
	e := benchStart(b)
	defer func() {
		if err := e.stop(); err != nil {
			b.Error(err)
		}
	}()
	benchVerify(b, e, c)
	url, ctx := c.url(e), context.Background()
	ds := make([]time.Duration, 0, 4096)
	b.ReportAllocs()
	var cpu benchCPU
	for b.Loop() {
		if len(ds) == 0 {
			cpu.start()
		}
		t0 := time.Now()
		if err := benchPost(ctx, e.client, url, c.body, nil); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	cpu.report(b, len(ds))
	benchReportLatency(b, "", ds)
}

// BenchmarkDirect is the floor: the client calls the upstream itself, with
// the same request, whole and streamed.
func BenchmarkDirect(b *testing.B) {
	b.Run("whole", func(b *testing.B) { benchSequential(b, benchDirectWhole) })
	b.Run("stream", func(b *testing.B) { benchSequential(b, benchDirectStream) })
}

// BenchmarkGatewayPTK: the gateway teaches the model the text protocol and
// reads the call out of its whole reply.
func BenchmarkGatewayPTK(b *testing.B) { benchSequential(b, benchPTKWhole) }

// BenchmarkGatewayPTKStream: the same, streamed; the upstream sends its
// reply in pieces of five bytes.
func BenchmarkGatewayPTKStream(b *testing.B) { benchSequential(b, benchPTKStream) }

// BenchmarkGatewayPassthrough: native mode, the request and the answer
// copied as they are (renamed: the gateway names another model upstream,
// so it rewrites the request's model).
func BenchmarkGatewayPassthrough(b *testing.B) {
	b.Run("whole", func(b *testing.B) { benchSequential(b, benchPassWhole) })
	b.Run("stream", func(b *testing.B) { benchSequential(b, benchPassStream) })
	b.Run("renamed", func(b *testing.B) { benchSequential(b, benchPassAlias) })
}

// BenchmarkGatewayAgents: the agents' APIs, the model taught the text
// protocol, whole and streamed.
func BenchmarkGatewayAgents(b *testing.B) {
	for _, c := range []benchCase{benchMessagesWhole, benchMessagesStream, benchResponsesWhole, benchResponsesStream} {
		b.Run(c.name, func(b *testing.B) { benchSequential(b, c) })
	}
}

// benchClients is how many clients send requests at once in the
// throughput benchmark.
const benchClients = 32

// BenchmarkGatewayParallel is throughput: benchClients clients at once,
// each sending its next request as soon as it has read the answer.
// req/s counts answers a second; the latency percentiles are each
// request's.
func BenchmarkGatewayParallel(b *testing.B) {
	for _, c := range []benchCase{benchDirectWhole, benchPTKWhole, benchPTKStream, benchPassWhole} {
		b.Run(c.name, func(b *testing.B) { benchParallel(b, c) })
	}
}

func benchParallel(b *testing.B, c benchCase) {
	e := benchStart(b)
	defer func() {
		if err := e.stop(); err != nil {
			b.Error(err)
		}
	}()
	benchVerify(b, e, c)
	url, ctx := c.url(e), context.Background()
	var (
		mu     sync.Mutex
		all    []time.Duration
		errs   int
		first  error
		perCPU = (benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	)
	b.SetParallelism(perCPU)
	b.ReportAllocs()
	var cpu benchCPU
	cpu.start()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ds := make([]time.Duration, 0, 1024)
		var bad int
		var err1 error
		for pb.Next() {
			t0 := time.Now()
			if err := benchPost(ctx, e.client, url, c.body, nil); err != nil {
				bad++
				if err1 == nil {
					err1 = err
				}
				continue
			}
			ds = append(ds, time.Since(t0))
		}
		mu.Lock()
		all = append(all, ds...)
		errs += bad
		if first == nil {
			first = err1
		}
		mu.Unlock()
	})
	elapsed := b.Elapsed()
	b.StopTimer()
	if errs > 0 {
		b.Errorf("%d of %d requests failed; the first: %v", errs, b.N, first)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	cpu.report(b, b.N)
	benchReportLatency(b, "", all)
}

// benchPair is a request sent directly to the upstream and its like sent
// through the gateway, which the upstream answers alike.
type benchPair struct {
	name            string
	direct, gateway benchCase
}

// benchPairs are the pairs the latency benchmarks compare: one a path.
var benchPairs = []benchPair{
	{"ptk", benchDirectPTKWhole, benchPTKWhole},
	{"ptk-stream", benchDirectPTKStream, benchPTKStream},
	{"passthrough", benchDirectWhole, benchPassWhole},
	{"passthrough-stream", benchDirectStream, benchPassStream},
	{"messages", benchDirectPTKWhole, benchMessagesWhole},
	{"messages-stream", benchDirectPTKStream, benchMessagesStream},
	{"responses", benchDirectPTKWhole, benchResponsesWhole},
	{"responses-stream", benchDirectPTKStream, benchResponsesStream},
}

// benchStartPair starts an environment for p, whose upstream sends a
// stream's events pace apart (at once when 0), and checks both of p's
// answers once. The environment stops when b ends.
func benchStartPair(b *testing.B, p benchPair, pace time.Duration) *benchEnv {
	e := benchStart(b)
	b.Cleanup(func() {
		if err := e.stop(); err != nil {
			b.Error(err)
		}
	})
	e.up.pace.Store(int64(pace))
	benchVerify(b, e, p.direct)
	benchVerify(b, e, p.gateway)
	return e
}

// BenchmarkStreamTail is BenchmarkAddedLatency's streamed pairs with the
// upstream's events paced as a model server sends them, PTK_BENCH_PACE
// apart (1ms by default: a fast model; pace-us reports the pauses as they
// were), instead of written at once. It reports what a client waits for
// after the model's last event, directly and through the gateway, and the
// difference (tail-added). On a burst, as BenchmarkAddedLatency's upstream
// writes, the gateway reads the whole answer after the upstream has written
// it and its work on every event adds to the wait; paced, it reads and
// passes on each event as it comes, and what is left for the end is the
// last event's work and the answer's end.
func BenchmarkStreamTail(b *testing.B) {
	pace := time.Millisecond
	if v := os.Getenv("PTK_BENCH_PACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("PTK_BENCH_PACE: %v", err)
		}
		pace = d
	}
	for _, p := range benchPairs {
		if !p.gateway.stream {
			continue
		}
		b.Run(p.name, func(b *testing.B) {
			e := benchStartPair(b, p, pace)
			cases := [2]benchCase{p.direct, p.gateway}
			urls := [2]string{p.direct.url(e), p.gateway.url(e)}
			var tails [2][]time.Duration
			i := 0
			for b.Loop() {
				for k := range 2 {
					j := (i + k) % 2
					if err := benchPost(context.Background(), e.client, urls[j], cases[j].body, nil); err != nil {
						b.Fatal(err)
					}
					tails[j] = append(tails[j], time.Duration(time.Now().UnixNano()-e.up.lastEvent.Load()))
				}
				i++
			}
			d50, _, d99 := benchPercentiles(tails[0])
			g50, _, g99 := benchPercentiles(tails[1])
			if n := e.up.pauses.Load(); n > 0 {
				b.ReportMetric(benchMicros(time.Duration(e.up.paused.Load()/n)), "pace-us")
			}
			b.ReportMetric(benchMicros(d50), "tail-direct-p50-us")
			b.ReportMetric(benchMicros(g50), "tail-gateway-p50-us")
			b.ReportMetric(benchMicros(g50-d50), "tail-added-p50-us")
			// The p99s on their own: a few hundred pairs' p99 is their
			// worst few, the pauses' jitter as much as the gateway's, and
			// the difference of two such is noise.
			b.ReportMetric(benchMicros(d99), "tail-direct-p99-us")
			b.ReportMetric(benchMicros(g99), "tail-gateway-p99-us")
		})
	}
}

// BenchmarkAddedLatency sends the same request alternately to the upstream
// and through the gateway, one at a time, and reports the median of each
// and their difference: what the gateway adds to a call. The two get the
// same answer from the upstream: the native call for pass-through, the
// text protocol's reply for the paths the gateway serves in it.
func BenchmarkAddedLatency(b *testing.B) {
	for _, p := range benchPairs {
		b.Run(p.name, func(b *testing.B) {
			e := benchStartPair(b, p, 0)
			ctx := pprof.WithLabels(context.Background(), pprof.Labels("role", "client"))
			pprof.SetGoroutineLabels(ctx)
			defer pprof.SetGoroutineLabels(context.Background())
			cases := [2]benchCase{p.direct, p.gateway}
			urls := [2]string{p.direct.url(e), p.gateway.url(e)}
			var ds [2][]time.Duration
			var cpu benchCPU
			i := 0
			for b.Loop() {
				if i == 0 {
					cpu.start()
				}
				// Alternate which goes first, so that neither always
				// finds the connections and caches the other warmed.
				for k := range 2 {
					j := (i + k) % 2
					t0 := time.Now()
					if err := benchPost(ctx, e.client, urls[j], cases[j].body, nil); err != nil {
						b.Fatal(err)
					}
					ds[j] = append(ds[j], time.Since(t0))
				}
				i++
			}
			// The CPU time of a pair: the direct request's (upstream and
			// client) and the gateway's (the same, and the gateway's own).
			cpu.reportAs(b, i, "cpu-us/pair")
			d50, _, d99 := benchPercentiles(ds[0])
			g50, _, g99 := benchPercentiles(ds[1])
			b.ReportMetric(benchMicros(d50), "direct-p50-us")
			b.ReportMetric(benchMicros(g50), "gateway-p50-us")
			b.ReportMetric(benchMicros(g50-d50), "added-p50-us")
			b.ReportMetric(benchMicros(g99-d99), "added-p99-us")
		})
	}
}
