package main

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/cmd/ptk/internal/chat"
	"github.com/ptkit/ptk/internal/term"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/trace"
)

func newChatCmd() *cobra.Command {
	var f runFlags
	var conversation, traceDBFlag string
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Work with a coding assistant in the terminal, in a conversation",
		Long: `chat is ptk run as a conversation on a full-screen terminal: the answer
streams as it is written, each tool call shows as a panel with its result
(a diff for edit_file and write_file), and the calls that change something
are asked on the screen: y, n, or a (always for that tool). --yes and the
policy file work as in ptk run. Each message continues the conversation.

Keys: enter sends (alt+enter or ctrl+j for a new line), up and down recall
earlier messages, esc interrupts the model or the running tool (what was
done is kept), ctrl+c twice quits, pgup and pgdown scroll, ctrl+o shows
whole tool results, ctrl+r shows the model's reasoning. /help lists the
commands: /model, /mode, /tools, /clear, /cost, /conversations.

The model and tool flags are ptk run's (see ptk run --help). chat needs a
terminal; from a script, use ptk run.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("chat takes no prompt: type it in the chat (or use ptk run %q)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChat(cmd, f, conversation, traceDBFlag)
		},
	}
	addRunFlags(cmd.Flags(), &f)
	cmd.Flags().StringVar(&conversation, "conversation", "", "the conversation's name, to resume it (kept in the trace store; 'ptk conversations' lists them)")
	cmd.Flags().StringVar(&traceDBFlag, "trace-db", "", "the store that keeps conversations: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	return cmd
}

func runChat(cmd *cobra.Command, f runFlags, conversation, traceDBFlag string) error {
	in, out := cmd.InOrStdin(), cmd.OutOrStdout()
	if !isTerminal(in) || !isTerminal(out) {
		return usagef(`ptk chat needs a terminal; without one, use ptk run "PROMPT"`)
	}
	s, err := prepareRun(cmd, f)
	if err != nil {
		return err
	}
	defer s.close()
	if conversation == "" {
		conversation = "chat-" + time.Now().Format("2006-01-02-150405")
	}
	// Conversations live in the trace store, so --conversation resumes one
	// tomorrow; without a store they live as long as the process.
	var store agent.Store = &agent.MemoryStore{}
	storeName := ""
	db, err := traceDB(cmd, traceDBFlag)
	if err == nil {
		var ts *trace.Store
		if ts, err = trace.Open(cmd.Context(), db); err == nil {
			defer ts.Close()
			store, storeName = ts, "the trace store "+ts.Name()
		}
	}
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "ptk: the conversation is kept in memory only: %v\n", err)
	}
	history, err := store.Load(cmd.Context(), conversation)
	if err != nil {
		return err
	}
	opts := s.opts
	opts.StreamModel = true
	opts.NativeTools = &llm.NativeTools{}
	approver := &cliApprover{policy: s.policy, policyFile: s.policyFile, tools: approvalTools(s.tools), yes: f.yes, ask: true}
	opts.Approver = approver
	m := chat.New(chat.Config{
		Options:      opts,
		Conversation: conversation,
		Store:        store,
		StoreName:    storeName,
		History:      history,
		Resolve:      func(name string) (llm.Model, error) { return s.resolve(splitList(name)) },
		Hint:         s.hint,
	})
	approver.ui = m.Ask
	// The screen is drawn with control sequences: it writes to the terminal
	// itself, and its panels pass what models and tools wrote through
	// term.Text.
	_, err = tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(term.Unwrap(out)), tea.WithContext(cmd.Context())).Run()
	return err
}
