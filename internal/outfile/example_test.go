package outfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptkit/ptk/internal/outfile"
)

// A report written where a model planted a link replaces the link; the
// link's target keeps its content.
func Example() {
	dir, _ := os.MkdirTemp("", "outfile")
	defer os.RemoveAll(dir)
	target := filepath.Join(dir, "bashrc")
	os.WriteFile(target, []byte("export PATH=...\n"), 0o644)
	report := filepath.Join(dir, "report.json")
	os.Symlink(target, report)

	if err := outfile.WriteFile(report, []byte(`{"ok": true}`+"\n"), 0o644); err != nil {
		fmt.Println(err)
	}
	b, _ := os.ReadFile(target)
	fmt.Printf("target: %s", b)
	b, _ = os.ReadFile(report)
	fmt.Printf("report: %s", b)
	// Output:
	// target: export PATH=...
	// report: {"ok": true}
}
