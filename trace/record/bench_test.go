package record_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/agent/agenttest"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// cpuTime is the user and system time of this process so far, in
// nanoseconds (getrusage counts every goroutine: the loop's, the Writer's,
// the garbage collector's).
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

type discard struct{}

func (discard) RecordFunc(build func() *trace.Record) { build() } // the whole cost, on the loop's goroutine

// BenchmarkLoopIteration is agent.BenchmarkLoopIteration without a
// recorder (none), with a recorder whose records go nowhere (recorder: the
// cost on the loop's goroutine), and with a recorder writing live (each
// run's row as it begins, each call as it ends, the run's row again as it
// ends) into a SQLite store (sqlite) and a PostgreSQL one (postgres)
// through a Writer: everything, the writes included, as they share the
// process's CPU.
//
// cpu-ns/iteration is the process's CPU time per model call (getrusage
// around the loop and the Writer's Close), steadier than wall time on a
// machine others share; compare the variants of one run, which -count
// interleaves. For PostgreSQL, server-cpu-ns/iteration is the CPU time of
// the server processes that served the store's connections (read from
// /proc, so only for a server on this machine): a cost the loop's process
// does not pay.
func BenchmarkLoopIteration(b *testing.B) {
	for _, mode := range []agent.Mode{agent.ModePTK, agent.ModeNative} {
		for _, rec := range []string{"none", "recorder", "sqlite", "postgres"} {
			b.Run(string(mode)+"/"+rec, func(b *testing.B) {
				const perRun = 10
				m := agenttest.NewLoopModel(perRun, mode == agent.ModeNative)
				store := &agent.MemoryStore{}
				hist := agenttest.History()
				opts := agent.Options{Model: m, Mode: mode, Tools: agenttest.Tools(), ConversationID: "bench", Store: store, MaxIterations: perRun}
				ctx := context.Background()
				var sink record.Sink = discard{}
				var w *trace.Writer
				var server *serverCPU
				switch rec {
				case "sqlite", "postgres":
					dsn := filepath.Join(b.TempDir(), "traces.db")
					if rec == "postgres" {
						dsn = benchPG(b)
					}
					s, err := trace.Open(ctx, dsn)
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					if rec == "postgres" {
						server = newServerCPU(b, dsn)
					}
					w = trace.NewWriter(s, nil)
					sink = &paced{Writer: w}
				}
				prompt := agent.Prompt("Read the files in src and tell me if anything needs changing.")
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					store.Save(ctx, "bench", hist)
					var r *record.Agent
					if rec != "none" {
						r = record.NewAgent(sink, trace.Run{Model: "bench", Mode: string(mode), Input: prompt[0].Content})
					}
					var res *agent.Result
					for e, err := range agent.Stream(ctx, prompt, opts) {
						if r != nil {
							r.Event(e, err)
						}
						if e.Kind == agent.EventDone {
							res = e.Run
							if err != nil {
								b.Fatal(err)
							}
						}
					}
					if res.Iterations != perRun {
						b.Fatalf("iterations %d", res.Iterations)
					}
					if p, ok := sink.(*paced); ok {
						p.wait()
					}
				}
				if w != nil {
					t0 := time.Now()
					w.Close(0) // the writes are part of the cost
					sink.(*paced).waited += time.Since(t0)
				}
				calls := float64(b.N * perRun)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/calls, "ns/iteration")
				b.ReportMetric(float64(cpuTime()-cpu0)/calls, "cpu-ns/iteration")
				b.ReportMetric(0, "ns/op")
				if server != nil {
					if ns, ok := server.since(); ok {
						b.ReportMetric(float64(ns)/calls, "server-cpu-ns/iteration")
					}
				}
				if w != nil {
					// How long the loop waited for the Writer (in wait and
					// in Close): a Writer slower than the loop sets its pace.
					b.ReportMetric(float64(sink.(*paced).waited.Nanoseconds())/calls, "wait-ns/iteration")
					written, failed, dropped := w.Counts()
					if failed != 0 {
						b.Errorf("%d records failed", failed)
					}
					// A record dropped from a full queue is a write not paid
					// for: the numbers hold only when this is 0.
					b.ReportMetric(float64(dropped)/float64(written+dropped), "dropped/record")
				}
			})
		}
	}
}

// paced is a Writer that the benchmark's loop waits for when its queue
// fills: with a real model a run lasts seconds and the Writer keeps up;
// the benchmark's model answers at once, and a Writer that dropped records
// from its full queue would not pay for writing them. Waiting costs no
// CPU time, which is what the benchmark measures.
type paced struct {
	*trace.Writer
	queued int64
	waited time.Duration // in wait and in the Writer's Close
}

func (p *paced) Begin(run trace.Run) { p.queued++; p.Writer.Begin(run) }
func (p *paced) Append(rec *trace.Record, from [3]int) {
	p.queued++
	p.Writer.Append(rec, from)
}
func (p *paced) Finish(build func() *trace.Record) { p.queued++; p.Writer.Finish(build) }
func (p *paced) RecordFunc(build func() *trace.Record) {
	p.queued++
	p.Writer.RecordFunc(build)
}

var _ record.Live = (*paced)(nil)

// wait waits, when the Writer is two batches behind, until it is nearly
// done: a backlog is records the garbage collector marks again and again
// (a cost a Writer that keeps up does not have), and waiting seldom and
// long keeps rare the process's going idle and waking (a cost to the Go
// scheduler).
func (p *paced) wait() {
	backlog := func() int64 {
		written, failed, dropped := p.Counts()
		return p.queued - written - failed - dropped
	}
	if backlog() < 2*trace.MaxBatch {
		return
	}
	t0 := time.Now()
	for backlog() > trace.MaxBatch/4 {
		time.Sleep(5 * time.Millisecond)
	}
	p.waited += time.Since(t0)
}

// benchPG is a fresh schema on the test PostgreSQL server
// ($PTK_TEST_POSTGRES, else .ci/run's), dropped when the benchmark ends;
// without a server the benchmark (or test) skips.
func benchPG(b testing.TB) string {
	u := os.Getenv("PTK_TEST_POSTGRES")
	if u == "" {
		u = "postgres://ptk:ptk@127.0.0.1:5432/ptk_test?sslmode=disable"
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		b.Skipf("no PostgreSQL server at %s: %v", u, err)
	}
	var r [6]byte
	rand.Read(r[:])
	schema := "bench_" + hex.EncodeToString(r[:])
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	p, err := url.Parse(u)
	if err != nil {
		b.Fatal(err)
	}
	q := p.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema) // how newServerCPU finds its server processes
	p.RawQuery = q.Encode()
	return p.String()
}

// serverCPU measures the CPU time of the PostgreSQL server processes that
// serve one store's connections (by their application_name), from /proc.
type serverCPU struct {
	db    *sql.DB
	app   string
	start map[int]int64
}

func newServerCPU(b *testing.B, dsn string) *serverCPU {
	u, _ := url.Parse(dsn)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s := &serverCPU{db: db, app: u.Query().Get("application_name")}
	s.start = s.now()
	return s
}

// now is the CPU time of each server process of the store's connections
// (not this one's).
func (s *serverCPU) now() map[int]int64 {
	rows, err := s.db.Query("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()", s.app)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[int]int64{}
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			return nil
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return nil // a server on another machine
		}
		// The fields after the command's closing parenthesis: utime and
		// stime are the 12th and 13th, in clock ticks (100 a second).
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 13 {
			return nil
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = (ut + st) * int64(10*time.Millisecond)
	}
	return out
}

// since is the CPU time the store's server processes used since
// newServerCPU.
func (s *serverCPU) since() (int64, bool) {
	end := s.now()
	if end == nil || s.start == nil {
		return 0, false
	}
	var ns int64
	for pid, t := range end {
		ns += t - s.start[pid]
	}
	return ns, true
}
