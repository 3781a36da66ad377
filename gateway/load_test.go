package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/bits"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestLoad runs loadClients clients at once against the gateway in ptk
// mode, over loopback, for PTK_LOAD_DURATION (for instance 60s):
//
//	PTK_LOAD_DURATION=60s go test -run TestLoad -v ./gateway/
//
// Each client sends, in turn, a whole request, a streamed one, and two
// round trips (whole then streamed, streamed then whole): a request whose
// answer calls the tool, then the conversation with the call's id and the
// tool's result, whose answer must be the final one. Every answer is
// read and checked; an error, a status other than 200 or a wrong answer
// fails the test. Once a second it collects the garbage and samples the
// heap and the goroutines: the median HeapInuse of the last 10 s must not
// exceed that of the first 10 s after a 5 s warm-up by more than 20% (nor
// the goroutines), and when the run ends and the gateway shuts down no
// goroutine may be left. It logs the requests a second, the latency, the
// process's CPU time per request and the samples.
//
// Meanwhile loadSlowClients connections send their headers and then
// trickle their bodies (or send nothing more), over and over, as an
// attacker would to hold the gateway's places: every other request must
// still be answered, and each slow connection is answered 408 or cut.
//
// Without PTK_LOAD_DURATION it runs for loadShort (not with -short), which
// checks the answers and the goroutines but is too short to judge memory.
func TestLoad(t *testing.T) {
	d, full := loadShort, false
	if s := os.Getenv("PTK_LOAD_DURATION"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d <= 0 {
			t.Fatalf("PTK_LOAD_DURATION=%q: want a duration such as 60s", s)
		}
		full = true
	} else if testing.Short() {
		t.Skip("a load test; set PTK_LOAD_DURATION=60s for the long run")
	}
	leaks := goleak.IgnoreCurrent()
	baseGoroutines := runtime.NumGoroutine()

	e := benchStart(t)
	cpu0, cpuOK := benchProcessCPU()
	var (
		done    atomic.Int64 // requests answered, right or wrong
		stats   = make([]loadStats, loadClients)
		wg      sync.WaitGroup
		start   = time.Now()
		stopAt  = start.Add(d)
		samples []loadSample
	)
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		samples = loadSampler(stopSampling, start, &done)
	}()
	var slowCut atomic.Int64
	var slowWG sync.WaitGroup
	for i := range loadSlowClients {
		slowWG.Go(func() { loadSlowClient(e, i, stopAt, &slowCut) })
	}
	for i := range loadClients {
		wg.Go(func() { loadClient(e, i, stopAt, &stats[i], &done) })
	}
	wg.Wait()
	slowWG.Wait()
	elapsed := time.Since(start)
	cpu1, cpuOK1 := benchProcessCPU()
	close(stopSampling)
	<-sampled
	if err := e.stop(); err != nil {
		t.Errorf("the gateway's Serve returned %v after the run, want nil", err)
	}

	var all loadStats
	for i := range stats {
		all.add(&stats[i])
	}
	t.Logf("%d clients, %v: %d requests, %d errors, %.0f req/s", loadClients, elapsed.Round(time.Millisecond),
		all.requests, all.errors, float64(all.requests)/elapsed.Seconds())
	if cpuOK && cpuOK1 && all.requests > 0 {
		perReq := (cpu1 - cpu0) / time.Duration(all.requests)
		t.Logf("CPU (client, gateway and upstream): %v per request, %.2f of %d cores busy; %.0f req/s if the cores were all the test's",
			perReq, (cpu1-cpu0).Seconds()/elapsed.Seconds(), runtime.NumCPU(), float64(runtime.GOMAXPROCS(0))/perReq.Seconds())
	}
	t.Logf("latency: p50 %v, p90 %v, p99 %v, max %v", all.hist.quantile(0.50), all.hist.quantile(0.90),
		all.hist.quantile(0.99), all.hist.max.Round(time.Microsecond))
	for _, err := range all.firstErrs {
		t.Error(err)
	}
	if all.errors > 0 {
		t.Errorf("%d of %d requests failed", all.errors, all.requests)
	}
	if all.requests == 0 {
		t.Error("no request was answered")
	}
	t.Logf("%d slow-body connections, %d of them answered 408 or cut by the gateway", loadSlowClients, slowCut.Load())
	if slowCut.Load() < loadSlowClients {
		t.Errorf("only %d slow-body connections were cut; want each of the %d at least once", slowCut.Load(), loadSlowClients)
	}

	loadLogSamples(t, samples)
	if full && len(samples) >= loadWarmUp+2*loadWindow {
		first := samples[loadWarmUp : loadWarmUp+loadWindow]
		last := samples[len(samples)-loadWindow:]
		heapFirst, heapLast := loadMedian(first, loadHeapInuse), loadMedian(last, loadHeapInuse)
		allocFirst, allocLast := loadMedian(first, loadHeapAlloc), loadMedian(last, loadHeapAlloc)
		gFirst, gLast := loadMedian(first, loadGoroutines), loadMedian(last, loadGoroutines)
		t.Logf("memory, median of the first %d s after %d s of warm-up → of the last %d s: HeapInuse %s → %s (%+.1f%%), HeapAlloc %s → %s (%+.1f%%), goroutines %d → %d",
			loadWindow, loadWarmUp, loadWindow, loadMB(heapFirst), loadMB(heapLast), loadGrowth(heapFirst, heapLast),
			loadMB(allocFirst), loadMB(allocLast), loadGrowth(allocFirst, allocLast), gFirst, gLast)
		if float64(heapLast) > 1.2*float64(heapFirst) {
			t.Errorf("HeapInuse grew from %s to %s (more than 20%%)", loadMB(heapFirst), loadMB(heapLast))
		}
		if float64(gLast) > 1.2*float64(gFirst) {
			t.Errorf("the goroutines grew from %d to %d (more than 20%%)", gFirst, gLast)
		}
	} else if full {
		t.Logf("memory not judged: a run of %v is shorter than %d s", d, loadWarmUp+2*loadWindow)
	}

	// Everything is shut down: the goroutines must return to what they were.
	goleak.VerifyNone(t, leaks)
	t.Logf("goroutines: %d before the run, %d after it", baseGoroutines, runtime.NumGoroutine())
}

const (
	loadClients = 32
	// loadSlowClients connections trickle their bodies at once, more than
	// the gateway's DefaultMaxConcurrent places; loadSlowIdle is how long
	// the load test's gateway lets a body send nothing.
	loadSlowClients = 70
	loadSlowIdle    = 400 * time.Millisecond
	loadShort       = 1500 * time.Millisecond
	// loadWarmUp and loadWindow are in seconds, that is in samples.
	loadWarmUp = 5
	loadWindow = 10
)

// The requests a load client sends.
var (
	loadWhole       = benchRequest(benchPTK, false, false)
	loadStream      = benchRequest(benchPTK, true, false)
	loadFollowWhole = benchRequest(benchPTK, false, true)
	loadFollowStrm  = benchRequest(benchPTK, true, true)
)

// loadStats is what a client counts.
type loadStats struct {
	requests, errors int
	firstErrs        []error // the first few
	hist             loadHist
}

func (s *loadStats) fail(err error) {
	s.errors++
	if len(s.firstErrs) < 3 {
		s.firstErrs = append(s.firstErrs, err)
	}
}

func (s *loadStats) add(o *loadStats) {
	s.requests += o.requests
	s.errors += o.errors
	if len(s.firstErrs) < 5 {
		s.firstErrs = append(s.firstErrs, o.firstErrs...)
	}
	s.hist.merge(&o.hist)
}

// loadClient sends requests until stopAt, each client starting at another
// point of the cycle: whole, stream, a round trip whole then streamed, a
// round trip streamed then whole.
func loadClient(e *benchEnv, id int, stopAt time.Time, st *loadStats, done *atomic.Int64) {
	var buf bytes.Buffer
	// send sends one request, checks its answer and returns the call's id.
	send := func(body []byte, stream, final bool) (string, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		t0 := time.Now()
		err := benchPost(ctx, e.client, e.gw, body, &buf)
		st.hist.record(time.Since(t0))
		st.requests++
		done.Add(1)
		var callID string
		if err == nil {
			callID, err = benchCheck(buf.Bytes(), stream, final)
		}
		if err != nil {
			st.fail(fmt.Errorf("client %d, stream %t, final %t: %w", id, stream, final, err))
			return "", false
		}
		return callID, true
	}
	for i := id; time.Now().Before(stopAt); i++ {
		switch i % 4 {
		case 0:
			send(loadWhole, false, false)
		case 1:
			send(loadStream, true, false)
		case 2, 3:
			first, then := i%4 == 3, i%4 == 2 // streamed first, or second
			req := loadWhole
			if first {
				req = loadStream
			}
			callID, ok := send(req, first, false)
			if !ok {
				continue
			}
			follow := loadFollowWhole
			if then {
				follow = loadFollowStrm
			}
			send(bytes.ReplaceAll(follow, []byte(benchCallID), []byte(callID)), then, true)
		}
	}
}

// loadSlowClient opens connections that send a request's headers, then
// a byte of its body now and then (odd clients) or nothing more (even
// ones), until the gateway answers or closes them, and counts each one cut.
func loadSlowClient(e *benchEnv, id int, stopAt time.Time, cut *atomic.Int64) {
	addr := strings.TrimSuffix(strings.TrimPrefix(e.gw, "http://"), "/v1/chat/completions")
	for time.Now().Before(stopAt) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		c.SetDeadline(time.Now().Add(10 * loadSlowIdle))
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"model\":", addr)
		answered := make(chan bool, 1)
		go func() {
			line, err := bufio.NewReader(c).ReadString('\n')
			answered <- strings.Contains(line, " 408 ") || err == io.EOF
		}()
		trickle := time.NewTicker(loadSlowIdle / 2)
	wait:
		for {
			select {
			case ok := <-answered:
				if ok {
					cut.Add(1)
				}
				break wait
			case <-trickle.C:
				if id%2 == 1 {
					c.Write([]byte(" "))
				}
			}
		}
		trickle.Stop()
		c.Close()
	}
}

// loadSample is the heap and the goroutines at one second of the run,
// after a garbage collection.
type loadSample struct {
	at                   time.Duration
	heapInuse, heapAlloc uint64
	goroutines           int
	requests             int64 // answered so far
}

func loadHeapInuse(s loadSample) uint64  { return s.heapInuse }
func loadHeapAlloc(s loadSample) uint64  { return s.heapAlloc }
func loadGoroutines(s loadSample) uint64 { return uint64(s.goroutines) }

// loadSampler samples every second until stop is closed.
func loadSampler(stop <-chan struct{}, start time.Time, done *atomic.Int64) []loadSample {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var out []loadSample
	for {
		select {
		case <-stop:
			return out
		case <-tick.C:
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		out = append(out, loadSample{at: time.Since(start), heapInuse: ms.HeapInuse, heapAlloc: ms.HeapAlloc,
			goroutines: runtime.NumGoroutine(), requests: done.Load()})
	}
}

// loadLogSamples logs the series, one line per 10 s (every second in a run
// of 10 s or less).
func loadLogSamples(t *testing.T, samples []loadSample) {
	step := 10
	if len(samples) <= 10 {
		step = 1
	}
	var b strings.Builder
	var prev int64
	var prevAt time.Duration
	for i, s := range samples {
		if i%step == step-1 || i == len(samples)-1 {
			rate := float64(s.requests-prev) / (s.at - prevAt).Seconds()
			fmt.Fprintf(&b, "\n  t=%3.0fs  HeapInuse %s  HeapAlloc %s  goroutines %4d  %6.0f req/s",
				s.at.Seconds(), loadMB(s.heapInuse), loadMB(s.heapAlloc), s.goroutines, rate)
			prev, prevAt = s.requests, s.at
		}
	}
	t.Logf("samples after GC (req/s over the lines' interval):%s", b.String())
}

func loadMedian(samples []loadSample, f func(loadSample) uint64) uint64 {
	vs := make([]uint64, len(samples))
	for i, s := range samples {
		vs[i] = f(s)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

func loadMB(n uint64) string { return fmt.Sprintf("%.2f MB", float64(n)/(1<<20)) }

func loadGrowth(from, to uint64) float64 { return 100 * (float64(to)/float64(from) - 1) }

// loadHist counts durations in buckets about 3% wide, so that a run of any
// length keeps the same memory: below 32 ns one bucket a nanosecond, then
// 32 buckets for each power of two.
type loadHist struct {
	counts [60 * 32]uint64
	n      uint64
	max    time.Duration
}

func loadBucket(ns uint64) int {
	if ns < 32 {
		return int(ns)
	}
	shift := bits.Len64(ns) - 6 // keep the top 6 bits: 32 to 63
	return shift*32 + int(ns>>shift)
}

func (h *loadHist) record(d time.Duration) {
	h.counts[loadBucket(uint64(max(d, 0)))]++
	h.n++
	h.max = max(h.max, d)
}

func (h *loadHist) merge(o *loadHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the middle of the bucket that holds the q-quantile.
func (h *loadHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n))
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen > rank {
			if b < 32 {
				return time.Duration(b)
			}
			shift := b/32 - 1
			lo := uint64(b-shift*32) << shift
			return time.Duration(lo + (uint64(1)<<shift)/2).Round(time.Microsecond)
		}
	}
	return h.max
}
