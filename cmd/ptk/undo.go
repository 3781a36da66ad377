package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/checkpoint"
	"github.com/ptkit/ptk/internal/term"
	"github.com/ptkit/ptk/trace"
)

// addTurnFlags registers the flags of the commands that run turns in a
// workspace, ptk run and ptk chat: the approval preset and checkpoints.
func addTurnFlags(fl *pflag.FlagSet, f *runFlags) {
	addApprovalPresetFlag(fl, &f.approval)
	fl.BoolVar(&f.noCheckpoint, "no-checkpoint", false, "take no checkpoint of the workspace before a turn changes it (ptk undo then cannot put the files back)")
}

// openCheckpoints opens the workspace's checkpoints for a run's tools and
// wraps the tools with the guard that takes one before a turn's first
// change: tools, store and guard; on failure (no git, the home folder) the
// tools as they are, and the error to say when a turn changes something.
func openCheckpoints(ctx context.Context, root string, tools []ptk.Tool) ([]ptk.Tool, *checkpoint.Store, *checkpoint.Guard, error) {
	s, err := checkpoint.Open(ctx, root, "")
	if err != nil {
		return tools, nil, nil, err
	}
	g := s.Guard(nil)
	return g.Wrap(tools), s, g, nil
}

// beginTurn starts ptk run's turn for its checkpoint: a --conversation's
// messages so far are what ptk undo cuts the conversation back to.
func (s *runSetup) beginTurn(ctx context.Context, opts agent.Options, prompt string) {
	if s.guard == nil {
		return
	}
	n := 0
	if opts.ConversationID != "" && opts.Store != nil {
		msgs, _ := opts.Store.Load(ctx, opts.ConversationID)
		n = len(msgs)
	}
	s.guard.Begin(checkpoint.Meta{Conversation: opts.ConversationID, Messages: n, Prompt: prompt})
}

// endTurn says on w whether the files ptk run changed can be put back.
func (s *runSetup) endTurn(w io.Writer, res *agent.Result) {
	if s.guard == nil {
		if s.checkpointErr != nil && res != nil && changedSomething(res, s.tools) {
			fmt.Fprintf(w, "ptk: no checkpoint was taken, so ptk undo cannot put the files back: %v\n", s.checkpointErr)
		}
		return
	}
	c, err := s.guard.End()
	switch {
	case err != nil:
		fmt.Fprintf(w, "ptk: no checkpoint was taken, so ptk undo cannot put the files back: %v\n", err)
	case c != nil:
		fmt.Fprintf(w, "ptk: the files as they were before this run are checkpoint %s: ptk undo puts them back\n", c.Short())
	}
}

// changedSomething reports whether a run called one of tools that may
// change something.
func changedSomething(res *agent.Result, tools []ptk.Tool) bool {
	byName := approvalTools(tools)
	for _, tc := range res.ToolCalls {
		if t := byName[tc.Call.Tool]; t != nil && !t.Info().ReadOnly {
			return true
		}
	}
	return false
}

func newUndoCmd() *cobra.Command {
	var workspace, db string
	var list bool
	cmd := &cobra.Command{
		Use:   "undo [CHECKPOINT]",
		Short: "Put back the files (and the conversation) as they were before the last turn",
		Long: `undo restores the workspace's files as they were before the last turn of
ptk run or ptk chat that changed them: before such a turn changes anything,
ptk saves the workspace's files in a shadow git repository outside it
(under $XDG_STATE_HOME/ptk/checkpoints, default ~/.local/state/ptk), and undo
puts them back: files changed are restored, files made are removed, files
removed come back. A conversation the turn belonged to goes back to before
it, in the trace store.

undo first saves the files as they are, as a checkpoint of their own, so
nothing is lost: 'ptk undo ID' with that checkpoint's ID undoes the undo.
Each undo goes one turn further back. CHECKPOINT restores that one
(--list shows them, with the one undo restores next).

What a checkpoint covers: every file of the workspace its .gitignore files
do not ignore, whether the file tools or a bash command changed it. Not
covered: ignored files (left as they are), empty folders, nested git
repositories' contents, anything outside the workspace. The home folder
and / are never checkpointed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return runUndo(cmd, workspace, db, id, list)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&workspace, "workspace", ".", "the workspace whose files to put back")
	fl.BoolVar(&list, "list", false, "list the workspace's checkpoints, the latest first")
	fl.StringVar(&db, "trace-db", "", "the store that keeps conversations: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	return cmd
}

func runUndo(cmd *cobra.Command, workspace, db, id string, list bool) error {
	ctx := cmd.Context()
	root, err := filepath.Abs(workspace)
	if err != nil {
		return usagef("--workspace %s: %v", workspace, err)
	}
	s, err := checkpoint.Open(ctx, root, "")
	if err != nil {
		return usageError{err}
	}
	cps, err := s.List(ctx)
	if err != nil {
		return err
	}
	undoable := checkpoint.Undoable(cps)
	out := cmd.OutOrStdout()
	if list {
		return listCheckpoints(out, cps, undoable)
	}
	var c checkpoint.Checkpoint
	switch {
	case id != "":
		if c, err = s.Get(ctx, id); err != nil {
			return usageError{err}
		}
	case len(undoable) == 0:
		return usagef("nothing to undo in %s: no turn's checkpoint is left ('ptk undo --list' shows the checkpoints)", root)
	default:
		c = undoable[0]
	}

	// The conversation as it is, kept with the checkpoint the restore
	// saves, so that undoing the undo brings it back.
	var store *trace.Store
	var msgs []ptk.Message
	convNote := ""
	if c.Conversation != "" {
		if store, err = openConversations(cmd, db); err != nil {
			convNote = fmt.Sprintf("conversation %s is as it was: %v", c.Conversation, err)
		} else {
			defer store.Close()
			if msgs, err = store.Load(ctx, c.Conversation); err != nil {
				convNote = fmt.Sprintf("conversation %s is as it was: %v", c.Conversation, err)
				store = nil
			}
		}
	}
	meta := checkpoint.Meta{Conversation: c.Conversation, Messages: len(msgs), Prompt: "ptk undo " + c.Short()}
	if store != nil {
		meta.History, _ = json.Marshal(msgs)
	}
	r, err := s.Restore(ctx, c, meta)
	if err != nil {
		return err
	}
	if store != nil {
		convNote, err = restoreConversation(ctx, s, store, c, msgs)
		if err != nil {
			convNote = fmt.Sprintf("conversation %s is as it was: %v", c.Conversation, err)
		}
	}

	fmt.Fprintf(out, "Restored checkpoint %s, %s:\n", c.Short(), describeCheckpoint(c))
	if len(r.Changes) == 0 {
		fmt.Fprintln(out, "  no file had changed since")
	}
	for _, ch := range r.Changes {
		fmt.Fprintf(out, "  %-12s %s\n", ch.Action, term.Text(ch.Path))
	}
	if convNote != "" {
		fmt.Fprintln(out, convNote)
	}
	too := ""
	if store != nil {
		too = " (the conversation too)"
	}
	fmt.Fprintf(out, "The files as they were before this undo are checkpoint %s: ptk undo %s puts them back%s.\n", r.Saved.Short(), r.Saved.Short(), too)
	return nil
}

// openConversations opens the trace store that keeps conversations.
func openConversations(cmd *cobra.Command, db string) (*trace.Store, error) {
	dsn, err := traceDB(cmd, db)
	if err != nil {
		return nil, err
	}
	return trace.Open(cmd.Context(), dsn)
}

// restoreConversation makes c's conversation what c says: the messages it
// keeps (a checkpoint a restore saved), else the first c.Messages of msgs.
func restoreConversation(ctx context.Context, s *checkpoint.Store, store *trace.Store, c checkpoint.Checkpoint, msgs []ptk.Message) (string, error) {
	if c.HasHistory {
		b, err := s.History(ctx, c)
		if err != nil {
			return "", err
		}
		var kept []ptk.Message
		if err := json.Unmarshal(b, &kept); err != nil {
			return "", err
		}
		if err := store.Save(ctx, c.Conversation, kept); err != nil {
			return "", err
		}
		return fmt.Sprintf("Conversation %s is back to %d messages.", c.Conversation, len(kept)), nil
	}
	if len(msgs) <= c.Messages {
		return fmt.Sprintf("Conversation %s has no message after that turn.", c.Conversation), nil
	}
	if err := store.Save(ctx, c.Conversation, msgs[:c.Messages]); err != nil {
		return "", err
	}
	return fmt.Sprintf("Conversation %s is back to %d messages, as before that turn (%d later ones removed).", c.Conversation, c.Messages, len(msgs)-c.Messages), nil
}

// describeCheckpoint says what a checkpoint is, for a person.
func describeCheckpoint(c checkpoint.Checkpoint) string {
	when := c.Time.Local().Format("2006-01-02 15:04:05")
	if c.Kind == checkpoint.KindRestore {
		return "the files as they were before an undo, " + when
	}
	first, _, _ := strings.Cut(c.Prompt, "\n")
	return fmt.Sprintf("before %q, %s", term.Text(clip(first, 60)), when)
}

func listCheckpoints(w io.Writer, cps, undoable []checkpoint.Checkpoint) error {
	if len(cps) == 0 {
		fmt.Fprintln(w, "No checkpoint yet: ptk run and ptk chat take one before a turn changes the workspace.")
		return nil
	}
	next := ""
	if len(undoable) > 0 {
		next = undoable[0].ID
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTAKEN\tKIND\tCONVERSATION\tBEFORE")
	for _, c := range cps {
		before := term.Text(clip(strings.Join(strings.Fields(c.Prompt), " "), 50))
		if c.Kind == checkpoint.KindRestore {
			before = "an undo (restoring it undoes that undo)"
		}
		if c.ID == next {
			before += "   ← ptk undo restores this"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Short(), ago(c.Time), c.Kind, orDash(term.Text(c.Conversation)), before)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ago says how long ago t was.
func ago(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Local().Format("2006-01-02")
}
