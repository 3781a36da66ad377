package trace

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Writer writes records to a store off the caller's path: Record queues a
// record and returns at once; one goroutine writes what is queued in
// batches, one transaction a batch (what arrives within Linger, at most
// MaxBatch records). A slow or failing store never blocks or fails the
// caller: when the queue is full a record is dropped. A record the
// database refuses (a value it cannot hold) costs only itself: the rest of
// its batch is written one by one. Nothing is lost silently: the first
// record not written is said at once on the Writer's error output, later
// ones in a line at most every ReportEvery while they go on, and the rest
// when the Writer closes.
type Writer struct {
	s       *Store
	conn    *wconn // the connection it writes on, once it has one; only its goroutine uses it
	ch      chan item
	full    chan struct{} // a batch's worth is queued: wakes the lingering writer
	need    atomic.Int64  // how many more records fill the lingering writer's batch
	linger  time.Duration // Linger; tests set a longer one
	done    chan struct{}
	owner   string        // names this writer on the rows of its running runs
	running atomic.Int64  // runs begun and not finished
	stop    chan struct{} // ends the heartbeat
	errOut  io.Writer
	closed  atomic.Bool
	mu      sync.Mutex // guards ch's closing against Record
	dropped atomic.Int64
	written atomic.Int64
	failed  atomic.Int64
	commits atomic.Int64  // transactions committed since the last checkpoint (SQLite)
	ckpt    chan struct{} // closed when the checkpoints have ended (SQLite)

	// appended holds, by live run, how many of its model, tool and ptool
	// calls are stored (from seq 0 on, without a gap), so that its Finish
	// writes only the rest; only the goroutine that writes uses it.
	appended map[string][3]int

	// What the error output was told, under rmu.
	rmu     sync.Mutex
	said    bool      // the first problem was said
	saidAt  time.Time // when a line was last written
	pending int64     // records lost since that line
	last    error     // why the last of them was lost
}

// ReportEvery is how often, at most, a Writer says that records go on
// being lost, after its first message.
const ReportEvery = time.Minute

// QueueSize is how many records a Writer holds before it drops new ones.
const QueueSize = 4096

// MaxBatch is the most records a Writer writes in one transaction: a
// commit writes each page the transaction changed to SQLite's log, so a
// batch of 1,024 costs a live run's calls a fifth less CPU than one of 256.
const MaxBatch = 1024

// Linger is how long a Writer waits for more records before it writes a
// batch: a transaction of many records costs much less than as many of one.
// It sleeps meanwhile, woken early only by a batch's worth queued or by
// Close (which does not wait), not by each record.
const Linger = 50 * time.Millisecond

// NewWriter starts a Writer on s that reports its first failure on errOut
// (nil: nowhere).
func NewWriter(s *Store, errOut io.Writer) *Writer {
	return newWriter(s, errOut, Linger)
}

func newWriter(s *Store, errOut io.Writer, linger time.Duration) *Writer {
	w := &Writer{s: s, ch: make(chan item, QueueSize), full: make(chan struct{}, 1), done: make(chan struct{}), errOut: errOut,
		linger: linger, owner: newOwner(), stop: make(chan struct{}), appended: map[string][3]int{}}
	go w.loop()
	go w.beat()
	if !s.pg {
		w.ckpt = make(chan struct{})
		go w.checkpoints()
	}
	return w
}

// CheckpointEvery is how often, at most, a Writer on SQLite copies what it
// wrote from the store's write-ahead log into the database file.
//
// A Writer writes on a connection of its own, on which SQLite does not
// checkpoint when a transaction commits (it does, by default, once the log
// holds 1,000 pages): a checkpoint waits for the disk (fsync, twice), and
// the Writer would wait with it while the records queue up. Its checkpoints
// are PASSIVE, on another connection: they never block a write, and what
// they copy is what was committed. Nothing committed is less durable than
// before (a commit is in the log either way; synchronous=NORMAL syncs the
// log at each checkpoint).
const CheckpointEvery = 250 * time.Millisecond

// checkpoints checkpoints the store's log every CheckpointEvery while the
// Writer commits, until Close.
func (w *Writer) checkpoints() {
	defer close(w.ckpt)
	w.every(CheckpointEvery, func() {
		if w.commits.Swap(0) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), BusyTimeout)
		w.s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		cancel()
	})
}

// every calls f every d until Close.
func (w *Writer) every(d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			f()
		}
	}
}

// connect gives the Writer a connection of its own, when the store has
// one to give: the Writer's transactions run on it (SQLite without its
// own checkpoints, see CheckpointEvery). Without one it writes on any of
// the pool's and tries again at its next write.
func (w *Writer) connect(ctx context.Context) {
	if w.conn != nil {
		return
	}
	c, err := w.s.db.Conn(ctx)
	if err != nil {
		return
	}
	if !w.s.pg {
		if _, err := c.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
			c.Close()
			return
		}
	}
	w.conn = &wconn{Conn: c}
}

// wconn is a Writer's connection and, on SQLite, the statements its
// driver prepared on it, by query.
type wconn struct {
	*sql.Conn
	stmts map[string]driver.Stmt
	args  []driver.NamedValue
}

// drop closes c, and the pool forgets it.
func (c *wconn) drop() {
	c.Raw(func(any) error {
		c.closeStmts()
		return driver.ErrBadConn // the pool drops it
	})
	c.Close()
}

// closeStmts closes the statements prepared on c; it runs in c.Raw.
func (c *wconn) closeStmts() {
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
}

// release gives the Writer's connection back to the store's pool as the
// pool's others are, or, if it cannot be made so, closes it.
func (w *Writer) release() {
	c := w.conn
	if c == nil {
		return
	}
	w.conn = nil
	if !w.s.pg {
		c.Raw(func(any) error { c.closeStmts(); return nil })
		ctx, cancel := context.WithTimeout(context.Background(), BusyTimeout)
		defer cancel()
		if _, err := c.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 1000"); err != nil {
			c.drop()
			return
		}
	}
	c.Close()
}

// Begin queues a run's row with status running, so that it is seen while
// it goes on; Append adds its calls as they finish, Finish the rest when it
// ends. Until Finish the Writer keeps the row's heartbeat fresh. It never
// blocks; run.ID must be set (NewID).
func (w *Writer) Begin(run Run) {
	w.running.Add(1)
	w.queue(item{rec: &Record{Run: run}, part: begun, owner: w.owner})
}

// Append queues calls of a begun run: rec holds the run's id and the new
// calls, which are the run's model, tool and ptool calls from the seqs in
// from (their indexes in the finished record). Each call is written once,
// complete: a call written again under the same seq replaces the one
// written before. It never blocks.
func (w *Writer) Append(rec *Record, from [3]int) {
	w.queue(item{rec: rec, part: calls, from: from})
}

// Finish queues the finished record of a begun run, built off the
// caller's path: it writes the run's row and the calls that Append did not
// store (none of a run that was not begun), not again those it did; so the
// finished record's first calls are the ones appended, as they were. It
// never blocks.
func (w *Writer) Finish(build func() *Record) {
	w.queue(item{build: build, part: ended})
	w.running.Add(-1)
}

// Progress queues a begun run's record so far, built off the caller's
// path, and the run goes on: it writes the run's row, still running, with
// the record's figures (tokens, cost, duration so far), its steps (replacing
// those written before), and the calls that Append did not store. Finish
// ends the run as ever. It never blocks.
func (w *Writer) Progress(build func() *Record) {
	w.queue(item{build: build, part: progress, owner: w.owner})
}

// beat refreshes the heartbeat of the Writer's running runs every
// HeartbeatEvery until Close.
func (w *Writer) beat() {
	w.every(HeartbeatEvery, func() {
		if w.running.Load() > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), HeartbeatEvery)
			w.s.heartbeat(ctx, w.owner)
			cancel()
		}
	})
}

// Record queues rec to be written. It never blocks.
func (w *Writer) Record(rec *Record) {
	w.queue(item{rec: rec})
}

// RecordFunc queues a record that build makes, on the Writer's goroutine,
// just before it is written: work that a record needs (hashing, encoding)
// is done there, off the caller's path. It never blocks.
func (w *Writer) RecordFunc(build func() *Record) {
	w.queue(item{build: build})
}

// queue queues an item; the Writer's goroutine builds its record when it
// has a build function.
func (w *Writer) queue(it item) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed.Load() {
		w.dropped.Add(1)
		return
	}
	select {
	case w.ch <- it:
		if n := w.need.Load(); n > 0 && int64(len(w.ch)) >= n {
			select {
			case w.full <- struct{}{}:
			default:
			}
		}
	default:
		w.dropped.Add(1)
		w.lost(1, "a run", fmt.Errorf("the queue is full (%d records): the store is too slow", QueueSize))
	}
}

// lost reports n records that were not written: the first at once, the
// rest at most every ReportEvery, and at Close.
func (w *Writer) lost(n int64, what string, err error) {
	w.rmu.Lock()
	defer w.rmu.Unlock()
	now := time.Now()
	if !w.said {
		w.said, w.saidAt = true, now
		w.say("%s not recorded: %v", what, err)
		return
	}
	w.pending += n
	w.last = err
	if now.Sub(w.saidAt) >= ReportEvery {
		w.sayPending(now)
	}
}

// sayPending says how many records were lost since the last line; the
// caller holds rmu.
func (w *Writer) sayPending(now time.Time) {
	if w.pending == 0 {
		return
	}
	w.say("%s more not recorded since the last message (the last: %v)", runs(w.pending), w.last)
	w.pending, w.saidAt = 0, now
}

func (w *Writer) say(format string, args ...any) {
	if w.errOut != nil {
		fmt.Fprintf(w.errOut, "ptk: trace store %s: "+format+"\n", append([]any{w.s.Name()}, args...)...)
	}
}

// runs says "1 run" or "n runs".
func runs(n int64) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

func (w *Writer) loop() {
	defer close(w.done)
	defer w.release()
	batch := make([]item, 0, MaxBatch)
	linger := time.NewTimer(w.linger)
	for it := range w.ch {
		batch = append(batch[:0], it.built())
		linger.Reset(w.linger)
	fill:
		for len(batch) < MaxBatch {
			// Take what is queued; then sleep until the linger ends, the
			// batch's rest is queued, or Close: not woken by each record,
			// a goroutine switch (and often a thread woken) per record.
			select {
			case it, ok := <-w.ch:
				if !ok {
					break fill
				}
				batch = append(batch, it.built())
				continue
			default:
			}
			w.need.Store(int64(MaxBatch - len(batch)))
			if len(w.ch) >= MaxBatch-len(batch) {
				continue // filled while need was stored
			}
			select {
			case <-linger.C:
				w.need.Store(0)
				break fill
			case <-w.full:
			case <-w.stop:
			}
			w.need.Store(0)
		}
		w.write(batch)
		clear(batch) // the records, for the garbage collector
	}
}

// write writes a batch in one transaction. When the database refused one
// of its records, the records are written one by one, so that only those
// it refuses are lost.
func (w *Writer) write(batch []item) {
	err := w.writeNow(batch...)
	if err == nil {
		w.written.Add(int64(len(batch)))
		return
	}
	if len(batch) == 1 || !refused(err) {
		w.failed.Add(int64(len(batch)))
		what := runs(int64(len(batch)))
		if len(batch) == 1 {
			what = "run " + batch[0].rec.ID
		}
		w.lost(int64(len(batch)), what, err)
		w.forget(batch...)
		return
	}
	for i, r := range batch {
		err := w.writeNow(r)
		if err == nil {
			w.written.Add(1)
			continue
		}
		if !refused(err) {
			// The store itself fails now: the rest would too.
			rest := int64(len(batch) - i)
			w.failed.Add(rest)
			w.lost(rest, runs(rest), err)
			w.forget(batch[i:]...)
			return
		}
		w.failed.Add(1)
		w.lost(1, "run "+r.rec.ID, err)
		w.forget(r)
	}
}

// writeNow writes items in one transaction, the finished runs' calls from
// those already stored on: when it commits, what it stored is counted in
// w.appended.
func (w *Writer) writeNow(items ...item) error {
	stored := w.plan(items)
	ctx, cancel := context.WithTimeout(context.Background(), 2*BusyTimeout)
	defer cancel()
	w.connect(ctx)
	err := w.s.write(ctx, w.conn, items)
	if err != nil {
		if w.conn != nil && !refused(err) {
			// The connection may be what fails: the next write takes
			// another.
			w.conn.drop()
			w.conn = nil
		}
		return err
	}
	w.commits.Add(1)
	for id, n := range stored {
		if n.ended {
			delete(w.appended, id)
		} else {
			w.appended[id] = n.calls
		}
	}
	return nil
}

// forget forgets the finished runs of items that were lost: they come no
// more.
func (w *Writer) forget(items ...item) {
	for _, it := range items {
		if it.part == ended {
			delete(w.appended, it.rec.ID)
		}
	}
}

// storedCalls is what a live run will have stored once a transaction
// commits.
type storedCalls struct {
	calls [3]int // its first calls of each kind, without a gap
	ended bool   // its Finish is in the transaction
}

// plan sets the from of each finished run's item to the calls of the run
// that are stored or are written before it in items, and returns what each
// live run of items will have stored once they are written. A run whose
// Append was lost (dropped from a full queue, or its transaction failed)
// has a gap: its calls from the gap on are written again by its Finish.
func (w *Writer) plan(items []item) map[string]storedCalls {
	var stored map[string]storedCalls
	for i := range items {
		it := &items[i]
		if it.part != calls && it.part != ended && it.part != progress {
			continue
		}
		if stored == nil {
			stored = make(map[string]storedCalls, 4)
		}
		id := it.rec.ID
		n, ok := stored[id]
		if !ok {
			n.calls = w.appended[id]
		}
		switch it.part {
		case ended:
			it.from = n.calls
			n.ended = true
			stored[id] = n
			continue
		case progress:
			// It writes the calls from those stored on: then all of its
			// calls are.
			it.from = n.calls
			for k, c := range [3]int{len(it.rec.ModelCalls), len(it.rec.ToolCalls), len(it.rec.PtoolCalls)} {
				n.calls[k] = max(n.calls[k], c)
			}
			stored[id] = n
			continue
		}
		for k, c := range [3]int{len(it.rec.ModelCalls), len(it.rec.ToolCalls), len(it.rec.PtoolCalls)} {
			if c > 0 && it.from[k] <= n.calls[k] {
				n.calls[k] = max(n.calls[k], it.from[k]+c)
			}
		}
		stored[id] = n
	}
	return stored
}

// refused reports whether err is the database refusing a statement for
// the values in it (a number out of range, text it cannot hold, a row too
// large), rather than the store failing: then the other records of the
// batch can still be written.
func refused(err error) bool {
	if strings.Contains(err.Error(), "failed to encode args[") {
		// pgx refused a value before sending it (a number out of its
		// column's range); it has no error type for that.
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:2] {
		case "22", "23", "54": // data exception, integrity constraint, program limit exceeded
			return true
		}
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_RANGE:
			return true
		}
	}
	return false
}

// Close writes what is queued, waiting at most timeout (0: as long as it
// takes), and stops the Writer; it says how many records were lost since
// its last message. It does not close the store.
func (w *Writer) Close(timeout time.Duration) error {
	w.mu.Lock()
	if !w.closed.Swap(true) {
		close(w.ch)
		close(w.stop)
	}
	w.mu.Unlock()
	defer func() {
		w.rmu.Lock()
		w.sayPending(time.Now())
		w.rmu.Unlock()
	}()
	if timeout <= 0 {
		<-w.done
		w.waitCheckpoint()
		return nil
	}
	select {
	case <-w.done:
		w.waitCheckpoint()
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("trace store %s: %d records not written after %v", w.s.Name(), len(w.ch), timeout)
	}
}

// waitCheckpoint waits for a checkpoint under way to end.
func (w *Writer) waitCheckpoint() {
	if w.ckpt != nil {
		<-w.ckpt
	}
}

// Counts returns how many records were written, failed to be written, and
// were dropped.
func (w *Writer) Counts() (written, failed, dropped int64) {
	return w.written.Load(), w.failed.Load(), w.dropped.Load()
}
