package temporal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, as the trace store uses it
	_ "modernc.org/sqlite"             // the SQLite driver, as the trace store uses it

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/trace"
)

// Ledger keeps the calls of tools that are not read-only, by the run's and
// the call's ids, so that each runs at most once however often Temporal
// retries its activity: an entry is made before the tool runs, and its
// result is added when it has run. It lives in the trace store's database
// (a table of its own, ptk_tool_effects): PostgreSQL when workers run on
// several machines, SQLite for workers of one machine.
type Ledger struct {
	db        *sql.DB
	name, dsn string
}

// Entry is what the ledger holds of a call.
type Entry struct {
	Tool     string
	Done     bool
	Worker   string
	Started  time.Time
	Finished time.Time
	Result   ptk.Result
	Err      string
}

// answer is the answer a retried call is given: the result the first run
// had, or, when it never finished, an error that says so.
func (e *Entry) answer(c ptk.Call) ptk.Result {
	if e.Done {
		r := e.Result
		if e.Err != "" {
			r = ptk.Result{Content: "tool " + c.Tool + " failed: " + e.Err, IsError: true}
		}
		r.CallID, r.Tool = c.ID, c.Tool
		return r
	}
	return ptk.Result{CallID: c.ID, Tool: c.Tool, IsError: true, Content: fmt.Sprintf(
		"Not run again: this call started at %s on worker %s, which stopped before the call ended, so it may or may not have taken effect. "+
			"ptk runs a tool that changes something at most once per call. Look at what it should have changed before you call it again.",
		e.Started.UTC().Format(time.RFC3339), e.Worker)}
}

// OpenLedger opens the ledger in the database dsn names, as trace.Open
// does (a postgres:// URL, else a SQLite file), and makes its table when it
// is missing.
func OpenLedger(ctx context.Context, dsn string) (*Ledger, error) {
	l := &Ledger{name: dsn, dsn: dsn}
	var err error
	if trace.IsPostgres(dsn) {
		if u, perr := url.Parse(dsn); perr == nil {
			l.name = u.Redacted()
		}
		l.db, err = sql.Open("pgx", dsn)
	} else {
		l.db, err = sql.Open("sqlite", "file:"+dsn+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate")
		if err == nil {
			l.db.SetMaxOpenConns(1)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.name, err)
	}
	err = l.create(ctx)
	if err != nil {
		l.db.Close()
		return nil, fmt.Errorf("ledger %s: %w", l.name, err)
	}
	return l, nil
}

const createLedger = `CREATE TABLE IF NOT EXISTS ptk_tool_effects (
	key TEXT PRIMARY KEY,
	tool TEXT NOT NULL,
	worker TEXT NOT NULL,
	started_us BIGINT NOT NULL,
	done INTEGER NOT NULL DEFAULT 0,
	finished_us BIGINT NOT NULL DEFAULT 0,
	result TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT ''
)`

// create makes the ledger's table when it is missing. On PostgreSQL it
// does so under an advisory lock: two workers that start at once on a new
// database would otherwise both create it, and one would fail (CREATE
// TABLE IF NOT EXISTS is not safe against itself there).
func (l *Ledger) create(ctx context.Context) error {
	if !trace.IsPostgres(l.dsn) {
		_, err := l.db.ExecContext(ctx, createLedger)
		return err
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7210517)"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, createLedger); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the ledger's database.
func (l *Ledger) Close() error { return l.db.Close() }

// Begin enters the call key before its tool runs. It returns nil when the
// entry is new (the tool may run), and the entry there is when the call
// was begun before (the tool must not run again).
func (l *Ledger) Begin(ctx context.Context, key, tool, worker string) (*Entry, error) {
	res, err := l.db.ExecContext(ctx, `INSERT INTO ptk_tool_effects (key, tool, worker, started_us) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING`,
		key, tool, worker, time.Now().UnixMicro())
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 1 {
		return nil, nil
	}
	e, err := l.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, errors.New("the entry of " + key + " went away")
	}
	return e, nil
}

// Finish adds the result of the call key (its tool's error, when it
// returned one).
func (l *Ledger) Finish(ctx context.Context, key string, res ptk.Result, toolErr string) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = l.db.ExecContext(ctx, `UPDATE ptk_tool_effects SET done = 1, finished_us = $2, result = $3, error = $4 WHERE key = $1`,
		key, time.Now().UnixMicro(), strings.ToValidUTF8(string(b), "\uFFFD"), strings.ReplaceAll(toolErr, "\x00", ""))
	return err
}

// Forget removes the entry of a call that did not take effect (its tool
// failed in a way worth trying again), so that a retry may run it.
func (l *Ledger) Forget(ctx context.Context, key string) error {
	_, err := l.db.ExecContext(ctx, `DELETE FROM ptk_tool_effects WHERE key = $1`, key)
	return err
}

// Get returns the entry of the call key; nil when there is none.
func (l *Ledger) Get(ctx context.Context, key string) (*Entry, error) {
	var e Entry
	var started, finished int64
	var done int
	var result string
	err := l.db.QueryRowContext(ctx, `SELECT tool, worker, started_us, done, finished_us, result, error FROM ptk_tool_effects WHERE key = $1`, key).
		Scan(&e.Tool, &e.Worker, &started, &done, &finished, &result, &e.Err)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	e.Started, e.Done = time.UnixMicro(started), done == 1
	if e.Done {
		e.Finished = time.UnixMicro(finished)
		if err := json.Unmarshal([]byte(result), &e.Result); err != nil {
			return nil, fmt.Errorf("the entry of %s: %w", key, err)
		}
	}
	return &e, nil
}

// Count returns how many entries there are with keys that start with
// prefix (a run's workflow id), for tests and status.
func (l *Ledger) Count(ctx context.Context, prefix string) (int, error) {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM ptk_tool_effects WHERE substr(key, 1, $2) = $1`, prefix, utf8.RuneCountInString(prefix)).Scan(&n)
	return n, err
}
