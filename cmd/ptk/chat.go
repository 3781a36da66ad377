package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/cmd/ptk/internal/chat"
	"github.com/ptkit/ptk/internal/term"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/trace"
)

func newChatCmd() *cobra.Command {
	var f runFlags
	var cont bool
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Work with a coding assistant in the terminal, in a conversation",
		Long: `chat is ptk run as a conversation on a full-screen terminal: the answer
streams as it is written, each tool call shows as a panel with its result
(a diff for edit_file and write_file), and the calls that change something
are asked on the screen, with the diff they would make: y, n, or a (always
for that tool). --approval (plan, ask, auto-edit, yolo; shift+tab changes
it), --yes and the policy file work as in ptk run. Each message continues
the conversation.

Conversations are kept in the trace store with the workspace they were held
in: --continue goes on with this workspace's latest, --conversation NAME
with that one, /conversations picks one, /new starts another (the old one is
kept), /clear deletes this one (it asks). On exit, ptk says how to resume.

Before a turn changes the workspace, its files are saved in a checkpoint (a
shadow git repository outside the workspace): /undo, or ptk undo after the
chat, puts them back and takes the conversation back to before the turn.

Keys: enter sends (while the model works, the message waits in a queue and
is sent when the run ends), alt+enter or ctrl+j starts a new line, @ starts
a file mention (tab completes it; the file is attached), ctrl+g edits the
message in $EDITOR, up and down recall earlier messages, esc interrupts the
model or the running tool (what was done is kept, marked interrupted),
ctrl+c twice or ctrl+d on an empty line quits, pgup, pgdown and the mouse
wheel scroll (the view stays put while the answer streams below), ctrl+y
or /copy copies the last answer (OSC 52), ctrl+o shows whole tool results,
ctrl+r shows the model's reasoning. /help lists the commands.

The status line shows how full the model's context window is (when it is
known: the catalog, the server, or --context). Near its end, the run
replaces the older messages, for the model, by the model's notes of them;
/compact does it at once.

The model and tool flags are ptk run's (see ptk run --help). chat needs a
terminal; from a script, use ptk run.

--temporal HOST:PORT runs each turn durably on ptk's workers (ptk worker,
with its model, tools and workspace; ptk-temporal must be installed): a call
the run waits for is asked here as usual, y, n or a, and the answer goes to
the run; esc cancels the run. See docs/temporal.md.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("chat takes no prompt: type it in the chat (or use ptk run %q)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChat(cmd, f, cont)
		},
	}
	fl := cmd.Flags()
	addRunFlags(fl, &f)
	addTurnFlags(fl, &f)
	addTraceFlags(fl, &f.trace, true)
	fl.BoolVarP(&cont, "continue", "c", false, "go on with the latest conversation held in this workspace")
	fl.StringVar(&f.temporal.address, "temporal", "", "run each turn durably on ptk's workers of the Temporal server at HOST:PORT (ptk worker, with its model and tools); the calls that wait for approval are asked here")
	return cmd
}

func runChat(cmd *cobra.Command, f runFlags, cont bool) error {
	in, out := cmd.InOrStdin(), cmd.OutOrStdout()
	if !isTerminal(in) || !isTerminal(out) {
		return usagef(`ptk chat needs a terminal; without one, use ptk run "PROMPT"`)
	}
	if cont && f.trace.conversation != "" {
		return usagef("--continue goes on with the workspace's latest conversation, --conversation with the one it names: give one of them")
	}
	prepare := prepareRun
	if f.temporal.address != "" {
		prepare = prepareDurableChat
	}
	s, err := prepare(cmd, f)
	if err != nil {
		return err
	}
	defer s.close()
	ctx := cmd.Context()
	wsKey := s.workspace
	if real, err := filepath.EvalSymlinks(wsKey); err == nil {
		wsKey = real
	}

	// Conversations live in the trace store, with the workspace, so that
	// --continue finds this workspace's latest; without a store they live
	// as long as the process.
	var convs chat.Conversations = &chat.MemoryConversations{}
	storeName := ""
	var rec *recording
	db, err := traceDB(cmd, f.trace.db)
	if err == nil {
		var ts *trace.Store
		if ts, err = trace.Open(ctx, db); err == nil {
			rec = &recording{store: ts}
			defer rec.close(cmd.ErrOrStderr())
			if !f.trace.off {
				// The screen is the chat's: the writer's losses are not
				// written over it.
				if err := rec.startWriting(cmd, f.trace, io.Discard); err != nil {
					return err
				}
			}
			convs, storeName = &storeConversations{s: ts, workspace: wsKey}, "the trace store "+ts.Name()
		}
	}
	if err != nil {
		if cont || f.trace.conversation != "" {
			return usagef("the conversations are kept in the trace store, which does not open: %v", err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "ptk: the conversation is kept in memory only: %v\n", err)
	}
	conversation := f.trace.conversation
	notice := ""
	if cont {
		latest, err := convs.List(ctx)
		if err != nil {
			return err
		}
		if len(latest) == 0 {
			notice = "no conversation was held in " + wsKey + " yet: this is a new one"
		} else {
			conversation = latest[0].ID
		}
	}
	var history []ptk.Message
	if conversation != "" {
		if history, err = convs.Load(ctx, conversation); err != nil {
			return err
		}
	}

	opts := s.opts
	opts.StreamModel = true
	opts.NativeTools = &llm.NativeTools{}
	approver := &cliApprover{policy: s.policy, policyFile: s.policyFile, tools: approvalTools(s.tools), preset: s.preset, ask: true}
	opts.Approver = approver
	files, err := fs.New(s.workspace)
	if err != nil {
		return usageError{err}
	}
	defer files.Close()
	cfg := chat.Config{
		Options:       opts,
		Conversation:  conversation,
		Conversations: convs,
		StoreName:     storeName,
		History:       history,
		Files:         files,
		Checkpoints:   s.checkpoints,
		Guard:         s.guard,
		Approval:      s.preset,
		SetApproval:   approver.setPreset,
		Editor:        editorCommand(),
		Resolve:       func(name string) (llm.Model, error) { return s.resolve(splitList(name)) },
		Hint:          s.hint,
	}
	if s.runner != nil {
		// the workers record their runs, and have the model
		cfg.Run, cfg.Resolve, cfg.Hint = s.runner.Stream, nil, nil
		s.runner.sendPreset = true // the chat's approval mode
	} else if rec != nil && rec.sink != nil {
		cfg.Observe = func(conv, prompt string, o agent.Options) func(agent.Event, error) {
			return rec.run(trace.Run{Name: conv, Model: o.ModelName, Mode: string(o.Mode), Input: prompt})
		}
	}
	m := chat.New(cfg)
	if notice != "" {
		m.Note(notice)
	}
	if s.runner != nil {
		m.Note("each turn runs durably on the ptk workers of the Temporal server at " + f.temporal.address + ", with their model and tools; the calls that wait for approval are asked here, and esc cancels the run")
	}
	if s.checkpointErr != nil {
		m.Note("checkpoints are off, so /undo cannot put files back: " + s.checkpointErr.Error())
	}
	approver.ui = m.Ask
	// The screen is drawn with control sequences: it writes to the terminal
	// itself, and its panels pass what models and tools wrote through
	// term.Text.
	_, err = tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(term.Unwrap(out)), tea.WithContext(ctx)).Run()
	m.Close()
	printResume(out, m, convs, storeName)
	return err
}

// printResume says, after the chat, how to go on with its conversation.
func printResume(w io.Writer, m *chat.Model, convs chat.Conversations, storeName string) {
	id, n := m.Conversation()
	if n == 0 {
		return
	}
	if storeName == "" {
		fmt.Fprintf(w, "The conversation %s (%d messages) was kept in memory only: it is gone.\n", term.Text(id), n)
		return
	}
	how := "ptk chat --conversation " + id
	if latest, err := convs.List(context.Background()); err == nil && len(latest) > 0 && latest[0].ID == id {
		how = "ptk chat --continue   (or: ptk chat --conversation " + id + ")"
	}
	fmt.Fprintf(w, "The conversation %s (%d messages) is kept in %s.\nResume it: %s\n", term.Text(id), n, storeName, term.Text(how))
}

// editorCommand is the command Ctrl+G edits a message with: $VISUAL, else
// $EDITOR, split on spaces ("code -w").
func editorCommand() []string {
	if e := strings.Fields(os.Getenv("VISUAL")); len(e) > 0 {
		return e
	}
	return strings.Fields(os.Getenv("EDITOR"))
}

// storeConversations keeps ptk chat's conversations in the trace store,
// each with the workspace it was held in.
type storeConversations struct {
	s         *trace.Store
	workspace string
}

var _ chat.Conversations = (*storeConversations)(nil)

// maxListed is how many of a workspace's conversations /conversations
// lists.
const maxListed = 50

func (c *storeConversations) Load(ctx context.Context, id string) ([]ptk.Message, error) {
	return c.s.Load(ctx, id)
}

func (c *storeConversations) Append(ctx context.Context, id string, base, msgs []ptk.Message) error {
	if err := c.s.Append(ctx, id, base, msgs); err != nil {
		return err
	}
	return c.s.SetWorkspace(ctx, id, c.workspace)
}

func (c *storeConversations) Save(ctx context.Context, id string, msgs []ptk.Message) error {
	if err := c.s.Save(ctx, id, msgs); err != nil {
		return err
	}
	return c.s.SetWorkspace(ctx, id, c.workspace)
}

func (c *storeConversations) List(ctx context.Context) ([]chat.Summary, error) {
	convs, err := c.s.ConversationsIn(ctx, c.workspace, maxListed)
	if err != nil {
		return nil, err
	}
	out := make([]chat.Summary, 0, len(convs))
	for _, cv := range convs {
		sum := chat.Summary{ID: cv.ID, Updated: cv.UpdatedAt, Messages: cv.Messages}
		if msgs, err := c.s.Load(ctx, cv.ID); err == nil {
			sum.Title = chat.Title(msgs)
		}
		out = append(out, sum)
	}
	return out, nil
}

func (c *storeConversations) Delete(ctx context.Context, id string) error {
	return c.s.DeleteConversation(ctx, id)
}
