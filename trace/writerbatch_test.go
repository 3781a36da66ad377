package trace

import (
	"path/filepath"
	"testing"
	"time"
)

// TestWriterLingerWakes: a Writer lingering for more records writes at
// once when a batch's worth is queued, and Close does not wait for the
// linger either; with an hour's linger, either wait would time out.
func TestWriterLingerWakes(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "traces.db"))
	w := newWriter(s, nil, time.Hour)
	for i := range MaxBatch {
		w.Record(benchRecord(i))
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		written, failed, dropped := w.Counts()
		if failed+dropped != 0 {
			t.Fatalf("failed %d, dropped %d", failed, dropped)
		}
		if written == MaxBatch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of a full batch of %d written after 20s: the Writer waited for its linger", written, MaxBatch)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// One more record, then Close: written now, not in an hour.
	w.Record(benchRecord(MaxBatch))
	done := make(chan error, 1)
	go func() { done <- w.Close(0) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for the Writer's linger")
	}
	if written, _, _ := w.Counts(); written != MaxBatch+1 {
		t.Fatalf("written %d of %d", written, MaxBatch+1)
	}
	var n int
	if err := s.db.QueryRow("SELECT COUNT(*) FROM runs").Scan(&n); err != nil || n != MaxBatch+1 {
		t.Fatalf("%d runs in the store (%v), want %d", n, err, MaxBatch+1)
	}
}

// TestWriterLingerGathers: what is queued while a Writer lingers goes in
// the same transaction as the record that began the batch: a reader never
// sees the first without the second (a run begun and finished within the
// linger is never seen running).
func TestWriterLingerGathers(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "traces.db"))
	w := newWriter(s, nil, 200*time.Millisecond)
	defer w.Close(0)
	w.Record(benchRecord(0))
	time.Sleep(20 * time.Millisecond)
	w.Record(benchRecord(1))
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		if err := s.db.QueryRow("SELECT COUNT(*) FROM runs").Scan(&n); err != nil {
			t.Fatal(err)
		}
		switch {
		case n == 2:
			return
		case n != 0:
			t.Fatalf("%d of the 2 records queued within the linger written: they went in two batches", n)
		case time.Now().After(deadline):
			t.Fatal("nothing written after 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
