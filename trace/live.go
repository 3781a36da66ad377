package trace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// A run is seen as it happens: Writer.Begin writes its row with status
// running, Writer.Append its calls as they finish, Writer.Finish the whole
// record when it ends. While a run is running its writer refreshes the
// row's heartbeat; a run whose writer stopped (its process was killed)
// is marked StatusInterrupted by the next Open, and shown so by List as
// soon as its heartbeat is older than StaleAfter.

// HeartbeatEvery is how often a Writer with running runs says it lives.
const HeartbeatEvery = 5 * time.Second

// StaleAfter is how old a running run's heartbeat may be before the run is
// taken for interrupted.
const StaleAfter = 30 * time.Second

// part says how Write writes a record.
type part uint8

const (
	whole    part = iota // a finished run, written when its id is new
	begun                // the run's row, status running
	calls                // some of its calls, from the seqs in from
	ended                // the run's row and its calls from the seqs in from (those not stored yet)
	progress             // as ended, and its steps, but the run goes on: its row stays running
)

// item is a record as a Writer queues it, with how to write it.
type item struct {
	rec   *Record
	build func() *Record // makes rec on the Writer's goroutine, when rec is nil
	part  part
	owner string // the writer's, on a begun run's row while it runs
	from  [3]int // the first seq of model, tool and ptool calls to write
}

// built is it with its record made.
func (it item) built() item {
	if it.build != nil {
		it.rec, it.build = it.build(), nil
	}
	return it
}

// newOwner names a writer: host, process id and a random token.
func newOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return strings.ReplaceAll(host, "/", "_") + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// ownerProcess is the host and process id an owner names.
func ownerProcess(owner string) (host string, pid int, ok bool) {
	f := strings.Split(owner, "/")
	if len(f) != 3 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(f[1])
	return f[0], pid, err == nil && pid > 0
}

// upsert writes the live parts of a batch: the runs' rows and their calls,
// each replacing what an earlier part of the same run wrote (a part of a
// batch replaces an earlier one of the same run and seq: one statement may
// not change a row twice).
func (s *Store) upsert(ctx context.Context, ins *inserter, items []item) error {
	type key struct {
		run string
		seq int
	}
	runRow := map[string]int{}
	var runRows [][]any
	callRows := [3]map[key]int{{}, {}, {}}
	var rows [3][][]any
	put := func(t int, k key, vals []any) {
		if i, ok := callRows[t][k]; ok {
			rows[t][i] = vals
			return
		}
		callRows[t][k] = len(rows[t])
		rows[t] = append(rows[t], vals)
	}
	now := time.Now().UnixMicro()
	for _, it := range items {
		r := it.rec
		if it.part != calls {
			if r.StartedAt.IsZero() {
				r.StartedAt = time.Now()
			}
			owner, hb := "", int64(0)
			if it.part == begun || it.part == progress {
				r.Status, owner, hb = StatusRunning, it.owner, now
			} else if r.Status == "" || r.Status == StatusRunning {
				r.Status = StatusOK
			}
			ntc := r.NumToolCalls
			if len(r.ToolCalls) > 0 {
				ntc = len(r.ToolCalls)
			}
			vals := append(runValues(r, ntc), owner, hb)
			if i, ok := runRow[r.ID]; ok {
				runRows[i] = vals
			} else {
				runRow[r.ID] = len(runRows)
				runRows = append(runRows, vals)
			}
		}
		if it.part == begun {
			continue
		}
		// A calls part holds its calls from seq from on; a finished
		// record (or one so far) holds all, and writes those from seq from
		// on.
		var skip [3]int
		if it.part == ended || it.part == progress {
			skip = it.from
		}
		for i, mc := range r.ModelCalls[min(skip[0], len(r.ModelCalls)):] {
			seq := it.from[0] + i
			put(0, key{r.ID, seq}, modelCallRow(r.ID, seq, mc))
		}
		for i, tc := range r.ToolCalls[min(skip[1], len(r.ToolCalls)):] {
			seq := it.from[1] + i
			put(1, key{r.ID, seq}, toolCallRow(r.ID, seq, tc))
		}
		for i, pc := range r.PtoolCalls[min(skip[2], len(r.PtoolCalls)):] {
			seq := it.from[2] + i
			put(2, key{r.ID, seq}, ptoolCallRow(r.ID, seq, pc))
		}
	}
	cols := append(runCols[:len(runCols):len(runCols)], "owner", "heartbeat_us")
	for _, v := range runRows {
		ins.add("runs", cols, v...)
	}
	if err := ins.flush(ctx, "runs", updateAll(" ON CONFLICT (id)", cols[1:])); err != nil {
		return err
	}
	for t, table := range []string{"model_calls", "tool_calls", "ptool_calls"} {
		c := [][]string{modelCallCols, toolCallCols, ptoolCallCols}[t]
		for _, v := range rows[t] {
			ins.add(table, c, v...)
		}
		if err := ins.flush(ctx, table, updateAll(" ON CONFLICT (run_id, seq)", c[2:])); err != nil {
			return err
		}
	}
	return nil
}

// updateAll is an ON CONFLICT clause that sets cols to the new row's.
func updateAll(conflict string, cols []string) string {
	var b strings.Builder
	b.WriteString(conflict + " DO UPDATE SET ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c + " = excluded." + c)
	}
	return b.String()
}

// heartbeat says that owner's running runs go on.
func (s *Store) heartbeat(ctx context.Context, owner string) error {
	_, err := s.db.ExecContext(ctx, s.q("UPDATE runs SET heartbeat_us = ? WHERE status = 'running' AND owner = ?"),
		s.args([]any{time.Now().UnixMicro(), owner})...)
	return err
}

// Reap marks StatusInterrupted the running runs whose writer is gone: its
// process on this host has ended, or its heartbeat is older than
// StaleAfter. Open calls it; it returns how many runs it marked.
func (s *Store) Reap(ctx context.Context) (int, error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	rows, err := s.db.QueryContext(ctx, "SELECT owner, MAX(heartbeat_us) FROM runs WHERE status = 'running' GROUP BY owner")
	if err != nil {
		return 0, err
	}
	type owner struct {
		name string
		why  string
	}
	var gone []owner
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, "/", "_")
	stale := time.Now().Add(-StaleAfter).UnixMicro()
	for rows.Next() {
		var o string
		var hb int64
		if err := s.scan(rows, &o, &hb); err != nil {
			rows.Close()
			return 0, err
		}
		h, pid, ok := ownerProcess(o)
		switch {
		case ok && h == host && !processAlive(pid):
			gone = append(gone, owner{o, fmt.Sprintf("the process that ran it (%d) ended before the run did", pid)})
		case hb < stale:
			gone = append(gone, owner{o, fmt.Sprintf("the process that ran it stopped answering (last seen %s)", time.UnixMicro(hb).UTC().Format(time.RFC3339))})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, o := range gone {
		res, err := s.db.ExecContext(ctx, s.q(`UPDATE runs SET status = 'interrupted', error_code = 'interrupted', error_message = ?,
			duration_us = CASE WHEN heartbeat_us > started_us THEN heartbeat_us - started_us ELSE duration_us END, owner = ''
			WHERE status = 'running' AND owner = ?`), s.args([]any{o.why, o.name})...)
		if err != nil {
			return n, err
		}
		if k, err := res.RowsAffected(); err == nil {
			n += int(k)
		}
	}
	return n, nil
}
