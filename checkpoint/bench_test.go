package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSave is a checkpoint of a workspace of 2,000 files with one
// changed; DropGitlinks is the step that takes nested repositories out
// of the shadow index before it (TestNestedRepositoryConfigNeverRuns), so
// that its share of a save can be read as a ratio from one run.
func BenchmarkSave(b *testing.B) {
	ws := b.TempDir()
	fs := map[string]string{}
	for i := range 2000 {
		fs[fmt.Sprintf("pkg%02d/file%04d.go", i%40, i)] = fmt.Sprintf("package pkg\n\n// %d\n", i)
	}
	files(b, ws, fs)
	s := open(b, ws)
	ctx := context.Background()
	if _, err := s.Save(ctx, Meta{}); err != nil {
		b.Fatal(err)
	}
	b.Run("Save", func(b *testing.B) {
		for i := range b.N {
			os.WriteFile(filepath.Join(ws, "pkg00", "file0000.go"), fmt.Appendf(nil, "package pkg // %d\n", i), 0o644)
			if _, err := s.Save(ctx, Meta{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DropGitlinks", func(b *testing.B) {
		for range b.N {
			if err := s.dropGitlinks(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
