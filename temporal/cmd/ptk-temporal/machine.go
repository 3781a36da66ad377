package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/temporal"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/durable"
	ptktemporal "github.com/ptkit/ptk/temporal"
)

// runMachine is 'run --machine': one agent run for a program (ptk chat,
// ptk acp, ptk run --output-format json) through the line protocol of
// internal/durable. The first line on stdin is the conversation; the run
// starts, each of its events is a line on stdout, and the decisions and
// the cancel that come on stdin go to the run as its signals; the last
// line is the run's result. When stdin ends before the run, following
// stops (the run goes on on the workers, 'ptk runs' sees it).
func runMachine(cmd *cobra.Command, f runFlags) error {
	out := &lineWriter{enc: json.NewEncoder(cmd.OutOrStdout())}
	out.enc.SetEscapeHTML(false)
	err := machine(cmd, f, out)
	if err != nil && !errors.Is(err, errRunFailed) {
		out.write(durable.Line{Type: durable.LineError, Error: err.Error(), Code: ptk.CodeOf(err)})
		return errRunFailed
	}
	return err
}

func machine(cmd *cobra.Command, f runFlags, out *lineWriter) error {
	sc := bufio.NewScanner(cmd.InOrStdin())
	sc.Buffer(make([]byte, 0, 64<<10), durable.MaxLine)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return usagef("--machine: the conversation: %v", err)
		}
		return usagef("--machine: no conversation on stdin")
	}
	var start durable.Start
	if err := json.Unmarshal(sc.Bytes(), &start); err != nil {
		return usagef("--machine: the first line is not a conversation: %v", err)
	}
	if len(start.Messages) == 0 {
		return usagef("--machine: the conversation has no messages")
	}
	in, err := agentInput(f, start.Messages)
	if err != nil {
		return err
	}
	c, err := f.conn.dial(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := cmd.Context()
	run, err := ptktemporal.StartAgent(ctx, c, in, ptktemporal.StartOptions{ID: f.id, TaskQueue: f.taskQueue()})
	if err != nil {
		return err
	}
	id := run.GetID()
	out.write(durable.Line{Type: durable.LineRun, ID: id})

	// the commands, as they come; the end of stdin stops following
	gone := make(chan struct{})
	cmdErr := make(chan error, 1)
	go func() {
		defer close(gone)
		for sc.Scan() {
			var c2 durable.Command
			if err := json.Unmarshal(sc.Bytes(), &c2); err != nil {
				cmdErr <- usagef("--machine: a command that is not one: %v", err)
				return
			}
			var err error
			switch {
			case c2.Cancel:
				err = ptktemporal.Cancel(ctx, c, id)
			case c2.CallID != "":
				err = ptktemporal.Approve(ctx, c, id, ptktemporal.Decision{CallID: c2.CallID, Allow: c2.Allow, Reason: c2.Reason})
			default:
				err = usagef("--machine: a command names a call or cancels")
			}
			if err != nil {
				cmdErr <- err
				return
			}
		}
		if err := sc.Err(); err != nil {
			cmdErr <- usagef("--machine: a command: %v", err)
		}
	}()
	fctx, stop := contextUntil(ctx, gone)
	defer stop()
	_, err = ptktemporal.Follow(fctx, c, id, 200*time.Millisecond, func(e ptktemporal.Event, _ *ptktemporal.Progress) {
		out.write(durable.Line{Type: durable.LineEvent, Event: &e})
	})
	select {
	case err := <-cmdErr:
		return err
	default:
	}
	if err != nil {
		if fctx.Err() != nil && ctx.Err() == nil {
			return nil // stdin ended: ptk stopped following
		}
		return err
	}
	var res ptktemporal.AgentOutput
	err = run.Get(ctx, &res)
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		err = ce.Details(&res)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	out.write(durable.Line{Type: durable.LineResult, ID: id, Output: &res})
	return nil
}

// lineWriter writes the protocol's lines, one at a time.
type lineWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (w *lineWriter) write(l durable.Line) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.enc.Encode(l)
}

// contextUntil is ctx, also canceled when done is closed.
func contextUntil(ctx context.Context, done <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
