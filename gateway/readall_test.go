package gateway

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAll: the body is read whole whatever its Content-Length says
// (none, the truth, less, more), in pieces or at once, and a client that
// declares a huge body makes the gateway set aside at most bodyHint for
// it, not what it declares.
func TestReadAll(t *testing.T) {
	body := strings.Repeat("0123456789", 300)
	for _, declared := range []int64{-1, 0, 1, 100, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 1, 1 << 40} {
		for name, r := range map[string]io.Reader{
			"whole":    strings.NewReader(body),
			"one byte": iotest.OneByteReader(strings.NewReader(body)),
			"half":     iotest.HalfReader(strings.NewReader(body)),
			"eof":      iotest.DataErrReader(strings.NewReader(body)),
		} {
			got, err := readAll(r, declared, 16<<20)
			if err != nil || string(got) != body {
				t.Errorf("declared %d, %s: got %d bytes, %v; want the %d bytes", declared, name, len(got), err, len(body))
			}
			if cap(got) > bodyHint+1 && declared > bodyHint {
				t.Errorf("declared %d: made room for %d bytes", declared, cap(got))
			}
		}
	}
	got, err := readAll(strings.NewReader("abc"), 1<<40, 16<<20)
	if err != nil || string(got) != "abc" || cap(got) > bodyHint+1 {
		t.Errorf("a body declared as 1 TiB: %q, %v, room for %d bytes", got, err, cap(got))
	}
	// (MaxBytesReader stops a real body at the limit; this one goes on.)
	if got, _ := readAll(strings.NewReader("abc"), 1<<40, 2); cap(got) > 64 {
		t.Errorf("a body declared over the limit of 2 bytes: room for %d bytes", cap(got))
	}
	boom := errors.New("boom")
	got, err = readAll(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom)), 10, 16<<20)
	if !errors.Is(err, boom) || !bytes.Equal(got, []byte("ab")) {
		t.Errorf("a failing body: %q, %v; want \"ab\" and the error", got, err)
	}
}
