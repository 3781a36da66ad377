package trace

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/jsonfast"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // and the "pgx" database/sql driver
	_ "modernc.org/sqlite"           // the "sqlite" database/sql driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations are the schema's steps, in order; the schema's version is the
// number of steps applied.
var migrations = loadMigrations()

func loadMigrations() []string {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			panic(err)
		}
		out = append(out, string(b))
	}
	return out
}

// SchemaVersion is the version of the schema this package writes.
func SchemaVersion() int { return len(migrations) }

// ErrNotFound is returned for a run or conversation that is not there.
var ErrNotFound = errors.New("not found")

// ErrNewerSchema is returned by Open for a store made by a newer ptk.
var ErrNewerSchema = errors.New("the store was made by a newer ptk")

// ErrOlderSchema is returned by OpenReadOnly for a store made by an older
// ptk, which only Open brings up to date.
var ErrOlderSchema = errors.New("the store was made by an older ptk")

// ErrReadOnly is the error of a change to a store opened by OpenReadOnly.
var ErrReadOnly = errors.New("the trace store was opened read-only")

// Store is a trace store: SQLite in one file, or PostgreSQL. It is safe for
// concurrent use, and several processes can use one store at once.
type Store struct {
	db   *sql.DB
	pg   bool
	name string // what the user named, for messages (a URL without its password)
	// readOnly is a store opened by OpenReadOnly.
	readOnly bool
	// inserts holds the inserts made so far (by insertKey).
	inserts sync.Map
}

// BusyTimeout is how long a SQLite write waits for another process's.
const BusyTimeout = 10 * time.Second

// DefaultPath is the embedded store's file: $XDG_DATA_HOME/ptk/traces.db,
// or the platform's equivalent (~/.local/share/ptk/traces.db on Linux,
// ~/Library/Application Support/ptk on macOS, %LocalAppData%\ptk on
// Windows).
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "ptk", "traces.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "ptk", "traces.db"), nil
		}
	case "darwin", "ios":
		return filepath.Join(home, "Library", "Application Support", "ptk", "traces.db"), nil
	}
	return filepath.Join(home, ".local", "share", "ptk", "traces.db"), nil
}

// IsPostgres reports whether dsn names a PostgreSQL store.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// DefaultOpenTimeout bounds Open and OpenReadOnly when their context has
// no deadline of its own: a PostgreSQL server that takes connections and
// never answers, or a SQLite file that another process holds locked, costs
// the caller that long, never for ever.
const DefaultOpenTimeout = 10 * time.Second

// Open opens the store dsn names: a postgres:// URL, else a SQLite file
// (made, with its folder, when missing), and brings its schema up to date,
// within ctx's deadline or else DefaultOpenTimeout. An error names the
// store and says what is wrong in one line: not a database, read-only,
// made by a newer ptk (ErrNewerSchema), unreachable, not answering in
// time.
func Open(ctx context.Context, dsn string) (*Store, error) {
	ctx, cancel := openContext(ctx)
	defer cancel()
	s, err := connect(dsn, readWrite)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, s.openError(ctx, err)
	}
	// Runs left running by a process that died are marked so; a store
	// that cannot say so now still opens (the next Open tries again).
	s.Reap(ctx)
	return s, nil
}

// OpenReadOnly opens the store dsn names to read it, as 'ptk traces' and
// the dashboard do: it never makes, migrates or writes the store, so that a
// store on a read-only filesystem (a snapshot, a mounted backup, a
// container's read-only volume) or one the user may only read can be
// looked at. A SQLite file that is missing is an error that wraps
// fs.ErrNotExist. On a filesystem where SQLite cannot make its shared-memory
// file beside the store, the file is read as immutable: what a writer
// adds while it is open may not be seen (on a read-only filesystem there
// is none). On PostgreSQL every transaction is read-only. A store of an
// older schema must be opened once by Open, which brings it up to date.
func OpenReadOnly(ctx context.Context, dsn string) (*Store, error) {
	ctx, cancel := openContext(ctx)
	defer cancel()
	if !IsPostgres(dsn) {
		if _, err := os.Stat(dsn); err != nil {
			return nil, fmt.Errorf("trace store %s: %w", dsn, err)
		}
	}
	s, err := connect(dsn, readOnly)
	if err != nil {
		return nil, err
	}
	v, err := s.Version(ctx)
	if err != nil && !s.pg && strings.Contains(err.Error(), "unable to open") {
		// SQLite cannot make the store's -shm file (the folder or the
		// filesystem is read-only) and there is none: read the file as it
		// is.
		s.db.Close()
		if s, err = connect(dsn, immutable); err != nil {
			return nil, err
		}
		v, err = s.Version(ctx)
	}
	switch {
	case err != nil && strings.Contains(err.Error(), "ptk_schema"):
		err = errors.New("it holds no ptk traces (no ptk_schema table)")
	case err != nil:
	case v > len(migrations):
		err = fmt.Errorf("%w: its schema is version %d, this ptk knows up to %d; upgrade ptk", ErrNewerSchema, v, len(migrations))
	case v < len(migrations):
		err = fmt.Errorf("%w: its schema is version %d, this ptk's is %d, and a store opened read-only is not upgraded: open it once where it can be written (any ptk traces command does)", ErrOlderSchema, v, len(migrations))
	}
	if err != nil {
		s.db.Close()
		if errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrOlderSchema) {
			return nil, fmt.Errorf("trace store %s: %w", s.name, err)
		}
		return nil, s.openError(ctx, err)
	}
	return s, nil
}

// openContext is ctx bounded by DefaultOpenTimeout unless it has a
// deadline already.
func openContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultOpenTimeout)
}

// openError is errorf, and says so when the store did not answer in time.
func (s *Store) openError(ctx context.Context, err error) error {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return fmt.Errorf("trace store %s did not answer in time (%w): check that it is up, or name another with --trace-db", s.name, context.DeadlineExceeded)
	case context.Canceled:
		return fmt.Errorf("trace store %s: %w", s.name, context.Canceled)
	}
	return s.errorf(err)
}

// The ways connect opens a store.
const (
	readWrite = iota
	readOnly
	immutable // read-only, and SQLite reads the file as one nobody changes
)

// connect opens the database without looking at its schema.
func connect(dsn string, mode int) (*Store, error) {
	s := &Store{pg: IsPostgres(dsn), name: dsn, readOnly: mode != readWrite}
	var err error
	if s.pg {
		if u, perr := url.Parse(dsn); perr == nil {
			s.name = u.Redacted()
			if s.readOnly {
				// pgx sends parameters it does not know as the session's
				// settings.
				q := u.Query()
				q.Set("default_transaction_read_only", "on")
				u.RawQuery = q.Encode()
				dsn = u.String()
			}
		}
		s.db, err = sql.Open("pgx", dsn)
	} else {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout("+strconv.Itoa(int(BusyTimeout/time.Millisecond))+")")
		if s.readOnly {
			q.Set("mode", "ro")
			if mode == immutable {
				q.Set("immutable", "1")
			}
		} else {
			// The store holds every prompt, file read and answer: it is
			// its user's alone. SQLite gives its WAL files the database
			// file's mode.
			if dir := filepath.Dir(dsn); dir != "" {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					return nil, fmt.Errorf("trace store %s: %w", dsn, err)
				}
			}
			if f, err := os.OpenFile(dsn, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
				f.Close()
			}
			q.Add("_pragma", "journal_mode(WAL)")
			q.Add("_pragma", "synchronous(NORMAL)")
			// A statement of many rows keeps a journal to undo itself if it
			// fails half-way: in memory, not in a temporary file written
			// for each statement.
			q.Add("_pragma", "temp_store(MEMORY)")
			q.Set("_txlock", "immediate")
		}
		s.db, err = sql.Open("sqlite", "file:"+dsn+"?"+q.Encode())
	}
	if err != nil {
		return nil, s.errorf(err)
	}
	if !s.pg {
		// A few connections: SQLite writes one at a time anyway, and in WAL
		// mode readers do not wait for the writer.
		s.db.SetMaxOpenConns(4)
	}
	return s, nil
}

func isNotADatabase(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "file is not a database") || strings.Contains(msg, "malformed")
}

func (s *Store) errorf(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "file is not a database"), strings.Contains(msg, "malformed"):
		return fmt.Errorf("trace store %s is not a readable SQLite database (%v): move it away or name another with --trace-db", s.name, err)
	case strings.Contains(msg, "readonly"), strings.Contains(msg, "read-only"), strings.Contains(msg, "unable to open"):
		return fmt.Errorf("trace store %s cannot be written (%v): check its permissions or name another with --trace-db", s.name, err)
	}
	return fmt.Errorf("trace store %s: %w", s.name, err)
}

// Name is the store's file or URL (without a password).
func (s *Store) Name() string { return s.name }

// Close closes the store.
func (s *Store) Close() error {
	s.inserts.Range(func(_, v any) bool {
		if st := v.(*insertStmt).st; st != nil {
			st.Close()
		}
		return true
	})
	return s.db.Close()
}

// q rewrites a query's ? placeholders for the store's database.
func (s *Store) q(query string) string {
	if !s.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Version returns the store's schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, "SELECT version FROM ptk_schema").Scan(&v)
	return v, err
}

// migrate applies the migrations the store lacks, in one transaction that
// holds the database's write lock (SQLite's BEGIN IMMEDIATE, a PostgreSQL
// advisory lock), so that processes opening a new store at once apply each
// step once.
func (s *Store) migrate(ctx context.Context) error {
	return s.migrateTo(ctx, len(migrations))
}

func (s *Store) migrateTo(ctx context.Context, target int) error {
	// A store that is up to date, the usual case, is only read: no
	// process waits for another's lock to open it.
	var v int
	if err := s.db.QueryRowContext(ctx, "SELECT version FROM ptk_schema").Scan(&v); err == nil {
		if v > len(migrations) {
			return fmt.Errorf("%w: its schema is version %d, this ptk knows up to %d; upgrade ptk or name another store with --trace-db", ErrNewerSchema, v, len(migrations))
		}
		if v == target {
			return nil
		}
	} else if isNotADatabase(err) {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.pg {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7210516)"); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS ptk_schema (version INTEGER NOT NULL)"); err != nil {
		return err
	}
	switch err := tx.QueryRowContext(ctx, "SELECT version FROM ptk_schema").Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, "INSERT INTO ptk_schema (version) VALUES (0)"); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("%w: its schema is version %d, this ptk knows up to %d; upgrade ptk or name another store with --trace-db", ErrNewerSchema, v, len(migrations))
	}
	if v >= target {
		return nil
	}
	for i := v; i < target; i++ {
		for _, stmt := range splitSQL(migrations[i]) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, s.q("UPDATE ptk_schema SET version = ?"), target); err != nil {
		return err
	}
	return tx.Commit()
}

// splitSQL splits a migration into statements at the semicolons that end
// lines, leaving out comments.
func splitSQL(src string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.SplitSeq(src, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, cur.String())
	}
	return out
}

// Write stores records in one transaction. A record whose id is already
// stored is left as it is.
func (s *Store) Write(ctx context.Context, recs ...*Record) error {
	items := make([]item, len(recs))
	for i, r := range recs {
		items[i] = item{rec: r}
	}
	return s.write(ctx, nil, items)
}

// write stores what a Writer queued in one transaction: whole records, and
// the parts of live runs. conn is the Writer's connection (nil: one of the
// pool's); on PostgreSQL a Writer's transaction commits without waiting
// for the server's disk (see Writer).
func (s *Store) write(ctx context.Context, conn *wconn, items []item) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if conn != nil && !slices.ContainsFunc(items, func(it item) bool { return it.part == whole }) {
		if s.pg {
			return s.pipeline(ctx, conn, items)
		}
		return s.writeDriver(ctx, conn, items)
	}
	var tx *sql.Tx
	var err error
	if conn != nil {
		tx, err = conn.BeginTx(ctx, nil)
	} else {
		tx, err = s.db.BeginTx(ctx, nil)
	}
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if conn != nil && s.pg {
		if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
	}
	// The runs go in one statement per chunk, and so do their calls: a
	// statement per row costs more than the row.
	ins := &inserter{s: s, tx: tx}
	var wholes []*Record
	var parts []item
	for _, it := range items {
		if it.part == whole {
			wholes = append(wholes, it.rec)
		} else {
			parts = append(parts, it)
		}
	}
	fresh, err := s.fresh(ctx, tx, wholes)
	if err != nil {
		return err
	}
	for _, r := range fresh {
		if r.StartedAt.IsZero() {
			r.StartedAt = time.Now()
		}
		if r.Status == "" {
			r.Status = StatusOK
		}
		ntc := r.NumToolCalls
		if len(r.ToolCalls) > 0 {
			ntc = len(r.ToolCalls)
		}
		ins.add("runs", runCols, runValues(r, ntc)...)
	}
	if err := ins.flush(ctx, "runs", ""); err != nil {
		return err
	}
	for _, r := range fresh {
		for i, mc := range r.ModelCalls {
			ins.add("model_calls", modelCallCols, modelCallRow(r.ID, i, mc)...)
		}
		for i, tc := range r.ToolCalls {
			ins.add("tool_calls", toolCallCols, toolCallRow(r.ID, i, tc)...)
		}
		for i, pc := range r.PtoolCalls {
			ins.add("ptool_calls", ptoolCallCols, ptoolCallRow(r.ID, i, pc)...)
		}
		for i, st := range r.Steps {
			ins.add("steps", stepCols, stepRow(r.ID, i, st)...)
		}
	}
	for _, t := range []string{"model_calls", "tool_calls", "ptool_calls", "steps"} {
		if err := ins.flush(ctx, t, ""); err != nil {
			return err
		}
	}
	if len(parts) > 0 {
		if err := s.writeLive(ctx, ins, parts); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// writeLive writes the parts of live runs: their rows, their calls, and
// the finished runs' steps.
func (s *Store) writeLive(ctx context.Context, ins *inserter, parts []item) error {
	if err := s.upsert(ctx, ins, parts); err != nil {
		return err
	}
	// A finished live run's steps (or its steps so far), replacing any
	// written before (the last end or progress of a run in the batch: one
	// statement may not change a row twice).
	last := map[string]*Record{}
	var order []string
	for _, it := range parts {
		if (it.part == ended || it.part == progress) && len(it.rec.Steps) > 0 {
			if last[it.rec.ID] == nil {
				order = append(order, it.rec.ID)
			}
			last[it.rec.ID] = it.rec
		}
	}
	for _, id := range order {
		for i, st := range last[id].Steps {
			ins.add("steps", stepCols, stepRow(id, i, st)...)
		}
	}
	return ins.flush(ctx, "steps", updateAll(" ON CONFLICT (run_id, seq)", stepCols[2:]))
}

// writeDriver writes the parts of live runs to SQLite on the Writer's
// connection through the driver itself, in one transaction, each insert
// prepared once on the connection: database/sql's turning each argument
// into a driver value, and its slice of them made anew for each statement,
// were a tenth of the Writer's CPU time.
func (s *Store) writeDriver(ctx context.Context, conn *wconn, parts []item) error {
	return conn.Raw(func(dc any) error {
		bt, ok1 := dc.(driver.ConnBeginTx)
		pc, ok2 := dc.(driver.ConnPrepareContext)
		if !ok1 || !ok2 {
			return fmt.Errorf("trace store: a SQLite connection of type %T", dc)
		}
		tx, err := bt.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		// The transaction holds the write lock, and the statements run in
		// the process: a context that cannot end spares the driver a
		// goroutine per statement (as inserter.flush).
		run := context.WithoutCancel(ctx)
		queue := func(query string, args []any) error {
			st := conn.stmts[query]
			if st == nil {
				if st, err = pc.PrepareContext(ctx, query); err != nil {
					return err
				}
				if conn.stmts == nil {
					conn.stmts = map[string]driver.Stmt{}
				}
				conn.stmts[query] = st
			}
			ex, ok := st.(driver.StmtExecContext)
			if !ok {
				return fmt.Errorf("trace store: a SQLite statement of type %T", st)
			}
			nv := conn.args[:0]
			for i, a := range args {
				if !driver.IsValue(a) {
					if a, err = driver.DefaultParameterConverter.ConvertValue(a); err != nil {
						return fmt.Errorf("argument %d: %w", i+1, err)
					}
				}
				nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: a})
			}
			_, err := ex.ExecContext(run, nv)
			clear(nv) // the values, for the garbage collector
			conn.args = nv[:0]
			return err
		}
		if err := s.writeLive(ctx, &inserter{s: s, queue: queue}, parts); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// pipeline writes the parts of live runs to PostgreSQL on the Writer's
// connection in one round trip: the transaction's statements are sent
// together (a pgx batch: BEGIN, the inserts, COMMIT) and their results
// read after, where a transaction through database/sql waits for each
// statement's answer in turn — a dozen round trips a batch, each one the
// server's and the Writer's goroutine going idle and waking.
func (s *Store) pipeline(ctx context.Context, conn *wconn, parts []item) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = off")
	queue := func(query string, args []any) error {
		b.Queue(query, args...)
		return nil
	}
	if err := s.writeLive(ctx, &inserter{s: s, queue: queue}, parts); err != nil {
		return err
	}
	b.Queue("COMMIT")
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("trace store: a PostgreSQL connection of type %T", dc)
		}
		pc := c.Conn()
		err := pc.SendBatch(ctx, b).Close()
		if err != nil && pc.PgConn().TxStatus() != 'I' {
			// A statement failed: the server skipped the rest, COMMIT
			// too, and the transaction is still open.
			if _, rerr := pc.Exec(ctx, "ROLLBACK"); rerr != nil {
				pc.Close(ctx) // the pool drops a closed connection
			}
		}
		return err
	})
}

// fresh returns the records whose ids are not stored yet, each id once,
// giving an id to those without one.
func (s *Store) fresh(ctx context.Context, tx *sql.Tx, recs []*Record) ([]*Record, error) {
	seen := make(map[string]bool, len(recs))
	var out []*Record
	ids := make([]any, 0, len(recs))
	for _, r := range recs {
		if r.ID == "" {
			r.ID = NewID()
		}
		if !seen[r.ID] {
			seen[r.ID] = true
			out = append(out, r)
			ids = append(ids, r.ID)
		}
	}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 1000)]
		ids = ids[len(chunk):]
		rows, err := tx.QueryContext(ctx, s.q("SELECT id FROM runs WHERE id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")+")"), s.args(chunk)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := s.scan(rows, &id); err != nil {
				rows.Close()
				return nil, err
			}
			seen[id] = false
		}
		rows.Close()
	}
	return slices.DeleteFunc(out, func(r *Record) bool { return !seen[r.ID] }), nil
}

var (
	runCols = []string{"id", "parent_id", "kind", "name", "model", "mode", "started_us", "duration_us", "status",
		"error_code", "error_message", "prompt_tokens", "completion_tokens", "cost", "iterations", "tool_calls", "input", "output", "detail",
		"provider"}
	modelCallCols = []string{"run_id", "seq", "mode", "prompt_tokens", "completion_tokens", "latency_us", "cost", "request_hash", "text", "calls", "error",
		"started_us", "parent"}
	toolCallCols = []string{"run_id", "seq", "iteration", "call_id", "tool", "args", "result", "truncated", "is_error", "outcome", "repairs", "duration_us",
		"started_us", "parent", "error_code"}
	ptoolCallCols = []string{"run_id", "seq", "ptool", "input", "output", "attempts", "repairs", "source", "fallback", "is_error", "duration_us",
		"prompt_tokens", "completion_tokens", "cost", "started_us", "parent"}
	stepCols = []string{"run_id", "seq", "name", "status", "note", "attrs", "started_us", "duration_us", "parent"}
)

// runValues is a run's row of runCols; ntc is its number of tool calls.
func runValues(r *Record, ntc int) []any {
	return []any{r.ID, r.ParentID, string(r.Kind), r.Name, r.Model, r.Mode, r.StartedAt.UnixMicro(),
		time.Duration(r.Duration).Microseconds(), string(r.Status), r.ErrorCode, r.ErrorMessage, int64(r.Usage.PromptTokens),
		int64(r.Usage.CompletionTokens), r.Cost, int64(r.Iterations), int64(ntc), r.Input, r.Output, string(r.Detail), r.Provider}
}

func stepRow(run string, seq int, st Step) []any {
	attrs := ""
	if len(st.Attrs) > 0 {
		if b, err := json.Marshal(st.Attrs); err == nil {
			attrs = string(b)
		}
	}
	return []any{run, int64(seq), st.Name, st.Status, st.Note, attrs, micros(st.Start), time.Duration(st.Duration).Microseconds(), st.Parent}
}

// micros is t in microseconds since the epoch, 0 for the zero time.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func modelCallRow(run string, seq int, mc ModelCall) []any {
	return []any{run, int64(seq), mc.Mode, int64(mc.Usage.PromptTokens), int64(mc.Usage.CompletionTokens), time.Duration(mc.Latency).Microseconds(), mc.Cost,
		mc.RequestHash, mc.Text, callsText(mc.Calls), mc.Error, micros(mc.Start), mc.Parent}
}

func toolCallRow(run string, seq int, tc ToolCall) []any {
	return []any{run, int64(seq), int64(tc.Iteration), tc.CallID, tc.Tool, string(tc.Args), tc.Result, b2i(tc.Truncated), b2i(tc.IsError), tc.Outcome,
		stringsText(tc.Repairs), time.Duration(tc.Duration).Microseconds(), micros(tc.Start), tc.Parent, tc.ErrorCode}
}

func ptoolCallRow(run string, seq int, pc PtoolCall) []any {
	return []any{run, int64(seq), pc.Ptool, string(pc.Input), string(pc.Output), jsonText(pc.Attempts), stringsText(pc.Repairs), pc.Source,
		b2i(pc.Fallback), b2i(pc.IsError), time.Duration(pc.Duration).Microseconds(), int64(pc.Usage.PromptTokens), int64(pc.Usage.CompletionTokens),
		pc.Cost, micros(pc.Start), pc.Parent}
}

// inserter gathers rows by table and inserts them with one statement per
// chunk of rows.
type inserter struct {
	s  *Store
	tx *sql.Tx
	// queue, when tx is nil, runs (or queues) an insert instead: its args
	// are the caller's until it returns.
	queue    func(query string, args []any) error
	cols     map[string][]string
	rows     map[string][][]any
	affected int64
}

// The most rows one insert takes: a statement's own cost (the driver's,
// database/sql's, SQLite's start and end of a statement, PostgreSQL's round
// trip) is shared by its rows. Rows are inserted in statements of this
// many, then of halves of it for the rest, so that a store runs a few
// statements again and again (each prepared once per connection), never
// one made anew for each number of rows. Both keep a statement well under
// SQLite's 32,766 variables and PostgreSQL's 65,535.
const (
	sqliteRows = 32
	pgRows     = 128
)

func (in *inserter) add(table string, cols []string, vals ...any) {
	if in.rows == nil {
		in.cols, in.rows = map[string][]string{}, map[string][][]any{}
	}
	in.cols[table] = cols
	in.rows[table] = append(in.rows[table], vals)
}

func (in *inserter) flush(ctx context.Context, table, suffix string) error {
	rows, cols := in.rows[table], in.cols[table]
	delete(in.rows, table)
	most, run := pgRows, ctx
	if !in.s.pg {
		// The transaction holds SQLite's write lock (BEGIN IMMEDIATE) and
		// its context bounds it; a statement runs in the process without
		// waiting for a lock, and a context that cannot end spares the
		// driver a goroutine per statement that would watch it.
		most, run = sqliteRows, context.WithoutCancel(ctx)
	}
	var args []any
	for n := most; len(rows) > 0; n /= 2 {
		if len(rows) < n {
			continue
		}
		ins, err := in.s.insert(ctx, table, cols, suffix, n)
		if err != nil {
			return err
		}
		st := ins.st
		if st != nil && in.tx != nil {
			st = in.tx.StmtContext(ctx, st)
		}
		for len(rows) >= n {
			args = args[:0]
			for _, r := range rows[:n] {
				args = append(args, r...)
			}
			rows = rows[n:]
			if in.queue != nil {
				if err := in.queue(ins.query, in.s.args(args)); err != nil {
					return err
				}
				continue
			}
			var res sql.Result
			if st != nil {
				res, err = st.ExecContext(run, args...)
			} else {
				// pgx prepares a statement it has not seen on the
				// connection, and keeps it.
				res, err = in.tx.ExecContext(run, ins.query, in.s.args(args)...)
			}
			if err != nil {
				return err
			}
			if k, err := res.RowsAffected(); err == nil {
				in.affected += k
			}
		}
	}
	return nil
}

// insertKey names an insert: the table and columns, the clause after its
// values, and how many rows it inserts.
type insertKey struct {
	table, cols, suffix string
	rows                int
}

// insertStmt is an insert's text for the store's database and, on SQLite,
// the statement prepared from it.
type insertStmt struct {
	query string
	st    *sql.Stmt
}

// insert returns the insert of rows rows into table, made once per store.
func (s *Store) insert(ctx context.Context, table string, cols []string, suffix string, rows int) (*insertStmt, error) {
	k := insertKey{table, strings.Join(cols, ", "), suffix, rows}
	if v, ok := s.inserts.Load(k); ok {
		return v.(*insertStmt), nil
	}
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + k.cols + ") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	b.WriteString(suffix)
	ins := &insertStmt{query: s.q(b.String())}
	if !s.pg {
		st, err := s.db.PrepareContext(ctx, ins.query)
		if err != nil {
			return nil, err
		}
		ins.st = st
	}
	if v, loaded := s.inserts.LoadOrStore(k, ins); loaded {
		if ins.st != nil {
			ins.st.Close()
		}
		return v.(*insertStmt), nil
	}
	return ins, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// callsText is jsonText(calls), written in one pass: the calls' arguments,
// JSON already, are checked and copied, not decoded and encoded again.
func callsText(calls []ptk.Call) string {
	if len(calls) == 0 {
		return ""
	}
	b := make([]byte, 0, 64*len(calls))
	b = append(b, '[')
	for i, c := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = jsonfast.AppendString(b, c.ID, true)
		b = append(b, `,"tool":`...)
		b = jsonfast.AppendString(b, c.Tool, true)
		b = append(b, `,"args":`...)
		if c.Args == nil {
			b = append(b, "null"...)
		} else {
			var ok bool
			if b, ok = jsonfast.AppendCompact(b, c.Args, true); !ok {
				return "" // as encoding/json, which fails on it
			}
		}
		if c.Reasoning != "" {
			b = append(b, `,"reasoning":`...)
			b = jsonfast.AppendString(b, c.Reasoning, true)
		}
		if len(c.Repairs) > 0 {
			b = append(b, `,"repairs":`...)
			b = appendStrings(b, c.Repairs)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	return string(b)
}

// stringsText is jsonText(s), in one pass.
func stringsText(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return string(appendStrings(nil, s))
}

func appendStrings(b []byte, s []string) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonfast.AppendString(b, v, true)
	}
	return append(b, ']')
}

// jsonText is v as JSON, or "" for an empty slice.
func jsonText[T any](v []T) string {
	if len(v) == 0 {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
