package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
			// What a streamed reply costs whatever reads it, before any
			// parsing: a method call per write that keeps the bytes, in
			// a bytes.Buffer and in a buffer already big enough.
			b.Run(fmt.Sprintf("buffer/%dB/%dKiB", w, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					sink += bufferStream(text, w)
				}
			})
			b.Run(fmt.Sprintf("call/%dB/%dKiB", w, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				k := &keeper{b: make([]byte, len(text))}
				for b.Loop() {
					k.n = 0
					for i := 0; i < len(text); i += w {
						k.WriteString(text[i:min(i+w, len(text))])
					}
					sink += k.n
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

// BenchmarkStreamRatio measures what streaming the 1 MiB write_file reply
// in w-byte writes costs as a multiple of parsing it whole, the two
// interleaved in each iteration, and reports the median ratios: of the
// process's CPU time ("×whole-cpu", which other processes on a shared
// machine do not inflate) and of the time that passed ("×whole-wall"). A
// burst of someone else's work lands on both sides of a ratio taken this
// way far more often than on one side of two separate benchmarks:
//
//	cd bench && go test -run '^$' -bench StreamRatio -benchtime 40x -count 5
func BenchmarkStreamRatio(b *testing.B) {
	p := ptkParser(b)
	text := benchdata.WriteFileReply(1 << 20)
	for _, w := range []int{2, 4, 16} {
		b.Run(fmt.Sprintf("%dB/1024KiB", w), func(b *testing.B) {
			var cpu, wall []float64
			for b.Loop() {
				c0, t0 := cpuTime(), time.Now()
				sink += ptkWhole(p, text)
				c1, t1 := cpuTime(), time.Now()
				sink += ptkStream(p, text, w)
				c2, t2 := cpuTime(), time.Now()
				if c1 > c0 {
					cpu = append(cpu, float64(c2-c1)/float64(c1-c0))
				}
				wall = append(wall, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
			}
			if len(cpu) > 0 {
				slices.Sort(cpu)
				b.ReportMetric(cpu[len(cpu)/2], "×whole-cpu")
			}
			slices.Sort(wall)
			b.ReportMetric(wall[len(wall)/2], "×whole-wall")
		})
	}
}

// heapObjects is the heap's objects in bytes, live ones and garbage not
// swept yet: what MemStats.HeapAlloc reports, read without stopping the
// world.
const heapObjects = "/memory/classes/heap/objects:bytes"

// peakHeap runs f with the collector set to gcPercent and returns the most
// heap it held at once above what was live before. A goroutine reads the
// heap's size in a loop while f runs on the other core: runtime/metrics
// does not stop the world, and the loop does not sleep, since a timer's
// sleep lasts a millisecond or more here, too coarse for a parse of a few.
// At GOGC=10 the number is about what f keeps live; at 100, the default, it
// is what a program sees, garbage included.
func peakHeap(gcPercent int, f func()) uint64 {
	old := debug.SetGCPercent(gcPercent)
	defer debug.SetGCPercent(old)
	for {
		if peak, ok := samplePeak(f); ok {
			return peak
		}
	}
}

// samplePeak is one try of peakHeap: it fails when the sampler did not run
// beside f (the scheduler may leave both on one core until f is done).
func samplePeak(f func()) (uint64, bool) {
	runtime.GC()
	sample := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak, reads atomic.Uint64
	var stop atomic.Bool
	started, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: heapObjects}}
		for !stop.Load() {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			if reads.Add(1) == 1 {
				close(started)
			}
		}
	}()
	<-started
	before := reads.Load()
	f()
	during := reads.Load() - before
	stop.Store(true)
	<-stopped
	return peak.Load(), during >= 100
}

// keeper takes a stream's writes into a buffer already big enough and does
// nothing else: the least a reader pays for a method call per write.
type keeper struct {
	b []byte
	n int
}

//go:noinline
func (k *keeper) WriteString(s string) (int, error) {
	p := k.b[k.n : k.n+len(s)]
	for i := range p { // as ptk's Stream does: cheaper than memmove for a few bytes
		p[i] = s[i]
	}
	k.n += len(s)
	return len(s), nil
}

// bufferStream keeps the reply's writes in a bytes.Buffer and nothing else:
// the least a reader pays that keeps a streamed reply of unknown length in
// one piece, as a call's arguments must be.
func bufferStream(text string, w int) int {
	var buf bytes.Buffer
	for i := 0; i < len(text); i += w {
		buf.WriteString(text[i:min(i+w, len(text))])
	}
	return buf.Len()
}

// TestPeakHeap reports the peak heap of reading the 1 MiB reply as a
// multiple of its size, the test's copy of the reply included: ptk's whole
// parse, its stream in 4-byte writes (the first of a process, in a fresh
// process each time, and one after another), Ollama's whole parse, and a
// bytes.Buffer fed the same writes; each at GOGC=10 (about what is kept
// live) and 100. Run with -v. It fails if ptk's whole parse or its stream
// after a first one keeps more than 2.5× the reply live.
func TestPeakHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the heap is sampled on a core of its own beside the parse: needs GOMAXPROCS ≥ 2")
	}
	p := ptkParser(t)
	text := benchdata.WriteFileReply(1 << 20)
	if c := os.Getenv("PTK_PEAK_CHILD"); c != "" { // a child run by the parent below
		var gc int
		var what string
		fmt.Sscanf(c, "%s %d", &what, &gc)
		f := func() { sink += ptkStream(p, text, 4) }
		if what == "buffer" {
			f = func() { sink += bufferStream(text, 4) }
		}
		runtime.GC()
		fmt.Printf("peak %d\n", peakHeap(gc, f))
		return
	}
	r := float64(len(text))
	median := func(xs []float64) float64 {
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	inProcess := func(gc int, f func()) float64 {
		var xs []float64
		for range 5 {
			xs = append(xs, (float64(peakHeap(gc, f))+r)/r)
		}
		return median(xs)
	}
	// The first stream of a process grows its buffer from nothing (later
	// ones take a finished stream's): each in a process of its own.
	firstInProcess := func(gc int, what string) float64 {
		var xs []float64
		for range 5 {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPeakHeap$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("PTK_PEAK_CHILD=%s %d", what, gc))
			out, err := cmd.Output()
			var peak float64
			if _, serr := fmt.Sscanf(string(out), "peak %g", &peak); err != nil || serr != nil {
				t.Fatalf("the child measuring %s: %v %v: %s", what, err, serr, out)
			}
			xs = append(xs, (peak+r)/r)
		}
		return median(xs)
	}
	for _, gc := range []int{10, 100} {
		whole := inProcess(gc, func() { sink += ptkWhole(p, text) })
		first := firstInProcess(gc, "stream")
		next := inProcess(gc, func() { sink += ptkStream(p, text, 4) })
		ollama := inProcess(gc, func() { sink += ollamaWhole(text) })
		buffer := firstInProcess(gc, "buffer")
		t.Logf("GOGC=%d, peak heap ÷ reply (1 MiB write_file, medians of 5, the reply included): ptk whole %.2f×; ptk streamed in 4-byte writes, a process's first stream %.2f×, one after another %.2f×; Ollama whole %.2f×; a bytes.Buffer's first stream %.2f×",
			gc, whole, first, next, ollama, buffer)
		if gc == 10 && whole > 2.5 {
			t.Errorf("ptk's whole parse keeps %.2f× the reply live, more than 2.5×", whole)
		}
		if gc == 10 && next > 2.5 {
			t.Errorf("ptk's stream keeps %.2f× the reply live, more than 2.5×", next)
		}
	}
}
