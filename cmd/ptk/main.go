// Command ptk gives tool calling to any LLM. "ptk run" is a coding
// assistant: it gives a prompt to a model with file and shell tools over a
// workspace and loops until the model answers; "ptk chat" is the same in a
// conversation on the terminal. "ptk serve" is an OpenAI-compatible gateway
// that gives tool calling to models that lack it, and "ptk mcp" serves
// ptk's tools to MCP clients. "ptk ptool", "ptk workflow", "ptk react" and
// "ptk distill" are code calling the model; "ptk traces" and "ptk
// dashboard" show what was recorded; "ptk parse" reads a model's reply and
// prints the calls in it. "ptk help environment" lists the environment
// variables it reads.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/internal/secretenv"
	"github.com/ptkit/ptk/internal/version"
)

// usageError marks a mistake in how ptk was called: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Exit statuses.
const (
	exitOK      = 0
	exitFailed  = 1 // the command ran and failed: a run hit a limit, a check found problems
	exitUsage   = 2 // ptk was called wrongly or is configured wrongly
	exitSignal  = 128
	interrupted = exitSignal + int(syscall.SIGINT) // 130: Ctrl-C, as shells report it
)

func main() {
	// ptk's environment holds keys its commands and MCP servers do not get
	// (internal/secretenv); a command run without the sandbox, as ptk's
	// user, must not read them from /proc/PID/environ or ptk's memory.
	secretenv.HideProcess()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes ptk with args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(args, stdin, stdout, stderr, os.Exit)
}

// runWith is run with the function that ends the process when a second
// interrupt comes while the first is being handled.
func runWith(args []string, stdin io.Reader, stdout, stderr io.Writer, exit func(int)) int {
	stdout, stderr = safeOutputs(stdout, stderr)
	ctx, signalled, stop := interruptible(context.Background(), stderr, exit)
	defer stop()
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	// A command may see the signal (through a context of its own) and
	// return before ptk's handler has taken it: stop waits for the handler,
	// which takes what was delivered.
	stop()
	if sig := signalled(); sig != nil {
		if sig == syscall.SIGTERM && err == nil {
			// A server its service manager stopped, and that shut down
			// cleanly: a success, or systemd would call the unit failed.
			return exitOK
		}
		// Whatever the command made of its cancellation, it was
		// interrupted: 128 + the signal's number, as a shell says it.
		fmt.Fprintln(stderr, "ptk: interrupted")
		return exitSignal + int(sig.(syscall.Signal))
	}
	if err == nil {
		return exitOK
	}
	var es exitStatus
	if errors.As(err, &es) {
		return int(es) // the command ptk handed over to said what went wrong
	}
	fmt.Fprintln(stderr, "ptk:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}

// interruptible returns a context that SIGINT or SIGTERM cancels, and
// signalled, which says which of them came (nil: none). The command gets
// the cancellation and stops cleanly (a run answers its open calls, a
// server finishes its requests); a second signal while it does ends ptk at
// once with exit. stop releases the signals; after it, signalled has
// seen every signal delivered before.
func interruptible(parent context.Context, stderr io.Writer, exit func(int)) (ctx context.Context, signalled func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	var got os.Signal
	take := func(s os.Signal) {
		mu.Lock()
		got = s
		mu.Unlock()
		cancel(fmt.Errorf("%v received", s))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case s := <-sigs:
			take(s)
		case <-done:
			// signal.Stop has returned: whatever was delivered is in sigs.
			select {
			case s := <-sigs:
				take(s)
			default:
			}
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "\nptk: %v again: stopping now\n", s)
			exit(exitSignal + int(s.(syscall.Signal)))
		case <-done:
		}
	})
	var once sync.Once
	return ctx, func() os.Signal {
			mu.Lock()
			defer mu.Unlock()
			return got
		}, func() {
			once.Do(func() {
				signal.Stop(sigs) // waits for a delivery in progress
				close(done)
				wg.Wait()
				cancel(nil)
			})
		}
}

// commandGroups sorts the root's commands in its help, by what they are
// for. A command added to ptk gets a row here (TestEveryCommandGrouped).
var commandGroups = []struct {
	id, title string
	commands  []string
}{
	{"core", "Work with a model and tools:", []string{"run", "chat", "serve", "mcp", "acp", "eval"}},
	{"code", "Code calls the model:", []string{"ptool", "workflow", "react", "distill", "refactor"}},
	{"data", "Recorded runs:", []string{"traces", "conversations", "undo", "dashboard"}},
	{"durable", "Durable runs on Temporal (ptk-temporal):", []string{"worker", "runs"}},
	{"tools", "Tools:", []string{"models", "parse", "prompt", "version"}},
}

func init() {
	// ptk's help lists commands in commandGroups' order (groupCommands),
	// not alphabetically.
	cobra.EnableCommandSorting = false
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	v := version.Get()
	root := &cobra.Command{
		Use:   "ptk",
		Short: "Tool calling for any LLM",
		Long: `ptk gives any LLM reliable tool calling: it teaches the model a small text
protocol (or uses its native function calling), reads whatever the model
really writes, validates it against each tool's JSON Schema, runs the tools
and loops until the model answers.

  ptk run --model qwen3:8b "What does this repository do?"
  git diff | ptk run "Review this change"
  echo '<tool_call>{"name": "f", "arguments": {}}</tool_call>' | ptk parse --json`,
		Version:       v.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q; run 'ptk --help' for the commands", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetVersionTemplate("ptk {{.Version}}\n")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(), newChatCmd(), newServeCmd(), newMCPCmd(), newACPCmd(), newEvalCmd())
	root.AddCommand(newPtoolCmd(), newWorkflowCmd(), newReactCmd(), newDistillCmd(), newRefactorCmd())
	root.AddCommand(newTracesCmd(), newConversationsCmd(), newUndoCmd(), newDashboardCmd())
	root.AddCommand(newWorkerCmd(), newRunsCmd())
	root.AddCommand(newModelsCmd(), newParseCmd(), newPromptCmd(), newVersionCmd())
	root.AddCommand(newEnvironmentTopic())
	groupCommands(root)
	addCompletions(root)
	argsAreUsage(root)
	return root
}

// argsAreUsage makes every command's complaint about its arguments (an
// unknown subcommand, a missing or an extra argument: cobra's own checks
// among them) a usage error, exit status 2, as a bad flag is.
func argsAreUsage(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			var ue usageError
			if err != nil && !errors.As(err, &ue) {
				return usageError{err}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		argsAreUsage(sub)
	}
}

// groupCommands gives the root's commands their groups in its help, and
// puts them in commandGroups' order, whatever order they were added in.
func groupCommands(root *cobra.Command) {
	group, rank := map[string]string{}, map[string]int{}
	for _, g := range commandGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, c := range g.commands {
			group[c], rank[c] = g.id, len(rank)
		}
	}
	cmds := slices.Clone(root.Commands())
	for _, c := range cmds {
		if id, ok := group[c.Name()]; ok {
			c.GroupID = id
		} else {
			rank[c.Name()] = len(group) // after the grouped ones, in the order added
		}
	}
	slices.SortStableFunc(cmds, func(a, b *cobra.Command) int { return rank[a.Name()] - rank[b.Name()] })
	root.RemoveCommand(cmds...)
	root.AddCommand(cmds...)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ptk's version and how it was built",
		Long: `version prints ptk's version (the module version 'go install …@version'
stamped, or the commit a build from a clone was made from), the Go
toolchain and the platform. 'ptk --version' prints the first line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), version.Get().Long())
			return err
		},
	}
}
