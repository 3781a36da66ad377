package acp

import (
	"context"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
)

// diff is an edit of a file: its text before and after.
type diff struct {
	path     string // absolute
	old, new string
	existed  bool
}

func (d diff) content() sdk.ToolCallContent {
	if !d.existed {
		return sdk.ToolDiffContent(d.path, d.new)
	}
	return sdk.ToolDiffContent(d.path, d.new, d.old)
}

// differ wraps write_file and edit_file: it keeps the text of the file
// before and after each call that changes it, for the call's result.
type differ struct {
	ptk.Tool
	s *session
}

var _ tool.Unwrapper = differ{}

func (d differ) Unwrap() ptk.Tool { return d.Tool }

// recordDiff is the middleware that keeps the edits' diffs.
func (s *session) recordDiff(t ptk.Tool) ptk.Tool { return differ{Tool: t, s: s} }

func (d differ) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	var a struct {
		Path string `json:"path"`
	}
	json.Unmarshal(args, &a)
	call := ptk.Call{Tool: d.Info().Name, Args: args}
	locs := d.s.locations(call)
	before, err := d.s.ws.Text(ctx, a.Path)
	existed := err == nil
	res, err := d.Tool.Run(ctx, args)
	if err != nil || res.IsError || len(locs) == 0 {
		return res, err
	}
	after, aerr := d.s.ws.Text(ctx, a.Path)
	if aerr != nil {
		return res, err
	}
	key := diffKey(call)
	d.s.mu.Lock()
	d.s.diffs[key] = append(d.s.diffs[key], diff{path: locs[0].Path, old: before, new: after, existed: existed})
	d.s.mu.Unlock()
	return res, err
}

func diffKey(c ptk.Call) string { return c.Tool + "\x00" + string(c.Args) }

// takeDiff returns the diff a call's run kept, if it kept one.
func (s *session) takeDiff(c ptk.Call) (diff, bool) {
	key := diffKey(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.diffs[key]
	if len(q) == 0 {
		return diff{}, false
	}
	d := q[0]
	if len(q) == 1 {
		delete(s.diffs, key)
	} else {
		s.diffs[key] = q[1:]
	}
	return d, true
}
