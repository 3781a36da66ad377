package ptkdirs

import (
	"path/filepath"
	"slices"
	"testing"
)

// The folders follow the XDG variables, so that a project that sets them
// inside itself has them protected there.
func TestFolders(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "cfg"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	got := Folders()
	for _, want := range []string{filepath.Join(dir, "cfg", "ptk"), filepath.Join(dir, "state", "ptk"), filepath.Join(dir, "data", "ptk")} {
		if !slices.Contains(got, want) {
			t.Errorf("Folders() = %v, want %s among them", got, want)
		}
	}
}
