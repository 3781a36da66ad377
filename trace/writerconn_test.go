package trace

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestWriterCheckpoints: a Writer on SQLite writes on a connection that
// does not checkpoint as it commits, and checkpoints on its own within
// CheckpointEvery; the database file alone (read as immutable, without the
// log) holds what it wrote. Its connection goes back to the pool as the
// pool's others are: checkpointing when it commits.
func TestWriterCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "traces.db")
	s := open(t, path)
	w := NewWriter(s, nil)
	const n = 50
	for i := range n {
		w.Record(benchRecord(i))
	}
	// The records are in the database file itself, not only in the log.
	inFile := func() int {
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var k int
		if err := db.QueryRow("SELECT COUNT(*) FROM runs").Scan(&k); err != nil {
			return -1 // the file is being written
		}
		return k
	}
	deadline := time.Now().Add(5 * time.Second)
	for inFile() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the database file holds %d runs of %d written, 5s on: no checkpoint", inFile(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := w.Close(0); err != nil {
		t.Fatal(err)
	}
	if written, failed, dropped := w.Counts(); written != n || failed+dropped != 0 {
		t.Fatalf("written %d, failed %d, dropped %d", written, failed, dropped)
	}
	// Every connection of the pool (at most 4) checkpoints as SQLite does
	// by default.
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 4 {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var pages int
		if err := c.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if pages != 1000 {
			t.Errorf("a pool connection's wal_autocheckpoint is %d after the Writer closed, want 1000", pages)
		}
	}
}

// TestWriterReconnects: a Writer whose connection the PostgreSQL server
// ended (a restart, an administrator) takes another for its next batch and
// loses at most the batch that failed.
func TestWriterReconnects(t *testing.T) {
	ctx := context.Background()
	s := open(t, newPG(t))
	w := NewWriter(s, nil)
	wait := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not in 10s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	w.Record(benchRecord(0))
	wait("the first record written", func() bool { return w.written.Load() == 1 })
	// The Writer waits for records: its connection is idle.
	var pid int
	if err := w.conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	w.Record(benchRecord(1))
	wait("the second record written or failed", func() bool { return w.written.Load()+w.failed.Load() == 2 })
	w.Record(benchRecord(2))
	if err := w.Close(0); err != nil {
		t.Fatal(err)
	}
	written, failed, _ := w.Counts()
	if written+failed != 3 || failed > 1 {
		t.Fatalf("written %d, failed %d: want the third written on a new connection", written, failed)
	}
	for _, id := range []string{"bench-0", "bench-2"} {
		if _, err := s.Get(ctx, id); err != nil {
			t.Errorf("run %s: %v", id, err)
		}
	}
}
