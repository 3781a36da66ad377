package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/tools"

	"github.com/ptkit/ptk/internal/benchdata"
	"github.com/ptkit/ptk/protocol"
)

func ptkParser(tb testing.TB) *protocol.Parser {
	p, err := protocol.NewParser(PTKTools())
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// ptkWhole and the rest are the four ways of reading a reply measured.
func ptkWhole(p *protocol.Parser, text string) int { return len(p.Parse(text).Calls) }

func ptkStream(p *protocol.Parser, text string, w int) int {
	s := p.NewStream(nil)
	for i := 0; i < len(text); i += w {
		s.WriteString(text[i:min(i+w, len(text))])
	}
	return len(s.Finish().Calls)
}

func ollamaWhole(text string) int {
	calls, _ := tools.NewParserWithTag(OllamaTools(), "<tool_call>").Add(text)
	return len(calls)
}

func ollamaStream(text string, w int) int {
	p := tools.NewParserWithTag(OllamaTools(), "<tool_call>")
	n := 0
	for i := 0; i < len(text); i += w {
		calls, _ := p.Add(text[i:min(i+w, len(text))])
		n += len(calls)
	}
	return n
}

// TestBothRead checks both parsers find the write_file call, so the
// benchmarks compare readings, not a failure with a success.
func TestBothRead(t *testing.T) {
	p := ptkParser(t)
	for _, n := range []int{4 << 10, 1 << 20} {
		text := benchdata.WriteFileReply(n)
		if got := ptkWhole(p, text); got != 1 {
			t.Errorf("ptk: %d calls in the %d-byte reply", got, n)
		}
		if got := ptkStream(p, text, 3); got != 1 {
			t.Errorf("ptk streamed: %d calls in the %d-byte reply", got, n)
		}
		if got := ollamaWhole(text); got != 1 {
			t.Errorf("ollama: %d calls in the %d-byte reply", got, n)
		}
	}
}

var sink int

func BenchmarkWriteFileWhole(b *testing.B) {
	wholeSideBySide(b, benchdata.WriteFileReply, 4<<10, 16<<10, 64<<10, 256<<10, 1<<20)
}

func BenchmarkProseWhole(b *testing.B) {
	wholeSideBySide(b, benchdata.ProseReply, 64<<10, 1<<20)
}

// wholeSideBySide parses reply(n) whole with ptk's parser and Ollama's, for
// each size n.
func wholeSideBySide(b *testing.B, reply func(int) string, sizes ...int) {
	p := ptkParser(b)
	for _, n := range sizes {
		text := reply(n)
		for _, c := range []struct {
			name  string
			parse func() int
		}{
			{"ptk", func() int { return ptkWhole(p, text) }},
			{"ollama", func() int { return ollamaWhole(text) }},
		} {
			b.Run(fmt.Sprintf("%s/%dKiB", c.name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					sink += c.parse()
				}
			})
		}
	}
}

// BenchmarkWriteFileStream streams the reply in writes of w bytes. Ollama's
// parser copies its buffer on every write (quadratic): it is measured at
// 64 KiB in 4-byte writes only.
func BenchmarkWriteFileStream(b *testing.B) {
	p := ptkParser(b)
	for _, n := range []int{64 << 10, 1 << 20} {
		text := benchdata.WriteFileReply(n)
		for _, w := range []int{1, 2, 3, 4, 6, 16, 64} {
			b.Run(fmt.Sprintf("ptk/%dB/%dKiB", w, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					sink += ptkStream(p, text, w)
				}
			})
		}
		for _, w := range []int{1, 2, 4} {
			// The least a streamed reply costs whatever reads it: a
			// method call per write that keeps the bytes.
			b.Run(fmt.Sprintf("buffer/%dB/%dKiB", w, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					var buf bytes.Buffer
					for i := 0; i < len(text); i += w {
						buf.WriteString(text[i:min(i+w, len(text))])
					}
					sink += buf.Len()
				}
			})
		}
		if n == 64<<10 {
			b.Run("ollama/4B/64KiB", func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					sink += ollamaStream(text, 4)
				}
			})
		}
	}
}

// peakHeap runs f and returns the most heap it held at once above what was
// live before, sampled every 20µs with the collector run often (GOGC=10),
// so the number is what f keeps live, not garbage waiting for collection.
func peakHeap(f func()) uint64 {
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			if s.HeapAlloc > base && s.HeapAlloc-base > peak.Load() {
				peak.Store(s.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Microsecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	var end runtime.MemStats // what f left, garbage included: its last allocations
	runtime.ReadMemStats(&end)
	if end.HeapAlloc > base && end.HeapAlloc-base > peak.Load() {
		peak.Store(end.HeapAlloc - base)
	}
	return peak.Load()
}

// TestPeakHeap reports the peak heap of reading the 1 MiB reply, the reply
// itself included, as a multiple of its size: whole and streamed for ptk,
// whole for Ollama. Run with -v; it fails only if ptk's whole parse holds
// more than 2.5× the reply.
func TestPeakHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	if os.Getenv("PTK_PEAK_STREAM") != "" { // a child run by the parent below
		p := ptkParser(t)
		text := benchdata.WriteFileReply(1 << 20)
		runtime.GC()
		fmt.Printf("peak %d %d\n", peakHeap(func() { sink += ptkStream(p, text, 4) }), len(text))
		return
	}
	p := ptkParser(t)
	text := benchdata.WriteFileReply(1 << 20)
	r := float64(len(text))
	median := func(xs []float64) float64 {
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	med := func(f func()) float64 {
		var xs []float64
		for range 5 {
			xs = append(xs, (float64(peakHeap(f))+r)/r)
		}
		return median(xs)
	}
	whole := med(func() { sink += ptkWhole(p, text) })
	// Each stream in a process of its own: the first stream of a process
	// grows its buffer from nothing (later ones take a finished stream's).
	var xs []float64
	for range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPeakHeap$")
		cmd.Env = append(os.Environ(), "PTK_PEAK_STREAM=1")
		out, err := cmd.Output()
		var peak, n float64
		if _, serr := fmt.Sscanf(string(out), "peak %g %g", &peak, &n); err != nil || serr != nil {
			t.Fatalf("the child measuring a stream: %v %v: %s", err, serr, out)
		}
		xs = append(xs, (peak+n)/n)
	}
	stream := median(xs)
	ollama := med(func() { sink += ollamaWhole(text) })
	t.Logf("peak heap ÷ reply (1 MiB write_file, medians of 5, the reply included): ptk whole %.2f×, ptk streamed in 4-byte writes %.2f× (%.2f× without the test's copy of the reply; each run: %.2f), Ollama whole %.2f×",
		whole, stream, stream-1, xs, ollama)
	if whole > 2.5 {
		t.Errorf("ptk's whole parse peaks at %.2f× the reply, more than 2.5×", whole)
	}
}
