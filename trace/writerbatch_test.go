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
