package gateway_test

// The gateway's own work per request, without the network: the handler
// served in process (ServeHTTP into a recorder), in front of a scripted
// model that streams the same reply as benchUpstream (the text protocol's
// call, in pieces of five bytes). What the over-the-network benchmarks
// measure beside it — the loopback hops, the upstream client reading its
// stream — is left out, so that a change to the decoders, the turn or the
// event writers shows in CPU time and allocations on a shared machine.
//
//	go test ./gateway -run '^$' -bench GatewayOwn -benchmem -count 6

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm"
)

// benchScripted streams benchPTKReply as benchUpstream does, whatever it
// is asked: one chunk a piece, each its own read from the network (More
// false), the finish and the usage last. Made with burst, the chunks come
// as one read brings them all (More on all but the last): what the
// gateway finds when the upstream has written its whole answer before
// the gateway reads it, as in BenchmarkAddedLatency most of the time.
type benchScripted struct{ chunks []llm.Chunk }

var (
	_ llm.Model    = (*benchScripted)(nil)
	_ llm.Streamer = (*benchScripted)(nil)
)

func newBenchScripted(burst bool) *benchScripted {
	m := &benchScripted{}
	for _, p := range benchPieces(benchPTKReply, 5) {
		m.chunks = append(m.chunks, llm.Chunk{Text: p, More: burst})
	}
	u := ptk.Usage{PromptTokens: 912, CompletionTokens: 41}
	m.chunks = append(m.chunks, llm.Chunk{FinishReason: "stop", Model: benchModel, More: burst}, llm.Chunk{Usage: &u})
	return m
}

func (m *benchScripted) Generate(context.Context, llm.Request) (*llm.Response, error) {
	return &llm.Response{Content: benchPTKReply, FinishReason: "stop", Model: benchModel,
		Usage: ptk.Usage{PromptTokens: 912, CompletionTokens: 41}}, nil
}

func (m *benchScripted) Stream(ctx context.Context, _ llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		for _, c := range m.chunks {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// benchOwnServer is a gateway in front of the scripted model.
func benchOwnServer(tb testing.TB, burst bool) *gateway.Server {
	m := newBenchScripted(burst)
	s, err := gateway.New(gateway.Config{
		Logger: slog.New(slog.DiscardHandler),
		Resolve: func(name string) (gateway.Upstream, error) {
			if name != benchPTK {
				return gateway.Upstream{}, fmt.Errorf("no model %q", name)
			}
			return gateway.Upstream{Model: m, Name: benchModel, Mode: agent.ModePTK}, nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// benchOwnCases are the gateway's PTK paths: each API, whole and streamed
// (a read a piece, and -burst: the whole answer in one read).
var benchOwnCases = []struct {
	name, path    string
	body          []byte
	api           string
	stream, burst bool
}{
	{"chat", "/v1/chat/completions", benchRequest(benchPTK, false, false), "", false, false},
	{"chat-stream", "/v1/chat/completions", benchRequest(benchPTK, true, false), "", true, false},
	{"chat-stream-burst", "/v1/chat/completions", benchRequest(benchPTK, true, false), "", true, true},
	{"messages", "/v1/messages", benchAgentRequest("messages", benchPTK, false), "messages", false, false},
	{"messages-stream", "/v1/messages", benchAgentRequest("messages", benchPTK, true), "messages", true, false},
	{"messages-stream-burst", "/v1/messages", benchAgentRequest("messages", benchPTK, true), "messages", true, true},
	{"responses", "/v1/responses", benchAgentRequest("responses", benchPTK, false), "responses", false, false},
	{"responses-stream", "/v1/responses", benchAgentRequest("responses", benchPTK, true), "responses", true, false},
	{"responses-stream-burst", "/v1/responses", benchAgentRequest("responses", benchPTK, true), "responses", true, true},
}

// benchOwnCtx says, as net/http does, which address the request came in
// on: the gateway's Host check compares the two.
var benchOwnCtx = context.WithValue(context.Background(), http.LocalAddrContextKey,
	&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})

// benchServeOwn serves one request in process into w.
func benchServeOwn(s *gateway.Server, w http.ResponseWriter, path string, body []byte) {
	req := httptest.NewRequestWithContext(benchOwnCtx, http.MethodPost, "http://127.0.0.1:8080"+path, bytes.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Content-Type", "application/json")
	s.ServeHTTP(w, req)
}

// benchDiscard is a ResponseWriter that counts what it is given, as a
// connection that sends it on would, instead of keeping it as
// httptest.ResponseRecorder does (whose growing body was half the bytes a
// streamed request allocated).
type benchDiscard struct {
	h       http.Header
	status  int
	n       int
	writes  int
	flushes int
}

var _ http.Flusher = (*benchDiscard)(nil)

func (d *benchDiscard) Header() http.Header { return d.h }
func (d *benchDiscard) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}
func (d *benchDiscard) Write(b []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	d.n += len(b)
	d.writes++
	return len(b), nil
}
func (d *benchDiscard) Flush() { d.flushes++ }

// BenchmarkGatewayOwn is the gateway's CPU time and allocations per
// request, each API whole and streamed, every answer checked first.
func BenchmarkGatewayOwn(b *testing.B) {
	for _, c := range benchOwnCases {
		b.Run(c.name, func(b *testing.B) {
			s := benchOwnServer(b, c.burst)
			rec := httptest.NewRecorder()
			benchServeOwn(s, rec, c.path, c.body)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			var err error
			if c.api != "" {
				err = benchCheckAgent(c.api, rec.Body.Bytes(), c.stream)
			} else {
				_, err = benchCheck(rec.Body.Bytes(), c.stream, false)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var cpu benchCPU
			cpu.start()
			n, writes, flushes := 0, 0, 0
			for b.Loop() {
				d := benchDiscard{h: http.Header{}}
				benchServeOwn(s, &d, c.path, c.body)
				if d.status != http.StatusOK || d.n == 0 {
					b.Fatalf("status %d, %d bytes", d.status, d.n)
				}
				n++
				writes += d.writes
				flushes += d.flushes
			}
			cpu.report(b, n)
			// How many writes to the connection a request made (flushes),
			// and how many Writes the handler gave the ResponseWriter.
			b.ReportMetric(float64(flushes)/float64(n), "flushes/req")
			b.ReportMetric(float64(writes)/float64(n), "writes/req")
		})
	}
}
