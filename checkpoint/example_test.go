package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptkit/ptk/checkpoint"
)

// A checkpoint before a change, and the change undone.
func Example() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "workspace")
	state, _ := os.MkdirTemp("", "checkpoints")
	defer os.RemoveAll(ws)
	defer os.RemoveAll(state)
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("# notes\n"), 0o644)

	s, err := checkpoint.Open(ctx, ws, state)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := s.Save(ctx, checkpoint.Meta{Prompt: "tidy the notes"})

	// the turn: one file changed, one made
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("# Notes\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "todo.md"), []byte("- tests\n"), 0o644)

	r, err := s.Restore(ctx, c, checkpoint.Meta{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ch := range r.Changes {
		fmt.Println(ch.Action, ch.Path)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "notes.md"))
	fmt.Printf("notes.md: %q\n", b)
	// Output:
	// restored notes.md
	// removed todo.md
	// notes.md: "# notes\n"
}
