package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os/exec"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptkit/ptk/internal/jsonclip"
)

// DefaultMaxMessageBytes is how much of one message from a server ptk
// reads when Options.MaxMessageBytes is zero.
const DefaultMaxMessageBytes = 8 << 20

// Every message from a server reaches the SDK through a jsonclip.Reader:
// however large the server makes it (300 MiB of tool result, a list of a
// million tools), ptk holds at most about MaxMessageBytes of it, the
// connection goes on (the SDK's own limits, 16 MiB a line over stdio and
// an event over SSE, would otherwise end it), and a cut result says so to
// the model (see ResultText). The JSON-RPC members that route a message
// are kept whatever the size of the rest.
var essential = []string{"jsonrpc", "id", "method", "result", "error"}

// cutMeta is the key of a cut result's _meta: what ptk read and kept.
const cutMeta = "ptk/cut"

// cutInfo is the value of a cut result's cutMeta.
type cutInfo struct {
	// Read is how many bytes the server's message took; Kept how many
	// ptk kept of it.
	Read int64 `json:"read"`
	Kept int   `json:"kept"`
}

// boundedMessage reads one message from jr and returns what to pass to
// the SDK: the message, cut if need be and marked in its result's _meta;
// or, for what is not JSON, its first bytes and the rest of its line (at
// most 4 KiB), so that the SDK fails on it as it would have. At the end of
// the stream it returns io.EOF (io.ErrUnexpectedEOF in a message), and the
// error of a stream that fails.
func boundedMessage(jr *jsonclip.Reader) ([]byte, error) {
	out, info, err := jr.Next()
	var syntax *jsonclip.SyntaxError
	switch {
	case errors.As(err, &syntax):
		bad := append([]byte(nil), jr.Raw()...)
		rest, _ := readLine(jr.Buffered(), 4<<10)
		return append(bad, rest...), nil
	case err != nil:
		// The end of the stream, or of the stream in a message, or a
		// failure to read it.
		return nil, err
	}
	if info.Cut {
		return markCut(out, info), nil
	}
	return out, nil
}

// markCut adds to a cut message's result (when it has one that is an
// object) a _meta member that says how much the server sent. It is added
// last: where the server sent a _meta of its own, ptk's is the one read.
func markCut(msg []byte, info jsonclip.Info) []byte {
	at, ok := info.Members["result"]
	if !ok || at[1]-at[0] < 2 || msg[at[0]] != '{' || msg[at[1]-1] != '}' {
		return msg
	}
	meta, err := json.Marshal(map[string]cutInfo{cutMeta: {Read: info.Read, Kept: len(msg)}})
	if err != nil {
		return msg
	}
	var b bytes.Buffer
	b.Grow(len(msg) + len(meta) + 16)
	b.Write(msg[:at[1]-1])
	if at[1]-at[0] > 2 {
		b.WriteByte(',')
	}
	b.WriteString(`"_meta":`)
	b.Write(meta)
	b.Write(msg[at[1]-1:])
	return b.Bytes()
}

// readLine reads up to the end of the line (which it reads too), keeping
// at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		b, err := br.ReadSlice('\n')
		if len(out) < max {
			out = append(out, b[:min(len(b), max-len(out))]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return out, err
		}
	}
}

// pumpLines copies newline-delimited JSON messages from src to dst, each
// through boundedMessage. When dst is closed it goes on reading src, so
// that a server never blocks on a full pipe.
func pumpLines(dst *io.PipeWriter, src io.Reader, max int) {
	jr := jsonclip.NewReader(src, max, essential...)
	for {
		msg, err := boundedMessage(jr)
		if err != nil {
			dst.CloseWithError(err)
			return
		}
		msg = bytes.TrimRight(msg, "\n")
		if _, err := dst.Write(msg); err == nil {
			_, err = dst.Write([]byte("\n"))
		}
		if err != nil {
			io.Copy(io.Discard, jr.Buffered())
			return
		}
	}
}

// stdioTransport starts a stdio server, as sdk.CommandTransport does, and
// reads its messages through a bound.
type stdioTransport struct {
	cmd       *exec.Cmd
	s         *server
	max       int
	terminate time.Duration
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	t.s.mu.Lock()
	t.s.pid = t.cmd.Process.Pid
	t.s.mu.Unlock()
	pr, pw := io.Pipe()
	go pumpLines(pw, stdout, t.max)
	// The SDK's own line limit stays above what the pump passes on.
	it := &sdk.IOTransport{Reader: pr, Writer: &serverInput{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate},
		MaxLineLength: max(sdk.DefaultMaxLineLength, 2*t.max)}
	return it.Connect(ctx)
}

// serverInput is a stdio server's standard input. Closing it ends the
// server as MCP asks (and as sdk.CommandTransport does): the input is
// closed, the server is given terminate to exit, then SIGTERM, then
// SIGKILL.
type serverInput struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

func (in *serverInput) Close() error {
	if err := in.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing the server's input: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- in.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(in.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if in.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	in.cmd.Process.Kill()
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server did not exit")
}

// boundedBodies is an http.RoundTripper whose responses of JSON and of
// server-sent events are read through a bound.
type boundedBodies struct {
	base http.RoundTripper
	max  int
}

func (b boundedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var pump func(w io.Writer, body io.Reader) error
	switch ct {
	case "application/json":
		pump = func(w io.Writer, body io.Reader) error {
			msg, err := boundedMessage(jsonclip.NewReader(body, b.max, essential...))
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			_, err = w.Write(msg)
			return err
		}
	case "text/event-stream":
		pump = func(w io.Writer, body io.Reader) error { return boundSSE(w, body, b.max) }
	default:
		return resp, nil
	}
	pr, pw := io.Pipe()
	body := resp.Body
	go func() {
		err := pump(pw, body)
		body.Close()
		pw.CloseWithError(err)
	}()
	resp.Body = pipeBody{pr, body}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// pipeBody is a response body read through a pump; closing it closes the
// original too, which ends the pump.
type pipeBody struct {
	*io.PipeReader
	orig io.Closer
}

func (p pipeBody) Close() error {
	p.PipeReader.Close()
	return p.orig.Close()
}

// boundSSE copies server-sent events from src to w, the data of each
// through boundedMessage; other fields are copied, cut to 4 KiB.
func boundSSE(w io.Writer, src io.Reader, max int) error {
	br := bufio.NewReaderSize(src, 64<<10)
	for {
		head, err := br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if head[0] == '\n' || head[0] == '\r' && blankCRLF(br) {
			// A blank line ends the event (the SDK, like ptk, ends lines
			// at \n only).
			line, _ := readLine(br, 2)
			if _, err := w.Write(line); err != nil {
				return err
			}
			continue
		}
		if dataField(br) {
			data := &sseData{br: br}
			msg, err := boundedMessage(jsonclip.NewReader(data, max, essential...))
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			io.Copy(io.Discard, data) // what follows the value in the event
			if _, err := w.Write(append(append([]byte("data: "), msg...), '\n')); err != nil {
				return err
			}
			if data.err != nil && !errors.Is(data.err, io.EOF) {
				return data.err
			}
			continue
		}
		line, err := readLine(br, 4<<10)
		if n := len(line); n == 0 || line[n-1] != '\n' {
			line = append(line, '\n')
		}
		if _, werr := w.Write(line); werr != nil {
			return werr
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// sseData reads the data of one event: the rest of its first data line,
// then the lines of the data fields that follow it, joined by newlines. It
// ends before the first line that is not a data field.
type sseData struct {
	br   *bufio.Reader
	done bool
	err  error
}

func (d *sseData) Read(p []byte) (int, error) {
	if d.done {
		return 0, io.EOF
	}
	buf, err := d.br.Peek(max(min(d.br.Buffered(), len(p)), 1))
	if len(buf) == 0 {
		d.done, d.err = true, err
		return 0, io.EOF
	}
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		n := copy(p, buf)
		d.br.Discard(n)
		return n, nil
	}
	if i > 0 {
		// The data before the line's end (the \r of a \r\n is JSON's
		// whitespace).
		n := copy(p, buf[:i])
		d.br.Discard(n)
		return n, nil
	}
	d.br.Discard(1) // the \n
	if dataField(d.br) {
		p[0] = '\n'
		return 1, nil
	}
	d.done = true
	return 0, io.EOF
}

// blankCRLF reports whether the line that starts with \r is \r\n.
func blankCRLF(br *bufio.Reader) bool {
	b, _ := br.Peek(2)
	return len(b) == 2 && b[1] == '\n'
}

// dataField reads "data:" and the space after it when the line starts
// with them, and nothing otherwise. It looks at one byte more only while
// the line could still be a data field, so that it never waits for the
// next event to see the end of this one.
func dataField(br *bufio.Reader) bool {
	const field = "data:"
	for n := 1; n <= len(field); n++ {
		b, err := br.Peek(n)
		if err != nil || b[n-1] != field[n-1] {
			return false
		}
	}
	br.Discard(len(field))
	if sp, _ := br.Peek(1); len(sp) == 1 && sp[0] == ' ' {
		br.Discard(1)
	}
	return true
}
