// Command ptk gives tool calling to any LLM. "ptk run" is a coding
// assistant: it gives a prompt to a model with file and shell tools over a
// workspace and loops until the model answers. "ptk serve" is an
// OpenAI-compatible gateway that gives tool calling to models that lack it.
// "ptk parse" reads a model's reply and prints the calls in it; "ptk prompt"
// prints the system prompt that teaches a model the protocol; "ptk models"
// lists the model catalog.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// usageError marks a mistake in how ptk was called: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes ptk with args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "ptk:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "ptk",
		Short: "Tool calling for any LLM",
		Long: `ptk gives any LLM reliable tool calling: it teaches the model a small text
protocol (or uses its native function calling), reads whatever the model
really writes, validates it against each tool's JSON Schema, runs the tools
and loops until the model answers.`,
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
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(), newChatCmd(), newServeCmd(), newModelsCmd(), newParseCmd(), newPromptCmd(), newEvalCmd(), newMCPCmd(), newACPCmd(), newPtoolCmd(), newWorkflowCmd(), newReactCmd())
	root.AddCommand(newTracesCmd(), newConversationsCmd(), newDashboardCmd(), newDistillCmd(), newRefactorCmd())
	return root
}
