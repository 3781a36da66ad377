package headtail

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestOutputFits(t *testing.T) {
	for _, in := range []string{"", "a", "hello\n", strings.Repeat("x", 100), "caf\xe9\n"} {
		for _, chunk := range []int{1, 7, 1000} {
			o := New(100)
			write(o, []byte(in), chunk)
			want := strings.ToValidUTF8(in, "\uFFFD")
			if got := o.String(); got != want {
				t.Errorf("%q in chunks of %d: got %q, want %q", in, chunk, got, want)
			}
		}
	}
}

var note = regexp.MustCompile(`\[\.\.\. ([0-9,]+) bytes \(([0-9,]+) lines\) cut from the middle of the output \.\.\.\]\n`)

// TestOutputCut writes random text in random chunks and checks that the
// head and tail kept are the input's and that the note counts the rest.
func TestOutputCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		max := 10 + rng.IntN(200)
		in := make([]byte, max+1+rng.IntN(2000))
		for j := range in {
			in[j] = "abc\n"[rng.IntN(4)]
		}
		o := New(max)
		write(o, in, 1+rng.IntN(300))
		got := o.String()
		m := note.FindStringSubmatchIndex(got)
		if m == nil {
			t.Fatalf("case %d: no note in %q", i, got)
		}
		head, tail := got[:m[0]], got[m[1]:]
		cutBytes, _ := strconv.Atoi(strings.ReplaceAll(got[m[2]:m[3]], ",", ""))
		cutLines, _ := strconv.Atoi(strings.ReplaceAll(got[m[4]:m[5]], ",", ""))
		// The note is on a line of its own: a newline may have been added
		// after a head that ends inside a line.
		if n := len(in) - cutBytes - len(tail); n == len(head)-1 && strings.HasSuffix(head, "\n") {
			head = head[:n]
		}
		if !bytes.HasPrefix(in, []byte(head)) || !bytes.HasSuffix(in, []byte(tail)) {
			t.Fatalf("case %d: head %q or tail %q is not the input's", i, head, tail)
		}
		middle := in[len(head) : len(in)-len(tail)]
		if cutBytes != len(middle) || cutLines != bytes.Count(middle, []byte{'\n'}) {
			t.Fatalf("case %d: note says %d bytes, %d lines; cut %d bytes, %d lines",
				i, cutBytes, cutLines, len(middle), bytes.Count(middle, []byte{'\n'}))
		}
		if len(head)+len(tail) > max {
			t.Fatalf("case %d: kept %d bytes, more than %d", i, len(head)+len(tail), max)
		}
	}
}

// TestOutputBounded writes 64 MB and checks that no more than the cap is
// held.
func TestOutputBounded(t *testing.T) {
	const max = 50 << 10
	o := New(max)
	chunk := bytes.Repeat([]byte("0123456789abcde\n"), 4<<10)
	for range (64 << 20) / len(chunk) {
		o.Write(chunk)
	}
	if held := cap(o.head) + cap(o.tail.buf); held > 2*max {
		t.Errorf("holds %d bytes for a cap of %d", held, max)
	}
	got := o.String()
	if !strings.Contains(got, "[... 67,057,664 bytes (4,191,104 lines) cut") || len(got) > max+100 {
		t.Errorf("got %d bytes with note %q", len(got), note.FindString(got))
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", 100000: "100,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func write(o *Buffer, p []byte, chunk int) {
	for len(p) > 0 {
		n := min(chunk, len(p))
		if k, err := o.Write(p[:n]); k != n || err != nil {
			panic(fmt.Sprint(k, err))
		}
		p = p[n:]
	}
}
