package trace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptkit/ptk"
)

// The attack: another user of the machine reads the trace store, which
// holds every prompt, every file a tool read and every answer. A store ptk
// makes is its user's alone: the folder it makes 0700, the database and
// its WAL files 0600, whatever the umask.
func TestNewStoreIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "share", "ptk")
	dsn := filepath.Join(dir, "traces.db")
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(context.Background(), "c1", []ptk.Message{{Role: ptk.RoleUser, Content: "a secret prompt"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Dir(dir), dsn, dsn + "-wal", dsn + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			if p != dsn {
				continue // the WAL files come and go
			}
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s is %v: other users can read the traces", p, perm)
		}
	}
}
