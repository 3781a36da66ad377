package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
)

var _ tool.Approver = (*session)(nil)

// The options of a permission request.
const (
	optionOnce   = "allow_once"
	optionAlways = "allow_always"
	optionReject = "reject_once"
)

// Approve decides whether a call that may change something runs, as ptk
// run does: the user's policy first (the last matching rule), then the
// session's mode, then the tools the user allowed always in the session,
// then the user, asked through session/request_permission.
func (s *session) Approve(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (tool.Verdict, error) {
	t := s.byName[call.Tool]
	action, rule := s.a.cfg.Policy.Decide(t, call)
	switch action {
	case tool.Allow:
		return tool.Verdict{Allow: true}, nil
	case tool.Deny:
		return tool.Verdict{Reason: fmt.Sprintf("the user's policy (%s, rule %d) does not allow this call; do not try to get around it", s.a.cfg.PolicyFile, rule)}, nil
	}
	s.mu.Lock()
	preset, always := s.preset, s.always[call.Tool]
	s.mu.Unlock()
	if action != tool.Ask { // an "ask" rule asks whatever the mode
		switch preset.Decide(tool.SubjectOf(t, call.Args)) {
		case tool.Allow:
			return tool.Verdict{Allow: true}, nil
		case tool.Deny:
			return tool.Verdict{Reason: preset.DenyReason()}, nil
		}
		if always {
			return tool.Verdict{Allow: true}, nil
		}
	}
	return s.ask(ctx, call)
}

// ask asks the user about a call through the editor.
func (s *session) ask(ctx context.Context, call ptk.Call) (tool.Verdict, error) {
	req := sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(s.id),
		Options: []sdk.PermissionOption{
			{OptionId: optionOnce, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optionAlways, Name: "Always allow " + call.Tool, Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: optionReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
		ToolCall: s.permissionCall(ctx, call),
	}
	resp, err := s.a.client().RequestPermission(ctx, req)
	if ctx.Err() != nil {
		return tool.Verdict{}, ctx.Err()
	}
	if err != nil {
		return tool.Verdict{}, fmt.Errorf("asking the user through the editor: %w", err)
	}
	sel := resp.Outcome.Selected
	if sel == nil {
		// The editor cancelled the question: the turn is being cancelled.
		return tool.Verdict{Reason: "the user cancelled"}, nil
	}
	switch sel.OptionId {
	case optionOnce:
		return tool.Verdict{Allow: true}, nil
	case optionAlways:
		s.mu.Lock()
		s.always[call.Tool] = true
		s.mu.Unlock()
		return tool.Verdict{Allow: true}, nil
	}
	return tool.Verdict{Reason: "the user did not allow this call. Ask them what they want instead, or answer with what you have."}, nil
}

// permissionCall is the tool call a permission request is about: the call
// the editor was told of, with what it will do; for an edit, the diff it
// would make.
func (s *session) permissionCall(ctx context.Context, call ptk.Call) sdk.ToolCallUpdate {
	id := sdk.ToolCallId("ptk-call-" + call.ID)
	var u sdk.SessionToolCallUpdate
	if st := s.run; st != nil {
		if c := st.byCall[call.ID]; c != nil {
			id = c.id
			u = st.describe(c)
		}
	}
	if u.Title == nil {
		title, kind := titleOf(call), kindOf(call.Tool)
		u.Title, u.Kind = &title, &kind
	}
	tc := sdk.ToolCallUpdate{ToolCallId: id, Title: u.Title, Kind: u.Kind, Locations: u.Locations, RawInput: u.RawInput,
		Status: status(sdk.ToolCallStatusPending)}
	if d, ok := s.proposed(ctx, call); ok {
		tc.Content = []sdk.ToolCallContent{d.content()}
	} else if c := commandOf(call); c != "" {
		tc.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(fenced("$ " + c)))}
	}
	return tc
}

// proposed is the diff an edit call would make, worked out from the file
// as it is now: write_file's content, or edit_file's replacement.
func (s *session) proposed(ctx context.Context, call ptk.Call) (diff, bool) {
	var a struct {
		Path       string  `json:"path"`
		Content    *string `json:"content"`
		OldString  string  `json:"old_string"`
		NewString  string  `json:"new_string"`
		ReplaceAll bool    `json:"replace_all"`
	}
	if json.Unmarshal(call.Args, &a) != nil || a.Path == "" || len(s.locations(call)) == 0 {
		return diff{}, false
	}
	path := s.locations(call)[0].Path
	old, err := s.ws.Text(ctx, a.Path)
	exists := err == nil
	switch call.Tool {
	case "write_file":
		if a.Content == nil {
			return diff{}, false
		}
		return diff{path: path, old: old, existed: exists, new: *a.Content}, true
	case "edit_file":
		if !exists || a.OldString == "" || !strings.Contains(old, a.OldString) {
			return diff{}, false
		}
		n := 1
		if a.ReplaceAll {
			n = -1
		}
		return diff{path: path, old: old, existed: true, new: strings.Replace(old, a.OldString, a.NewString, n)}, true
	}
	return diff{}, false
}
