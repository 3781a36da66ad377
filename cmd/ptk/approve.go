package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
)

// cliApprover decides, for ptk run, whether a call to a tool that changes
// something may run: the policy file first (last matching rule wins), then
// --yes, then the user's earlier "always", then a question on the terminal;
// with no terminal to ask on, the call is denied and the model is told how
// the user can allow it.
type cliApprover struct {
	policy     *tool.Policy
	policyFile string
	// tools are the run's tools by name, which say what a call acts on.
	tools map[string]ptk.Tool
	yes   bool
	// ask is set when there is a terminal to ask on.
	ask    bool
	in     *bufio.Reader
	out    io.Writer
	pr     *progress
	always map[string]bool

	// ui, when set, asks instead of the terminal (ptk chat's screen): it
	// returns "y", "n" or "a", or the context's error.
	ui func(ctx context.Context, call ptk.Call) (string, error)
	// asked, when set, is told of each call the user is asked about.
	asked func(ptk.Call)
}

var _ tool.Approver = (*cliApprover)(nil)

func (a *cliApprover) Approve(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (tool.Verdict, error) {
	action, rule := a.policy.Decide(a.tools[call.Tool], call)
	switch {
	case action == tool.Allow:
		return tool.Verdict{Allow: true}, nil
	case action == tool.Deny:
		return tool.Verdict{Reason: fmt.Sprintf("the user's policy (%s, rule %d) does not allow this call; do not try to get around it", a.policyFile, rule)}, nil
	case a.yes || a.always[call.Tool]:
		return tool.Verdict{Allow: true}, nil
	case !a.ask:
		return tool.Verdict{Reason: "ptk is running without a terminal to ask the user, and was not started with --yes. " +
			"Tell the user what you wanted to do; they can allow it by running ptk with --yes, or with an allow rule in a policy file (--policy FILE)."}, nil
	}
	if a.asked != nil {
		a.asked(call)
	}
	return a.question(ctx, call)
}

// approvalTools returns tools by name, for a policy to find what a call
// acts on (the subject each tool declares, tool.SubjectOf).
func approvalTools(tools []ptk.Tool) map[string]ptk.Tool {
	byName := make(map[string]ptk.Tool, len(tools))
	for _, t := range tools {
		byName[t.Info().Name] = t
	}
	return byName
}

// question asks the user, on the terminal or through ui.
func (a *cliApprover) question(ctx context.Context, call ptk.Call) (tool.Verdict, error) {
	read := a.readAnswer
	if a.ui != nil {
		read = a.ui
	}
	s, err := read(ctx, call)
	if err != nil {
		return tool.Verdict{}, err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes":
		return tool.Verdict{Allow: true}, nil
	case "a", "always":
		if a.always == nil {
			a.always = map[string]bool{}
		}
		a.always[call.Tool] = true
		return tool.Verdict{Allow: true}, nil
	}
	return tool.Verdict{Reason: "the user did not allow this call. Ask them what they want instead, or answer with what you have."}, nil
}

// readAnswer asks on the terminal and reads the answer line.
func (a *cliApprover) readAnswer(ctx context.Context, call ptk.Call) (string, error) {
	q := fmt.Sprintf("? %s %s\n  allow? [y]es, [n]o, [a]lways for %s: ", call.Tool, describeCall(call), call.Tool)
	if a.pr != nil {
		a.pr.prompt(q)
	} else {
		io.WriteString(a.out, q)
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := a.in.ReadString('\n')
		answer <- line
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s := <-answer:
		return s, nil
	}
}

// describeCall shows what a call will do, for the user to decide: the whole
// command for bash, the path and size for writes, the arguments otherwise.
func describeCall(c ptk.Call) string {
	var a struct {
		Command   string `json:"command"`
		Path      string `json:"path"`
		Content   string `json:"content"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	json.Unmarshal(c.Args, &a)
	switch {
	case a.Command != "":
		return "$ " + clip(a.Command, 600)
	case a.Path != "" && c.Tool == "write_file":
		return fmt.Sprintf("%s (%d lines)", a.Path, strings.Count(a.Content, "\n")+1)
	case a.Path != "" && a.OldString != "":
		return fmt.Sprintf("%s: %q → %q", a.Path, clip(a.OldString, 120), clip(a.NewString, 120))
	}
	return clip(compactJSON(c.Args), 300)
}
