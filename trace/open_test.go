package trace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

// TestMigrations opens a store of every earlier schema version, with data
// in it, and checks that Open brings it up to date and keeps the data.
func TestMigrations(t *testing.T) {
	if SchemaVersion() < 2 {
		t.Fatalf("SchemaVersion() = %d", SchemaVersion())
	}
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		if !IsPostgres(dsn) {
			// An empty file is a new store.
			os.MkdirAll(filepath.Dir(dsn), 0o755)
			os.WriteFile(dsn+".empty", nil, 0o644)
			s := open(t, dsn+".empty")
			if v, err := s.Version(ctx); err != nil || v != SchemaVersion() {
				t.Fatalf("empty file: version %d, %v", v, err)
			}
		}
		for v := 0; v < SchemaVersion(); v++ {
			t.Run("from"+strconv.Itoa(v), func(t *testing.T) {
				d := dsn
				if IsPostgres(dsn) {
					d = newPG(t)
				} else {
					d = fmt.Sprintf("%s.v%d", dsn, v)
				}
				old, err := connect(d, readWrite)
				if err != nil {
					t.Fatal(err)
				}
				if err := old.migrateTo(ctx, v); err != nil {
					t.Fatal(err)
				}
				if got, _ := old.Version(ctx); got != v {
					t.Fatalf("made a store of version %d, want %d", got, v)
				}
				if v >= 1 {
					// the rows an older ptk wrote: the columns of the
					// first version, which every later one keeps
					for _, q := range []string{
						`INSERT INTO runs (id, kind, name, started_us, status) VALUES ('run-ptool', 'ptool', 'classify', 1, 'ok')`,
						`INSERT INTO ptool_calls (run_id, seq, ptool, input, output) VALUES ('run-ptool', 0, 'classify', '{"text":"x"}', '"urgent"')`,
					} {
						if _, err := old.db.ExecContext(ctx, q); err != nil {
							t.Fatal(err)
						}
					}
				}
				old.Close()
				s := open(t, d)
				if got, err := s.Version(ctx); err != nil || got != SchemaVersion() {
					t.Fatalf("version after Open = %d, %v", got, err)
				}
				if v >= 1 {
					if r, err := s.Get(ctx, "run-ptool"); err != nil || len(r.PtoolCalls) != 1 {
						t.Errorf("a run of version %d after Open: %+v, %v", v, r, err)
					}
				}
				if err := s.Save(ctx, "c", []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}); err != nil {
					t.Errorf("Save after migrating from %d: %v", v, err)
				}
				s.Close()
				// Opening again applies nothing.
				s2 := open(t, d)
				if got, _ := s2.Version(ctx); got != SchemaVersion() {
					t.Errorf("version after a second Open = %d", got)
				}
			})
		}
	})
}

func TestNewerSchema(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		if _, err := s.db.Exec(s.q("UPDATE ptk_schema SET version = ?"), SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err := Open(context.Background(), dsn)
		if !errors.Is(err, ErrNewerSchema) {
			t.Fatalf("Open of a newer store = %v, want ErrNewerSchema", err)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "upgrade ptk") || !strings.Contains(msg, strconv.Itoa(SchemaVersion()+1)) {
			t.Errorf("message = %q", msg)
		}
	})
}

func TestCorruptFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string][]byte{
		"garbage":   bytes.Repeat([]byte("not a database at all. "), 400),
		"truncated": truncatedDB(t, dir),
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, name+".db")
			os.WriteFile(f, content, 0o644)
			_, err := Open(context.Background(), f)
			if err == nil {
				t.Fatal("Open of a corrupt file succeeded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, f) || !strings.Contains(msg, "not a readable SQLite database") {
				t.Errorf("message = %q", msg)
			}
		})
	}
}

// truncatedDB is a real store whose file was cut in the middle of its
// header page.
func truncatedDB(t *testing.T, dir string) []byte {
	f := filepath.Join(dir, "whole.db")
	s := open(t, f)
	s.Write(context.Background(), fixture()...)
	s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	s.Close()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Clone(b)
	copy(b[:16], "SQLite format 2\x00")
	return b
}

// TestReadOnly opens a store the process cannot write: as root, in a
// helper process run as nobody.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "traces.db")
	s := open(t, f)
	s.Write(context.Background(), fixture()...)
	s.Close()
	if os.Getuid() != 0 {
		os.Chmod(f, 0o444)
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
		_, err := Open(context.Background(), f)
		checkReadOnly(t, err, f)
		return
	}
	// Root writes anything: run the check as nobody, from a copy of the
	// test binary that nobody can run.
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	os.Chmod(f, 0o644)
	bin := filepath.Join(dir, "trace.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bin, b, 0o755)
	cmd := exec.Command(bin, "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "PTK_TRACE_HELPER=open", "PTK_TRACE_DB="+f)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cmd.CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	if !strings.HasPrefix(line, "error: ") {
		t.Fatalf("helper said %q", out)
	}
	checkReadOnly(t, errors.New(strings.TrimPrefix(line, "error: ")), f)
}

func checkReadOnly(t *testing.T, err error, f string) {
	t.Helper()
	if err == nil {
		t.Fatal("Open of a read-only store succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, f) || !strings.Contains(msg, "cannot be written") {
		t.Errorf("message = %q", msg)
	}
}

// TestHelperProcess is the other process of the tests that need several:
// it does what $PTK_TRACE_HELPER says on the store $PTK_TRACE_DB.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("PTK_TRACE_HELPER")
	if mode == "" {
		t.Skip("run by the tests that need another process")
	}
	if mode == "readonly" { // in a mount namespace where the store's folder is read-only
		if err := readOnlyHelper(os.Getenv("PTK_TRACE_DB")); err != nil {
			fmt.Println("error: " + err.Error())
			os.Exit(1)
		}
		fmt.Println("read-only filesystem: ok")
		os.Exit(0)
	}
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("PTK_TRACE_DB"))
	if err != nil {
		fmt.Println("error: " + err.Error())
		os.Exit(0)
	}
	defer s.Close()
	switch mode {
	case "write": // record $N runs through a Writer, as a ptk run would
		n, _ := strconv.Atoi(os.Getenv("N"))
		w := NewWriter(s, os.Stderr)
		for i := range n {
			w.Record(bigRecord(fmt.Sprintf("%s-%03d", os.Getenv("PREFIX"), i)))
			time.Sleep(time.Millisecond)
		}
		if err := w.Close(0); err != nil {
			fmt.Println("error: " + err.Error())
		}
		written, failed, dropped := w.Counts()
		fmt.Println(written, failed, dropped)
	case "begin": // begin a run, add a model call and a tool call, say so once they are stored, and wait to be killed
		w := NewWriter(s, os.Stderr)
		id := os.Getenv("PREFIX")
		w.Begin(Run{ID: id, Kind: KindAgent, Name: "live", Model: "m", Input: "go on"})
		w.Append(&Record{Run: Run{ID: id}, ModelCalls: []ModelCall{{Text: "thinking", Usage: ptk.Usage{PromptTokens: 7}}}}, [3]int{})
		w.Append(&Record{Run: Run{ID: id}, ToolCalls: []ToolCall{{Tool: "read", Args: []byte(`{}`), Outcome: OutcomeRan}}}, [3]int{1, 0, 0})
		for {
			if r, err := s.Get(ctx, id); err == nil && len(r.ModelCalls) == 1 && len(r.ToolCalls) == 1 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Println("begun")
		time.Sleep(time.Hour)
	case "kill": // write batches of 10 until killed, printing each batch's ids once it is committed
		for b := 0; ; b++ {
			var batch []*Record
			for i := range 10 {
				batch = append(batch, bigRecord(fmt.Sprintf("%s-%05d-%d", os.Getenv("PREFIX"), b, i)))
			}
			if err := s.Write(ctx, batch...); err != nil {
				fmt.Println("error: " + err.Error())
				os.Exit(1)
			}
			for _, r := range batch {
				fmt.Println(r.ID)
			}
		}
	}
	os.Exit(0)
}

// bigRecord is an agent run with 20 tool calls of 4 KB results.
func bigRecord(id string) *Record {
	r := &Record{Run: Run{ID: id, Kind: KindAgent, Model: "m", StartedAt: time.Now(), Status: StatusOK, Input: "x"}}
	for i := range 20 {
		r.ToolCalls = append(r.ToolCalls, ToolCall{Tool: "read_file", Args: []byte(`{"path":"f"}`), Result: strings.Repeat("r", 4096), Outcome: OutcomeRan})
		if i%5 == 0 {
			r.ModelCalls = append(r.ModelCalls, ModelCall{Text: "calling"})
		}
	}
	return r
}

func helper(t *testing.T, dsn, mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(append(os.Environ(), "PTK_TRACE_HELPER="+mode, "PTK_TRACE_DB="+dsn), env...)
	return cmd
}

// TestProcesses has three processes record into one store at once, as a
// ptk serve and two ptk runs would, while this one reads it: every run
// lands.
func TestProcesses(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := open(t, dsn) // the schema exists before they start, as a reader would see
		const procs, n = 3, 40
		var wg sync.WaitGroup
		outs := make([]string, procs)
		for p := range procs {
			wg.Go(func() {
				out, err := helper(t, dsn, "write", "N="+strconv.Itoa(n), "PREFIX=p"+strconv.Itoa(p)).CombinedOutput()
				outs[p] = string(out)
				if err != nil {
					t.Errorf("process %d: %v: %s", p, err, out)
				}
			})
		}
		stop := make(chan struct{})
		reads := 0
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.List(context.Background(), Filter{Limit: 10}); err != nil {
					t.Errorf("reading while they write: %v", err)
					return
				}
				reads++
				time.Sleep(5 * time.Millisecond)
			}
		}()
		wg.Wait()
		close(stop)
		for p, out := range outs {
			if !strings.HasPrefix(out, strconv.Itoa(n)+" 0 0") {
				t.Errorf("process %d: written, failed, dropped = %q", p, out)
			}
		}
		if got, err := s.Count(context.Background(), Filter{}); err != nil || got != procs*n {
			t.Errorf("%d runs in the store, want %d (%v)", got, procs*n, err)
		}
	})
}

// TestKill9 kills a process with SIGKILL while it records, again and
// again: every batch it had committed is there, whole, and the store still
// opens and passes its integrity check.
func TestKill9(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		loops := 6
		if testing.Short() {
			loops = 2
		}
		var committed []string
		for loop := range loops {
			cmd := helper(t, dsn, "kill", "PREFIX=L"+strconv.Itoa(loop))
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			want := 10 * (1 + rand.IntN(8))
			for len(committed) < want*(loop+1) && sc.Scan() {
				if strings.HasPrefix(sc.Text(), "error: ") {
					t.Fatal(sc.Text())
				}
				committed = append(committed, sc.Text())
			}
			// The next batch is being written now, or about to be.
			cmd.Process.Kill()
			io.Copy(io.Discard, stdout)
			cmd.Wait()
		}
		s := open(t, dsn)
		ctx := context.Background()
		if !IsPostgres(dsn) {
			var ok string
			s.db.QueryRow("PRAGMA integrity_check").Scan(&ok)
			if ok != "ok" {
				t.Errorf("integrity_check: %s", ok)
			}
		}
		for _, id := range committed {
			r, err := s.Get(ctx, id)
			if err != nil {
				t.Fatalf("committed run %s: %v", id, err)
			}
			if len(r.ToolCalls) != 20 || len(r.ModelCalls) != 4 {
				t.Fatalf("run %s has %d tool calls, %d model calls", id, len(r.ToolCalls), len(r.ModelCalls))
			}
		}
		// No run is there in part.
		var partial int
		s.db.QueryRow("SELECT COUNT(*) FROM runs WHERE tool_calls <> (SELECT COUNT(*) FROM tool_calls WHERE run_id = runs.id)").Scan(&partial)
		if partial != 0 {
			t.Errorf("%d runs without all their tool calls", partial)
		}
	})
}

// TestWriterFailing: a store that fails never blocks or fails the caller,
// and says so once.
func TestWriterFailing(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "traces.db"))
	s.db.Close() // every write now fails
	var errOut bytes.Buffer
	var mu sync.Mutex
	w := NewWriter(s, writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return errOut.Write(p) }))
	start := time.Now()
	const n = 2 * QueueSize
	for i := range n {
		w.Record(&Record{Run: Run{ID: strconv.Itoa(i), Kind: KindAgent}})
	}
	// Never blocked by the failing store (whose writes wait up to 20 s);
	// the bound leaves room for a loaded machine.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Record took %v for %d records", d, n)
	}
	if err := w.Close(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	written, failed, dropped := w.Counts()
	if written != 0 || failed+dropped != n {
		t.Errorf("written %d, failed %d, dropped %d", written, failed, dropped)
	}
	mu.Lock()
	defer mu.Unlock()
	// The first failure at once (the store's, or the queue's when it
	// filled before the writer's goroutine ran), the rest when the Writer
	// closes.
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ptk: trace store "+s.Name()+": ") ||
		!strings.Contains(lines[0], "not recorded: sql: database is closed") && !strings.Contains(lines[0], "not recorded: the queue is full") ||
		!strings.Contains(lines[1], "more not recorded since the last message") || !strings.Contains(errOut.String(), "database is closed") {
		t.Errorf("error output: %q", errOut.String())
	}
	w.Record(&Record{}) // after Close: dropped, no panic
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestOpenAtOnce: several handles (as several processes would) open a new
// store at the same moment; each migration step is applied once.
func TestOpenAtOnce(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Go(func() {
				s, err := Open(context.Background(), dsn)
				if err == nil {
					err = s.Write(context.Background(), &Record{Run: Run{Kind: KindAgent}})
					s.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("handle %d: %v", i, err)
			}
		}
		s := open(t, dsn)
		if n, _ := s.Count(context.Background(), Filter{}); n != len(errs) {
			t.Errorf("%d runs, want %d", n, len(errs))
		}
	})
}
