package trace

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The store suite runs on SQLite and on PostgreSQL. PostgreSQL is the
// server at $PTK_TEST_POSTGRES, else at defaultPG (what .ci/run sets up:
// Debian's postgresql, a role ptk with password ptk and a database
// ptk_test). Without a server the PostgreSQL half skips, except under CI,
// where it fails.
const defaultPG = "postgres://ptk:ptk@127.0.0.1:5432/ptk_test?sslmode=disable"

var (
	pgOnce sync.Once
	pgErr  error
)

func pgURL() string {
	if u := os.Getenv("PTK_TEST_POSTGRES"); u != "" {
		return u
	}
	return defaultPG
}

// newPG returns the URL of a fresh, empty schema on the test server, which
// the test's cleanup drops.
func newPG(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() {
		db, err := sql.Open("pgx", pgURL())
		if err != nil {
			pgErr = err
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		pgErr = db.PingContext(ctx)
	})
	if pgErr != nil {
		msg := "no PostgreSQL server at " + pgURL() + " (" + pgErr.Error() + "): set PTK_TEST_POSTGRES, or start one as .ci/run does"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	db, err := sql.Open("pgx", pgURL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	return pgURL() + "&search_path=" + schema
}

// backends runs f on a fresh SQLite file and a fresh PostgreSQL schema.
func backends(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, filepath.Join(t.TempDir(), "data", "traces.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, newPG(t))
	})
}

func open(t testing.TB, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
