package mcp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk/internal/jsonclip"
)

// floodMiB is the size of the flood tool's result in MiB: 300, as an issue
// reproduced it; under the race detector, which makes the moving of 300 MiB
// take minutes, 40 (still above the SDK's own limit of 16 MiB, and .ci/run
// runs the 300 MiB without -race).
func floodMiB() int {
	if n, err := strconv.Atoi(os.Getenv("PTK_MCP_FLOOD_MIB")); err == nil && n > 0 {
		return n
	}
	if raceEnabled {
		return 40
	}
	return 300
}

// floodServer speaks MCP by hand, so that it can answer a call with more
// than any library would hold: its tool flood returns floodMiB() MiB of
// text, written as it goes; echo answers as usual. Each message is handed
// to send, which writes it whole or, for flood, streams it.
type floodServer struct {
	floods atomic.Int32
}

// handle answers one message; it returns false for a notification.
func (f *floodServer) handle(line []byte, send func(id json.RawMessage, result string, flood bool)) bool {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Name            string          `json:"name"`
			Arguments       json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || req.ID == nil {
		return false
	}
	switch req.Method {
	case "initialize":
		send(req.ID, fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}`, req.Params.ProtocolVersion), false)
	case "tools/list":
		send(req.ID, `{"tools":[{"name":"flood","description":"Returns 300 MiB.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},`+
			`{"name":"echo","description":"Echoes.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]}`, false)
	case "tools/call":
		if req.Params.Name == "flood" {
			f.floods.Add(1)
			send(req.ID, "", true)
			return true
		}
		var a struct{ Text string }
		json.Unmarshal(req.Params.Arguments, &a)
		b, _ := json.Marshal("echo: " + a.Text)
		send(req.ID, `{"content":[{"type":"text","text":`+string(b)+`}]}`, false)
	default:
		send(req.ID, `{}`, false)
	}
	return true
}

// writeFlood writes the flood result's message for id.
func writeFlood(w io.Writer, id json.RawMessage) error {
	if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"BEGIN `, id); err != nil {
		return err
	}
	const line = "all work and no play makes jack a dull boy. "
	chunk := []byte(strings.Repeat(line, 1<<20/len(line)+1)[:1<<20])
	for range floodMiB() {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, ` END"}],"isError":false}}`)
	return err
}

// floodStdio is the fake server's "flood" mode: newline-delimited JSON-RPC
// on stdin and stdout.
func floodStdio() {
	f := &floodServer{}
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f.handle(sc.Bytes(), func(id json.RawMessage, result string, flood bool) {
			if flood {
				writeFlood(out, id)
				out.WriteString("\n")
			} else {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
			}
			out.Flush()
		})
	}
}

// floodHTTP serves the flood server over streamable HTTP, answering each
// call as application/json or, with sse, as one server-sent event.
func floodHTTP(sse bool) http.Handler {
	f := &floodServer{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		answered := f.handle(body, func(id json.RawMessage, result string, flood bool) {
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: message\ndata: ")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			if flood {
				writeFlood(w, id)
			} else {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
			}
			if sse {
				io.WriteString(w, "\n\n")
			}
		})
		if !answered {
			w.WriteHeader(http.StatusAccepted)
		}
	})
}

// peakHeap samples the heap in use until stop is called, and returns the
// most it saw.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// TestHugeResult calls a tool whose result is 300 MiB, over stdio and
// over streamable HTTP (a JSON answer and an event stream): the result is
// cut, says so first, ptk's heap stays far below the result's size, and
// the server answers the next call. Over HTTP ptk used to reach about
// 2 GiB; over stdio and SSE the SDK's 16 MiB limit ended the connection.
func TestHugeResult(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 300 MiB three times")
	}
	t.Logf("a result of %d MiB", floodMiB())
	plain := httptest.NewServer(floodHTTP(false))
	t.Cleanup(plain.Close)
	sse := httptest.NewServer(floodHTTP(true))
	t.Cleanup(sse.Close)
	for name, cfg := range map[string]ServerConfig{
		"stdio": fakeConfig("flood"),
		"json":  {URL: plain.URL},
		"sse":   {URL: sse.URL},
	} {
		t.Run(name, func(t *testing.T) {
			if cfg.Command != "" {
				cfg.Env["PTK_MCP_FLOOD_MIB"] = strconv.Itoa(floodMiB())
			}
			// Under the race detector the SDK decodes a kept MiB as slowly
			// as it would read dozens: keep less.
			keep := DefaultMaxMessageBytes
			if raceEnabled {
				keep = 1 << 20
			}
			c, err := startFake(t, Options{CallTimeout: 5 * time.Minute, MaxMessageBytes: keep}, map[string]ServerConfig{"big": cfg})
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			stop := peakHeap()
			start := time.Now()
			r := call(t, toolNamed(t, c, "big__flood"), `{}`)
			peak := stop()
			t.Logf("%s: %d bytes of result in %v; heap in use at most %d MiB", name, len(r.Content), time.Since(start).Round(time.Millisecond), peak>>20)
			first, rest, _ := strings.Cut(r.Content, "\n")
			if r.IsError || !strings.HasPrefix(first, fmt.Sprintf("[ptk cut this result: the MCP server sent %d.0 MiB in one message and ptk kept %d.0 MiB of it", floodMiB(), keep>>20)) ||
				!strings.HasPrefix(rest, "BEGIN all work and no play") || strings.Contains(rest, " END") || len(r.Content) > keep+512 {
				t.Errorf("result: %d bytes, IsError %v, begins %.300q", len(r.Content), r.IsError, r.Content)
			}
			if peak > 160<<20 {
				t.Errorf("the heap reached %d MiB reading a result of %d MiB", peak>>20, floodMiB())
			}
			if r := call(t, toolNamed(t, c, "big__echo"), `{"text":"still there?"}`); r.IsError || r.Content != "echo: still there?" {
				t.Errorf("after the huge result: %+v", r)
			}
		})
	}
}

func TestMarkCut(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{"ptk/cut":{"read":9000,"kept":48}}}}`},
		{`{"id":1,"result":{}}`, `{"id":1,"result":{"_meta":{"ptk/cut":{"read":9000,"kept":20}}}}`},
		// The server's own _meta comes first; ptk's, last, is the one read.
		{`{"id":1,"result":{"_meta":{"x":1}}}`, `{"id":1,"result":{"_meta":{"x":1},"_meta":{"ptk/cut":{"read":9000,"kept":35}}}}`},
		{`{"id":1,"result":[1]}`, `{"id":1,"result":[1]}`},
		{`{"id":1,"error":{"code":1}}`, `{"id":1,"error":{"code":1}}`},
	} {
		r := jsonclip.NewReader(strings.NewReader(c.in), 1<<20, essential...)
		out, info, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		info.Read = 9000
		if got := string(markCut(out, info)); got != c.want {
			t.Errorf("markCut(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	var res struct {
		Meta map[string]any `json:"_meta"`
	}
	json.Unmarshal([]byte(`{"_meta":{"x":1},"_meta":{"ptk/cut":{"read":9000,"kept":36}}}`), &res)
	if cutNote(res.Meta) == "" {
		t.Error("the last _meta is not the one read")
	}
}

// TestBoundSSE rewrites event streams as the SDK reads them: fields other
// than data kept (cut to 4 KiB), data read as one JSON value over its
// lines, line ends of every kind, and an event's end seen without waiting
// for the next one.
func TestBoundSSE(t *testing.T) {
	in := ": a comment\r\n" +
		"event: message\r\nid: 7\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata:  \"id\":1,\"result\":{\"text\":\"" + strings.Repeat("x", 400) + "\"}}\r\n\r\n" +
		"data:{\"a\":1}\n\n" +
		"data: not json at all\n\n" +
		"id: " + strings.Repeat("i", 10000) + "\n\n"
	var out strings.Builder
	if err := boundSSE(&out, strings.NewReader(in), 60); err != nil {
		t.Fatal(err)
	}
	want := ": a comment\r\n" +
		"event: message\r\nid: 7\r\n" + `data: {"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 246) + `","_meta":{"ptk/cut":{"read":448,"kept":291}}}}` + "\n\r\n" +
		"data: {\"a\":1}\n\n" +
		"data: not json at all\n\n" +
		"id: " + strings.Repeat("i", 4096-4) + "\n\n"
	if got := out.String(); got != want {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("they differ at %d:\ngot  %.200q\nwant %.200q", i, got[i:], want[i:])
	}

	// An event's end is passed on before the next event comes.
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	go boundSSE(outW, pr, 1<<20)
	go io.WriteString(pw, "data: {\"id\":1}\n\n")
	got := make([]byte, 64)
	n, _ := io.ReadAtLeast(outR, got, len("data: {\"id\":1}\n\n"))
	if string(got[:n]) != "data: {\"id\":1}\n\n" {
		t.Errorf("the first event: %q", got[:n])
	}
	pw.Close()
}

// A stream that fails ends the pump, which says why.
func TestPumpLinesStops(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		pumpLines(pw, io.MultiReader(strings.NewReader("{\"id\":1}\n"), failing{}), 1<<20)
		close(done)
	}()
	b, err := io.ReadAll(pr)
	if string(b) != "{\"id\":1}\n" || err == nil || !strings.Contains(err.Error(), "the pipe broke") {
		t.Errorf("read %q, %v", b, err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the pump did not stop")
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("the pipe broke") }
