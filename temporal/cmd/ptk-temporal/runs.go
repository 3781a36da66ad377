package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	ptktemporal "github.com/ptkit/ptk/temporal"
	"github.com/ptkit/ptk/tool"
)

func parsePreset(s string) (tool.Preset, error) {
	p, err := tool.ParsePreset(s)
	if err != nil {
		return "", usageError{err}
	}
	return p, nil
}

func newRunsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs status|approve|cancel ID",
		Short: "Look at a durable run, approve its calls, or cancel it",
	}
	var c conn
	var asJSON bool
	status := &cobra.Command{
		Use:   "status ID",
		Short: "Print a run's state, the calls that wait for approval, and its events",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.dial(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			p, err := ptktemporal.Status(cmd.Context(), cl, args[0], 0)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetEscapeHTML(false)
				return enc.Encode(p)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "run %s: %s, %d model calls, %d tool calls\n", line(args[0]), p.State, p.Iteration, p.ToolCalls)
			for _, e := range p.Events {
				printEvent(out, e)
			}
			for _, w := range p.Waiting {
				fmt.Fprintf(out, "waiting for approval: %s %s %s (ptk runs approve %s %s)\n", w.CallID, line(w.Tool), clip(line(string(w.Args)), 200), line(args[0]), w.CallID)
			}
			if p.Answer != "" {
				fmt.Fprintf(out, "answer: %s\n", line(p.Answer))
			}
			if p.Error != "" {
				fmt.Fprintf(out, "error: %s %s\n", p.ErrorCode, line(p.Error))
			}
			return nil
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print the progress as one JSON object")
	var deny bool
	var reason string
	approve := &cobra.Command{
		Use:   "approve ID CALL",
		Short: "Let a call that waits for approval run (--deny: refuse it)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.dial(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			return ptktemporal.Approve(cmd.Context(), cl, args[0], ptktemporal.Decision{CallID: args[1], Allow: !deny, Reason: reason})
		},
	}
	approve.Flags().BoolVar(&deny, "deny", false, "refuse the call; the model is told")
	approve.Flags().StringVar(&reason, "reason", "", "why the call is refused, for the model")
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Stop a run: its running calls are canceled, and it records what it did",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.dial(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			return ptktemporal.Cancel(cmd.Context(), cl, args[0])
		},
	}
	for _, sub := range []*cobra.Command{status, approve, cancel} {
		c.flags(sub)
		cmd.AddCommand(sub)
	}
	return cmd
}
