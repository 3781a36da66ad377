package checkpoint

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
)

// A Guard takes a checkpoint before a turn changes the workspace: Begin
// starts a turn, and the first call in it to a tool that is not read-only
// (a file edit, a bash command, an MCP tool that may change something)
// saves the checkpoint before it runs; the calls after it in the turn run
// at once. A turn whose calls are all read-only takes none. Wrap gives
// the tools that do this.
type Guard struct {
	s      *Store
	onSave func(Checkpoint, error)

	mu     sync.Mutex
	active bool
	meta   Meta
	saved  *Checkpoint
	err    error
}

// Guard returns a guard over s. onSave, when not nil, is told of each
// checkpoint the guard takes, or of the error that kept it from taking one
// (the call then runs all the same: a checkpoint is a way back, not a
// condition to work).
func (s *Store) Guard(onSave func(Checkpoint, error)) *Guard {
	return &Guard{s: s, onSave: onSave}
}

// Begin starts a turn: m is what its checkpoint will say.
func (g *Guard) Begin(m Meta) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active, g.meta, g.saved, g.err = true, m, nil, nil
}

// End ends the turn and returns its checkpoint, if it took one, or the
// error that kept it from taking one.
func (g *Guard) End() (*Checkpoint, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active = false
	return g.saved, g.err
}

// before takes the turn's checkpoint, once.
func (g *Guard) before(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.active || g.saved != nil || g.err != nil {
		return
	}
	c, err := g.s.Save(ctx, g.meta)
	if err != nil {
		g.err = err
	} else {
		g.saved = &c
	}
	if g.onSave != nil {
		g.onSave(c, err)
	}
}

// Wrap returns tools with the ones that are not read-only wrapped, so that
// their first call in a turn takes the checkpoint.
func (g *Guard) Wrap(tools []ptk.Tool) []ptk.Tool {
	out := make([]ptk.Tool, len(tools))
	for i, t := range tools {
		if t.Info().ReadOnly {
			out[i] = t
		} else {
			out[i] = guarded{t, g}
		}
	}
	return out
}

// guarded is a tool whose first call in a turn takes the checkpoint.
type guarded struct {
	t ptk.Tool
	g *Guard
}

var (
	_ ptk.Tool       = guarded{}
	_ tool.Unwrapper = guarded{}
)

func (t guarded) Info() ptk.ToolInfo { return t.t.Info() }
func (t guarded) Unwrap() ptk.Tool   { return t.t }

func (t guarded) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	if ctx.Err() == nil {
		t.g.before(ctx)
	}
	return t.t.Run(ctx, args)
}
