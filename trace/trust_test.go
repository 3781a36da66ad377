package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/pgtext"
	"github.com/ptkit/ptk/internal/rofs"
)

// hostile is text a run may record that PostgreSQL's text cannot hold as
// it is: NUL bytes, bytes that are not UTF-8, and the store's own escape.
var hostile = []string{
	"a NUL \x00 in the middle",
	"\x00",
	"a cut character \xe2\x82 and a stray \xff byte",
	"the escape " + pgtext.Esc + "0 written by hand, and " + pgtext.Esc + "x41, " + pgtext.Esc,
	"plain text, ünïcödé and emoji 🙂",
	"",
}

// hostileRecord is a run whose every text field holds text PostgreSQL's
// text cannot hold as it is.
func hostileRecord(id string) *Record {
	h := strings.Join(hostile, " | ")
	return &Record{
		Run: Run{ID: id, Kind: KindAgent, Name: "name " + h, Model: "model\x00", Mode: "ptk", StartedAt: t0, Status: StatusError,
			ErrorCode: "TOOL_EXECUTION_FAILED", ErrorMessage: h, Iterations: 1, NumToolCalls: 1, Input: "prompt " + h, Output: "answer " + h},
		Detail:     json.RawMessage(`{"note":"` + pgtext.Esc + `"}`),
		ModelCalls: []ModelCall{{Mode: "ptk", RequestHash: "hash", Text: "reply " + h, Error: h}},
		ToolCalls: []ToolCall{{Iteration: 1, CallID: "c\x001", Tool: "read_file", Args: json.RawMessage(`{"path":"bin\u0000ary"}`),
			Result: "file: " + h, Outcome: OutcomeRan, Repairs: []string{"repair " + pgtext.Esc}}},
		PtoolCalls: []PtoolCall{{Ptool: "p", Input: json.RawMessage(`{"text":"` + pgtext.Esc + `"}`), Output: json.RawMessage(`"x"`), Source: "model\x00"}},
	}
}

// TestHostileText writes and reads back runs and conversations holding
// NUL bytes and invalid UTF-8 on both databases: nothing is lost, and
// filters find them. On PostgreSQL the record failed as a whole before.
func TestHostileText(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		want := hostileRecord("run-\x00-hostile")
		if err := s.Write(ctx, hostileRecord("run-\x00-hostile"), fixture()[0]); err != nil {
			t.Fatalf("Write: %v", err)
		}
		got, err := s.Get(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		want.NumToolCalls = 1
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Get (-want +got):\n%s", diff)
		}
		for _, f := range []Filter{{Model: "model\x00"}, {Text: "a nul \x00"}, {Name: want.Name}, {Tool: "read_file", Status: StatusError}} {
			runs, err := s.List(ctx, f)
			if err != nil || len(runs) != 1 || runs[0].ID != want.ID || runs[0].Input != want.Input {
				t.Errorf("List(%+v) = %d runs, %v", f, len(runs), err)
			}
		}
		st, err := s.Stats(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if !slicesHasName(st.Models, "model\x00") {
			t.Errorf("Stats' models: %+v", st.Models)
		}
		msgs := []ptk.Message{{Role: ptk.RoleUser, Content: strings.Join(hostile, "|")}, {Role: ptk.RoleAssistant, Content: pgtext.Esc + "0"}}
		if err := s.Save(ctx, "conv\x00", msgs); err != nil {
			t.Fatal(err)
		}
		back, err := s.Load(ctx, "conv\x00")
		if err != nil {
			t.Fatal(err)
		}
		// JSON keeps NUL bytes (as \u0000) and turns invalid UTF-8 into
		// U+FFFD, as it does everywhere.
		var wantMsgs []ptk.Message
		b, _ := json.Marshal(msgs)
		json.Unmarshal(b, &wantMsgs)
		if diff := cmp.Diff(wantMsgs, back); diff != "" {
			t.Errorf("Load (-want +got):\n%s", diff)
		}
		convs, err := s.Conversations(ctx)
		if err != nil || len(convs) != 1 || convs[0].ID != "conv\x00" {
			t.Errorf("Conversations = %+v, %v", convs, err)
		}
	})
}

func slicesHasName(st []Stat, name string) bool {
	for _, s := range st {
		if s.Name == name {
			return true
		}
	}
	return false
}

// TestOneRecordNeverSinksABatch records concurrent runs through a Writer,
// one of them with NUL bytes and, on PostgreSQL, one with a number its
// column cannot hold: every other run of the batch is written, the one
// refused is named on the error output, and a later burst of failures is
// said too, not dropped in silence.
func TestOneRecordNeverSinksABatch(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		var errOut syncBuffer
		w := NewWriter(s, &errOut)
		const n = 20
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := bigRecord(fmt.Sprintf("burst1-%02d", i))
				switch i {
				case 3:
					r = hostileRecord("burst1-03")
				case 7:
					r.Iterations = 1 << 40 // PostgreSQL's INTEGER stops at 2^31-1; SQLite's does not
				}
				w.Record(r)
			})
		}
		wg.Wait()
		waitCounts(t, w, n)
		// A second burst after the first failure.
		bad := bigRecord("burst2-bad")
		bad.Iterations = 1 << 41
		w.Record(bigRecord("burst2-good"))
		w.Record(bad)
		waitCounts(t, w, n+2)
		if err := w.Close(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		written, failed, dropped := w.Counts()
		ctx := context.Background()
		if r, err := s.Get(ctx, "burst1-03"); err != nil || r.Input != hostileRecord("").Input {
			t.Errorf("the run holding NUL bytes: %v", err)
		}
		if !IsPostgres(dsn) {
			if written != n+2 || failed != 0 || dropped != 0 || errOut.String() != "" {
				t.Errorf("written %d, failed %d, dropped %d; error output %q", written, failed, dropped, errOut.String())
			}
			return
		}
		if written != n || failed != 2 || dropped != 0 {
			t.Errorf("written %d, failed %d, dropped %d: only the two refused runs may be lost", written, failed, dropped)
		}
		if c, _ := s.Count(ctx, Filter{}); c != n {
			t.Errorf("%d runs in the store, want %d", c, n)
		}
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "ptk: trace store ") || !strings.Contains(lines[0], "run burst1-07 not recorded") ||
			!strings.Contains(lines[0], "greater than maximum value") || !strings.Contains(lines[1], "1 run more not recorded") {
			t.Errorf("error output:\n%s", errOut.String())
		}
	})
}

// waitCounts waits until the Writer has written or failed n records.
func waitCounts(t *testing.T, w *Writer, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		written, failed, dropped := w.Counts()
		if written+failed+dropped >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: written %d, failed %d, dropped %d of %d", written, failed, dropped, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// mute is a PostgreSQL server that takes connections and never answers:
// it reads what the client sends and says nothing.
func mute(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				go func() { <-stop; c.Close() }()
				b := make([]byte, 512)
				for {
					if _, err := c.Read(b); err != nil {
						return
					}
				}
			})
		}
	}()
	t.Cleanup(func() { ln.Close(); close(stop); conns.Wait() })
	return "postgres://ptk:ptk@" + ln.Addr().String() + "/ptk_test?sslmode=disable"
}

// TestMuteServer: Open and OpenReadOnly of a PostgreSQL that never answers
// end at their deadline with one line that says so; they used to wait for
// ever.
func TestMuteServer(t *testing.T) {
	dsn := mute(t)
	for name, open := range map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			s, err := open(ctx, dsn)
			if s != nil {
				s.Close()
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s took %v with a deadline of 500ms", name, d)
			}
			if err == nil || !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "\n") ||
				!strings.Contains(err.Error(), "did not answer in time") || strings.Contains(err.Error(), ":ptk@") {
				t.Errorf("%s = %v", name, err)
			}
		})
	}
	t.Run("default deadline", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		_, err := Open(context.Background(), dsn)
		if d := time.Since(start); err == nil || d < DefaultOpenTimeout-time.Second || d > DefaultOpenTimeout+5*time.Second {
			t.Errorf("Open without a deadline: %v after %v; want an error after DefaultOpenTimeout (%v)", err, d, DefaultOpenTimeout)
		}
	})
}

// TestConcurrentAppends has several handles (as several processes would)
// continue one conversation at once, each from what it loaded: every
// exchange is kept, each whole, none in the middle of another.
func TestConcurrentAppends(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		first := open(t, dsn)
		start := []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}, {Role: ptk.RoleAssistant, Content: "hello"}}
		if err := first.Append(ctx, "c1", nil, start); err != nil {
			t.Fatal(err)
		}
		const runs = 6
		handles := make([]*Store, runs)
		loaded := make([][]ptk.Message, runs)
		for i := range handles {
			handles[i] = open(t, dsn)
			var err error
			if loaded[i], err = handles[i].Load(ctx, "c1"); err != nil || len(loaded[i]) != 2 {
				t.Fatalf("Load: %v, %v", loaded[i], err)
			}
		}
		// All have loaded before any appends, as runs that overlap do.
		var wg sync.WaitGroup
		errs := make([]error, runs)
		for i := range runs {
			wg.Go(func() {
				errs[i] = handles[i].Append(ctx, "c1", loaded[i], []ptk.Message{
					{Role: ptk.RoleUser, Content: fmt.Sprintf("question %d", i)},
					{Role: ptk.RoleAssistant, Content: fmt.Sprintf("answer %d", i)},
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("run %d: %v", i, err)
			}
		}
		got, err := first.Load(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2+2*runs || !agent.HasPrefix(got, start) {
			t.Fatalf("%d messages, want %d: %+v", len(got), 2+2*runs, got)
		}
		seen := map[string]bool{}
		for i := 2; i < len(got); i += 2 {
			var q, a int
			if _, err := fmt.Sscanf(got[i].Content, "question %d", &q); err != nil {
				t.Fatalf("message %d: %q", i, got[i].Content)
			}
			if _, err := fmt.Sscanf(got[i+1].Content, "answer %d", &a); err != nil || a != q || seen[got[i].Content] {
				t.Fatalf("messages %d and %d: %q, %q", i, i+1, got[i].Content, got[i+1].Content)
			}
			seen[got[i].Content] = true
		}

		// A conversation cleared meanwhile: the exchange is not kept, and
		// the error says so.
		base, _ := first.Load(ctx, "c1")
		if err := handles[0].Save(ctx, "c1", nil); err != nil {
			t.Fatal(err)
		}
		err = first.Append(ctx, "c1", base, []ptk.Message{{Role: ptk.RoleUser, Content: "late"}})
		if !errors.Is(err, agent.ErrConversationChanged) || !strings.Contains(err.Error(), "was not kept") {
			t.Errorf("Append after a clear = %v", err)
		}
		if got, _ := first.Load(ctx, "c1"); len(got) != 0 {
			t.Errorf("after a refused Append the conversation holds %+v", got)
		}
	})
}

// TestReadOnlyFilesystem reads a store on a filesystem mounted read-only
// (in a mount namespace of a helper process): OpenReadOnly reads every
// run, Open says the store cannot be written, and nothing is changed.
func TestReadOnlyFilesystem(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "traces.db")
	s := open(t, f)
	if err := s.Write(context.Background(), fixture()...); err != nil {
		t.Fatal(err)
	}
	s.Save(context.Background(), "c1", []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}})
	s.Close()
	before, _ := os.ReadDir(dir)
	cmd := helper(t, f, "readonly")
	rofs.Command(cmd, dir)
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "operation not permitted") {
		t.Skipf("no mount namespace here: %s", out)
	}
	if err != nil || !strings.Contains(string(out), "read-only filesystem: ok") {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	after, _ := os.ReadDir(dir)
	if len(after) != len(before) {
		t.Errorf("the folder held %d files, and %d after", len(before), len(after))
	}
}

// readOnlyHelper is the helper process of TestReadOnlyFilesystem, inside
// its mount namespace.
func readOnlyHelper(db string) error {
	if err := rofs.Enter(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(db), "probe"), nil, 0o644); err == nil {
		return errors.New("the folder is writable")
	}
	ctx := context.Background()
	if _, err := Open(ctx, db); err == nil || !strings.Contains(err.Error(), "cannot be written") {
		return fmt.Errorf("Open on a read-only filesystem = %v", err)
	}
	s, err := OpenReadOnly(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	if n, err := s.Count(ctx, Filter{}); err != nil || n != len(fixture()) {
		return fmt.Errorf("Count = %d, %v", n, err)
	}
	if r, err := s.Get(ctx, "run-ptool"); err != nil || len(r.PtoolCalls) != 1 {
		return fmt.Errorf("Get = %v", err)
	}
	if _, err := s.Stats(ctx, Filter{}); err != nil {
		return fmt.Errorf("Stats: %v", err)
	}
	if msgs, err := s.Load(ctx, "c1"); err != nil || len(msgs) != 1 {
		return fmt.Errorf("Load = %v, %v", msgs, err)
	}
	if err := s.Write(ctx, &Record{Run: Run{Kind: KindAgent}}); !errors.Is(err, ErrReadOnly) {
		return fmt.Errorf("Write on a read-only store = %v", err)
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(filepath.Dir(db), "missing.db")); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("OpenReadOnly of a missing file = %v", err)
	}
	return nil
}

// TestOpenReadOnly: a reader on a writable store sees what a writer adds
// while it is open, never changes the store, and refuses what it cannot
// read: a newer schema, an older one it may not upgrade, a file that is
// no store.
func TestOpenReadOnly(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		w := open(t, dsn)
		r, err := OpenReadOnly(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := w.Write(ctx, fixture()...); err != nil {
			t.Fatal(err)
		}
		if n, err := r.Count(ctx, Filter{}); err != nil || n != len(fixture()) {
			t.Errorf("the reader counts %d runs, %v", n, err)
		}
		if _, err := r.Prune(ctx, time.Now(), 0); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Prune on a reader = %v", err)
		}
		// Even around the store's own guard, the database refuses writes.
		if _, err := r.db.ExecContext(ctx, "DELETE FROM runs"); err == nil {
			t.Error("a read-only store's database took a DELETE")
		}
		if _, err := w.db.Exec(w.q("UPDATE ptk_schema SET version = ?"), SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenReadOnly(ctx, dsn); !errors.Is(err, ErrNewerSchema) {
			t.Errorf("OpenReadOnly of a newer store = %v", err)
		}
		if _, err := w.db.Exec(w.q("UPDATE ptk_schema SET version = ?"), 1); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenReadOnly(ctx, dsn); !errors.Is(err, ErrOlderSchema) || strings.Contains(err.Error(), "\n") {
			t.Errorf("OpenReadOnly of an older store = %v", err)
		}
		if v, _ := w.Version(ctx); v != 1 {
			t.Errorf("OpenReadOnly changed the schema to %d", v)
		}
	})
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("not a database "), 400), 0o644)
	if _, err := OpenReadOnly(context.Background(), garbage); err == nil || !strings.Contains(err.Error(), "not a readable SQLite database") {
		t.Errorf("OpenReadOnly of garbage = %v", err)
	}
}
