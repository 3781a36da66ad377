package trace

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Writer writes records to a store off the caller's path: Record queues a
// record and returns at once; one goroutine writes what is queued in
// batches, one transaction a batch (what arrives within Linger, at most
// MaxBatch records). A slow or failing store never blocks or
// fails the caller: when the queue is full a record is dropped, and the
// first failure is reported once on the Writer's error output.
type Writer struct {
	s       *Store
	ch      chan func() *Record
	done    chan struct{}
	errOut  io.Writer
	once    sync.Once
	closed  atomic.Bool
	mu      sync.Mutex // guards ch's closing against Record
	dropped atomic.Int64
	written atomic.Int64
	failed  atomic.Int64
}

// QueueSize is how many records a Writer holds before it drops new ones.
const QueueSize = 4096

// MaxBatch is the most records a Writer writes in one transaction.
const MaxBatch = 256

// Linger is how long a Writer waits for more records before it writes a
// batch: a transaction of many records costs much less than as many of one.
// Close does not wait.
const Linger = 50 * time.Millisecond

// NewWriter starts a Writer on s that reports its first failure on errOut
// (nil: nowhere).
func NewWriter(s *Store, errOut io.Writer) *Writer {
	w := &Writer{s: s, ch: make(chan func() *Record, QueueSize), done: make(chan struct{}), errOut: errOut}
	go w.loop()
	return w
}

// Record queues rec to be written. It never blocks.
func (w *Writer) Record(rec *Record) {
	w.RecordFunc(func() *Record { return rec })
}

// RecordFunc queues a record that build makes, on the Writer's goroutine,
// just before it is written: work that a record needs (hashing, encoding)
// is done there, off the caller's path. It never blocks.
func (w *Writer) RecordFunc(build func() *Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed.Load() {
		w.dropped.Add(1)
		return
	}
	select {
	case w.ch <- build:
	default:
		w.dropped.Add(1)
		w.warn(fmt.Errorf("the queue is full (%d records): the store is too slow", QueueSize))
	}
}

func (w *Writer) warn(err error) {
	w.once.Do(func() {
		if w.errOut != nil {
			fmt.Fprintf(w.errOut, "ptk: not recording runs: trace store %s: %v\n", w.s.Name(), err)
		}
	})
}

func (w *Writer) loop() {
	defer close(w.done)
	batch := make([]*Record, 0, MaxBatch)
	linger := time.NewTimer(Linger)
	for build := range w.ch {
		batch = append(batch[:0], build())
		linger.Reset(Linger)
	fill:
		for len(batch) < MaxBatch {
			select {
			case r, ok := <-w.ch:
				if !ok {
					break fill
				}
				batch = append(batch, r())
			case <-linger.C:
				break fill
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*BusyTimeout)
		err := w.s.Write(ctx, batch...)
		cancel()
		if err != nil {
			w.failed.Add(int64(len(batch)))
			w.warn(err)
			continue
		}
		w.written.Add(int64(len(batch)))
	}
}

// Close writes what is queued, waiting at most timeout (0: as long as it
// takes), and stops the Writer. It does not close the store.
func (w *Writer) Close(timeout time.Duration) error {
	w.mu.Lock()
	if !w.closed.Swap(true) {
		close(w.ch)
	}
	w.mu.Unlock()
	if timeout <= 0 {
		<-w.done
		return nil
	}
	select {
	case <-w.done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("trace store %s: %d records not written after %v", w.s.Name(), len(w.ch), timeout)
	}
}

// Counts returns how many records were written, failed to be written, and
// were dropped.
func (w *Writer) Counts() (written, failed, dropped int64) {
	return w.written.Load(), w.failed.Load(), w.dropped.Load()
}
