package checkpoint

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
)

// realTools are the built-in tools over ws, by name, guarded by g.
func realTools(t *testing.T, ws string, g *Guard) map[string]ptk.Tool {
	t.Helper()
	w, err := fs.New(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	sh, err := shell.New(ws)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ptk.Tool{}
	for _, tl := range g.Wrap(append(append(w.Tools(), w.EditTools()...), sh.Tool())) {
		byName[tl.Info().Name] = tl
	}
	return byName
}

func call(t *testing.T, tl ptk.Tool, args string) ptk.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), json.RawMessage(args))
	if err != nil || res.IsError {
		t.Fatalf("%s %s: %v %s", tl.Info().Name, args, err, res.Content)
	}
	return res
}

// A turn of read-only calls takes no checkpoint; a turn that edits and
// runs bash takes one, before its first change, and restoring it undoes
// what bash did as well as the edit.
func TestGuard(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	s := open(t, ws)
	var told []Checkpoint
	g := s.Guard(func(c Checkpoint, err error) {
		if err != nil {
			t.Errorf("onSave: %v", err)
		}
		told = append(told, c)
	})
	tools := realTools(t, ws, g)
	if _, ok := tools["read_file"].(guarded); ok {
		t.Error("a read-only tool is guarded")
	}
	if s, ok := tool.As[tool.Subjecter](tools["bash"]); !ok || s.Subject(json.RawMessage(`{"command":"ls"}`)).Command != "ls" {
		t.Error("the guard hides the tool's subject")
	}

	g.Begin(Meta{Prompt: "look"})
	call(t, tools["read_file"], `{"path":"main.go"}`)
	if c, err := g.End(); c != nil || err != nil {
		t.Errorf("a read-only turn took a checkpoint: %v, %v", c, err)
	}

	g.Begin(Meta{Conversation: "c", Messages: 2, Prompt: "change things"})
	call(t, tools["edit_file"], `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { run() }"}`)
	call(t, tools["bash"], `{"command":"echo made > made.txt && rm gone.txt && mkdir -p out && echo x > out/x.txt"}`)
	c, err := g.End()
	if err != nil || c == nil || len(told) != 1 || c.ID != told[0].ID || c.Messages != 2 {
		t.Fatalf("the turn's checkpoint: %+v, %v (told %d)", c, err, len(told))
	}
	if _, err := s.Restore(ctx, *c, Meta{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"main.go":   "package main\n\nfunc main() {}\n",
		"gone.txt":  "removed later\n",
		"made.txt":  "<none>",
		"out/x.txt": "<none>",
	} {
		if got := read(ws, name); got != want {
			t.Errorf("after the restore, %s = %q, want %q", name, got, want)
		}
	}

	// Outside a turn nothing is taken.
	call(t, tools["write_file"], `{"path":"free.txt","content":"x\n"}`)
	if cps, _ := s.List(ctx); len(cps) != 2 { // the turn's and the restore's
		t.Errorf("%d checkpoints", len(cps))
	}
}

// Calls that run at once in one turn take one checkpoint, and none of
// them changes a file before it is taken.
func TestGuardParallel(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	s := open(t, ws)
	g := s.Guard(nil)
	tools := realTools(t, ws, g)
	g.Begin(Meta{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			call(t, tools["write_file"], `{"path":"p`+string(rune('0'+i))+`.txt","content":"x\n"}`)
		})
	}
	wg.Wait()
	c, err := g.End()
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	if cps, _ := s.List(ctx); len(cps) != 1 {
		t.Errorf("%d checkpoints for one turn", len(cps))
	}
	changes, _ := s.Changes(ctx, *c)
	if len(changes) != 4 {
		t.Errorf("the checkpoint was taken after a write: %v", changes)
	}
}
