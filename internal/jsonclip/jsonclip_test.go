package jsonclip

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

func next(t *testing.T, in string, max int, essential ...string) (string, Info) {
	t.Helper()
	out, info, err := NewReader(strings.NewReader(in), max, essential...).Next()
	if err != nil {
		t.Fatalf("Next(%.80q): %v", in, err)
	}
	return string(out), info
}

func TestFits(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi \"there\" \u00e9 \n"}], "isError": false}}`,
		`[1, -2.5e+3, true, false, null, "", {}, [], {"a": [{"b": {}}]}]`,
		`"just a string"`, `0`, `-0.1`, `{"ünïcödé": "🙂"}`,
	} {
		out, info := next(t, in, 1<<20)
		var want bytes.Buffer
		json.Compact(&want, []byte(in))
		if out != want.String() || info.Cut || info.Read != int64(len(in)) {
			t.Errorf("Next(%s) = %s, %+v; want %s whole", in, out, info, want.String())
		}
	}
}

func TestCuts(t *testing.T) {
	long := strings.Repeat("é", 1000) // two bytes a character: a cut must not split one
	cases := []struct {
		name, in  string
		max       int
		essential []string
		want      string
	}{
		{"a long string keeps its beginning, whole characters", `"` + long + `"`, 11, nil, `"` + strings.Repeat("é", 4) + `"`},
		{"an escape is kept whole or not at all", `"abcdefg\u00e9"`, 12, nil, `"abcdefg"`},
		{"an array keeps its first elements", `[1, 2, 3, 4, 5, 6, 7, 8]`, 6, nil, `[1,2,3]`},
		{"an object keeps its first members", `{"a": 1, "b": 2, "c": 3}`, 8, nil, `{"a":1}`},
		{"essential members are kept past the budget", `{"result": {"text": "` + long + `"}, "extra": [1, 2], "id": 42, "jsonrpc": "2.0"}`, 300,
			[]string{"id", "jsonrpc", "result"}, `{"result":{"text":"` + strings.Repeat("é", 140) + `"},"id":42,"jsonrpc":"2.0"}`},
		{"only at the top level", `{"x": {"id": 1, "a": "` + long + `"}}`, 6, []string{"id"}, `{"x":{}}`},
		{"deep nesting is cut to null", strings.Repeat("[", MaxDepth+10) + strings.Repeat("]", MaxDepth+10), 1 << 20, nil,
			strings.Repeat("[", MaxDepth) + "null" + strings.Repeat("]", MaxDepth)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, info := next(t, c.in, c.max, c.essential...)
			if out != c.want || !info.Cut {
				t.Errorf("got %s (cut %v), want %s", out, info.Cut, c.want)
			}
			if !json.Valid([]byte(out)) {
				t.Errorf("%s is not JSON", out)
			}
		})
	}
}

func TestStream(t *testing.T) {
	r := NewReader(strings.NewReader(` {"a":1}
{"b": "`+strings.Repeat("x", 100)+`"}
  [1]  `), 20)
	var got []string
	for {
		out, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(out)+map[bool]string{true: " cut"}[info.Cut])
	}
	if want := []string{`{"a":1}`, `{"b":"` + strings.Repeat("x", 13) + `"} cut`, `[1]`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNotJSON(t *testing.T) {
	for _, in := range []string{`Welcome! <html>`, `{"a" 1}`, `{"a": tru}`, `"unterminated`, `[1, 2`, `{"a": "\q"}`, "\"a\x01b\""} {
		r := NewReader(strings.NewReader(in), 1<<20)
		_, _, err := r.Next()
		var se *SyntaxError
		if err == nil || !errors.As(err, &se) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Next(%q) = %v, want a syntax error or an unexpected EOF", in, err)
		}
		if !strings.HasPrefix(in, string(r.Raw())) {
			t.Errorf("Raw() = %q after %q", r.Raw(), in)
		}
	}
}

// huge is a reader of a JSON-RPC response whose text is n bytes, made as it
// is read.
func huge(n int) io.Reader {
	head := `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"`
	tail := `"}],"isError":false},"id":3}`
	return io.MultiReader(strings.NewReader(head), &repeat{b: bytes.Repeat([]byte("0123456789abcdef"), 4096), n: n}, strings.NewReader(tail))
}

type repeat struct {
	b []byte
	n int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:min(len(p), k+r.n)], r.b)
		k += c
		r.n -= c
	}
	return k, nil
}

// TestHugeStringInLittleMemory reads a message of 300 MiB: the value comes
// back cut to the budget, the id after it is kept, and the heap does not
// grow with the input.
func TestHugeStringInLittleMemory(t *testing.T) {
	const size = 300 << 20
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := NewReader(huge(size), 1<<20, "jsonrpc", "id", "result")
	out, info, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if info.Read < size || !info.Cut || len(out) > 1<<20+64 {
		t.Errorf("read %d bytes, cut %v, gave %d", info.Read, info.Cut, len(out))
	}
	var msg struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(out, &msg); err != nil || msg.ID != 3 || len(msg.Result.Content) != 1 || !strings.HasPrefix(msg.Result.Content[0].Text, "0123456789abcdef") {
		t.Errorf("message: %v, %+v", err, msg.ID)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading 300 MiB allocated %d MiB", grew>>20)
	}
}

func FuzzNext(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"result":{"a":[1,"two",{"three":null}]}}`, `"é\u00e9\\"`, `[[],{}]`, `{"id":"` + strings.Repeat("x", 40) + `"}`, `-1.5e3`, "\"\xff\""} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, in string, max int) {
		max = max%4096 + 1
		if max < 0 {
			max = -max
		}
		r := NewReader(strings.NewReader(in), max, "id", "jsonrpc")
		out, info, err := r.Next()
		if err != nil || !json.Valid([]byte(in)) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Next(%q, %d) = %q: not JSON", in, max, out)
		}
		var whole bytes.Buffer
		json.Compact(&whole, []byte(strings.TrimSpace(in)))
		if whole.Len() <= max && info.Cut {
			t.Fatalf("Next(%q, %d) cut a value of %d bytes", in, max, whole.Len())
		}
		if !info.Cut && string(out) != whole.String() {
			t.Fatalf("Next(%q, %d) = %q, not cut, but the value is %q", in, max, out, whole.String())
		}
		if utf8.ValidString(in) && !utf8.Valid(out) {
			t.Fatalf("Next(%q, %d) = %q: a cut split a character", in, max, out)
		}
	})
}

// The cost of reading a message through a Reader, against json.Compact
// (the least any reading of the message costs) in the same run: a small
// tool result, and 64 MiB of one cut to 8 MiB.
func BenchmarkNext(b *testing.B) {
	small := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"` + strings.Repeat("line of a file\\n", 60) + `"}],"isError":false}}`)
	b.Run("small/jsonclip", func(b *testing.B) {
		b.SetBytes(int64(len(small)))
		for b.Loop() {
			if _, _, err := NewReader(bytes.NewReader(small), 8<<20).Next(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("small/json.Compact", func(b *testing.B) {
		b.SetBytes(int64(len(small)))
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			if err := json.Compact(&out, small); err != nil {
				b.Fatal(err)
			}
		}
	})
	const size = 64 << 20
	b.Run("64MiB-cut-to-8MiB/jsonclip", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if _, _, err := NewReader(huge(size), 8<<20, "id", "result").Next(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("64MiB/io.Copy", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			io.Copy(io.Discard, huge(size))
		}
	})
}
