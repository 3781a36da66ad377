// Command ptk-temporal is ptk's commands for durable runs on Temporal:
//
//	ptk-temporal worker --temporal HOST:PORT [--model NAME] [--workspace DIR] ...
//	ptk-temporal run --temporal HOST:PORT [--detach] PROMPT
//	ptk-temporal run --temporal HOST:PORT --machine   (JSON lines, for ptk)
//	ptk-temporal workflow run --temporal HOST:PORT [--detach] TRACE.json
//	ptk-temporal runs status|approve|cancel ID
//
// ptk itself runs them as 'ptk worker', 'ptk run --temporal', 'ptk workflow
// run --temporal' and 'ptk runs', by finding this binary on the PATH (or
// beside ptk, or at $PTK_TEMPORAL): the core ptk binary never links the
// Temporal SDK. ptk run --temporal --output-format json, ptk chat --temporal
// and ptk acp --temporal drive 'run --machine' (internal/durable's line
// protocol) to run turns durably and answer their approvals. Install it
// with
//
//	go install github.com/ptkit/ptk/temporal/cmd/ptk-temporal@latest
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/ptkit/ptk/internal/secretenv"
	"github.com/ptkit/ptk/internal/term"
)

// usageError marks a mistake in how the command was called: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// runFailed marks a run that ended without success: exit status 1, the
// run's error already said.
var errRunFailed = errors.New("the run failed")

func main() {
	// As ptk does: the keys in this process's environment stay out of the
	// reach of the commands its activities run as the same user.
	secretenv.HideProcess()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := &cobra.Command{
		Use:           "ptk-temporal",
		Short:         "Durable ptk runs on Temporal: workers, runs, approvals",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// what a model, a tool or a trace wrote reaches a terminal as text
	// (internal/term, as in ptk): stderr always, stdout on a terminal
	if isTerminal(stdout) {
		stdout = term.NewWriter(stdout)
	}
	stderr = term.NewWriter(stderr)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newWorkerCmd(), newRunCmd(), newWorkflowCmd(), newRunsCmd())
	err := root.ExecuteContext(ctx)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errRunFailed):
		return 1
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "ptk:", err)
		return 2
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "ptk: interrupted")
		return 130
	}
	fmt.Fprintln(stderr, "ptk:", err)
	return 1
}

// conn is the flags that reach the Temporal server.
type conn struct {
	hostPort, namespace, queue string
}

func (c *conn) flags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&c.hostPort, "temporal", "", "the Temporal server's HOST:PORT (env PTK_TEMPORAL_ADDRESS)")
	fl.StringVar(&c.namespace, "namespace", "", "the Temporal namespace (env PTK_TEMPORAL_NAMESPACE; default default)")
	fl.StringVar(&c.queue, "task-queue", "", "the task queue of ptk's workers (env PTK_TEMPORAL_TASK_QUEUE; default ptk)")
}

func (c *conn) dial(cmd *cobra.Command) (client.Client, error) {
	host := first(c.hostPort, os.Getenv("PTK_TEMPORAL_ADDRESS"))
	if host == "" {
		return nil, usagef("no Temporal server: give --temporal HOST:PORT or set PTK_TEMPORAL_ADDRESS (a dev server: go run github.com/ptkit/ptk/temporal/devserver@latest)")
	}
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	cl, err := client.DialContext(cmd.Context(), client.Options{HostPort: host,
		Namespace: first(c.namespace, os.Getenv("PTK_TEMPORAL_NAMESPACE"), "default"), Logger: logger})
	if err != nil {
		return nil, usagef("the Temporal server at %s: %v", host, err)
	}
	return cl, nil
}

func (c *conn) taskQueue() string {
	return first(c.queue, os.Getenv("PTK_TEMPORAL_TASK_QUEUE"), "ptk")
}

func first(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
