package trace

import (
	"database/sql"

	"github.com/ptkit/ptk/internal/pgtext"
)

// PostgreSQL's text holds neither NUL bytes nor invalid UTF-8, and a run
// may record both: a tool that read a binary file, a model that wrote a
// NUL, a prompt cut in the middle of a character. One such value used to
// fail the statement, and with it every run of the batch. On PostgreSQL
// the store therefore writes every text value through pgtext.Escape and
// reads it back through pgtext.Unescape; text without NUL bytes, invalid
// UTF-8 or the escape's own character, nearly all text, is written as it
// is. SQLite holds any bytes and needs none of this.

// args returns a statement's arguments as the store's database holds
// them: on PostgreSQL, text escaped by pgtext.Escape.
func (s *Store) args(args []any) []any {
	if !s.pg {
		return args
	}
	out := make([]any, len(args))
	for i, a := range args {
		if t, ok := a.(string); ok {
			a = pgtext.Escape(t)
		}
		out[i] = a
	}
	return out
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scan scans a row into dest and, on PostgreSQL, reads back the text of
// the *string destinations that pgtext.Escape escaped.
func (s *Store) scan(sc scanner, dest ...any) error {
	if err := sc.Scan(dest...); err != nil {
		return err
	}
	if s.pg {
		for _, d := range dest {
			if p, ok := d.(*string); ok {
				*p = pgtext.Unescape(*p)
			}
		}
	}
	return nil
}

var (
	_ scanner = (*sql.Row)(nil)
	_ scanner = (*sql.Rows)(nil)
)
