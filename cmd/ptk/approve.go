package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/term"
	"github.com/ptkit/ptk/tool"
)

// cliApprover decides, for ptk run and ptk chat, whether a call to a tool
// that changes something may run: the policy file first (last matching
// rule wins; a rule that asks asks whatever the preset), then the approval
// preset (--approval, --yes), then the user's earlier "always", then a
// question on the terminal; with no terminal to ask on, the call is denied
// and the model is told how the user can allow it.
type cliApprover struct {
	policy     *tool.Policy
	policyFile string
	// tools are the run's tools by name, which say what a call acts on.
	tools map[string]ptk.Tool
	// preset is the approval preset; ptk chat changes it (setPreset)
	// while a run may read it.
	mu     sync.Mutex
	preset tool.Preset
	// ask is set when there is a terminal to ask on.
	ask    bool
	in     *bufio.Reader
	out    io.Writer
	pr     *progress
	always map[string]bool

	// ui, when set, asks instead of the terminal (ptk chat's screen), with
	// the line that says why the user is asked (or ""): it returns "y", "n"
	// or "a", or the context's error.
	ui func(ctx context.Context, call ptk.Call, why string) (string, error)
	// asked, when set, is told of each call the user is asked about.
	asked func(ptk.Call)
}

var _ tool.Approver = (*cliApprover)(nil)

func (a *cliApprover) Approve(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (tool.Verdict, error) {
	t := a.tools[call.Tool]
	d := a.policy.Check(t, call)
	switch d.Action {
	case tool.Allow:
		return tool.Verdict{Allow: true}, nil
	case tool.Deny:
		return tool.Verdict{Reason: fmt.Sprintf("the user's policy (%s, rule %d) does not allow this call; do not try to get around it", a.policyFile, d.Rule)}, nil
	case tool.Ask: // a rule that asks asks whatever the preset
	default:
		preset := a.getPreset()
		switch preset.Decide(tool.SubjectOf(t, call.Args)) {
		case tool.Allow:
			return tool.Verdict{Allow: true}, nil
		case tool.Deny:
			return tool.Verdict{Reason: preset.DenyReason()}, nil
		}
		if a.always[call.Tool] {
			return tool.Verdict{Allow: true}, nil
		}
	}
	if !a.ask {
		reason := "ptk is running without a terminal to ask the user, and was not started with --yes."
		if d.Why != "" {
			reason += " The user's policy (" + a.policyFile + ") did not allow it: " + d.Why + "."
		}
		return tool.Verdict{Reason: reason + " Tell the user what you wanted to do; they can allow it by running ptk with --yes (or --approval auto-edit for edits), or with an allow rule in a policy file (--policy FILE)."}, nil
	}
	if a.asked != nil {
		a.asked(call)
	}
	return a.question(ctx, call, d.Why)
}

// getPreset is the approval preset now; ask when none was set.
func (a *cliApprover) getPreset() tool.Preset {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.preset == "" {
		return tool.PresetAsk
	}
	return a.preset
}

// setPreset changes the approval preset, for the calls asked from now on.
func (a *cliApprover) setPreset(p tool.Preset) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.preset = p
}

// approvalPreset reads --approval and --yes: --yes is --approval yolo, and
// the two must agree when both are given.
func approvalPreset(cmd *cobra.Command, approval string, yes bool) (tool.Preset, error) {
	p, err := tool.ParsePreset(approval)
	if err != nil {
		return "", usagef("--approval: %v", err)
	}
	if yes {
		if cmd.Flags().Changed("approval") && p != tool.PresetYolo {
			return "", usagef("--yes is --approval yolo; it disagrees with --approval %s", approval)
		}
		p = tool.PresetYolo
	}
	return p, nil
}

// yesPreset is the preset of a command with --yes and no --approval.
func yesPreset(yes bool) tool.Preset {
	if yes {
		return tool.PresetYolo
	}
	return tool.PresetAsk
}

// addApprovalPresetFlag registers --approval, for ptk run and ptk chat.
func addApprovalPresetFlag(fl *pflag.FlagSet, approval *string) {
	fl.StringVar(approval, "approval", string(tool.PresetAsk), "what runs without asking (a policy file decides first): plan (read-only tools; the model writes a plan), ask, auto-edit (file edits run, commands ask) or yolo (everything runs, as --yes)")
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

// question asks the user, on the terminal or through ui; why is why the
// policy did not decide (see tool.Decision), shown with the question.
func (a *cliApprover) question(ctx context.Context, call ptk.Call, why string) (tool.Verdict, error) {
	var s string
	var err error
	if a.ui != nil {
		s, err = a.ui(ctx, call, a.whyAsked(why))
	} else {
		s, err = a.readAnswer(ctx, call, why)
	}
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

// whyAsked is the line that says why the user is asked, for a call the
// policy did not decide: "" without a policy.
func (a *cliApprover) whyAsked(why string) string {
	switch {
	case a.policy == nil:
		return ""
	case why == "":
		return "asked: no rule of " + a.policyFile + " allows it"
	}
	return "asked: " + why
}

// readAnswer asks on the terminal and reads the answer line. What the
// model wrote is shown as it is, made safe (internal/term): escapes in a
// command are shown, never acted on.
func (a *cliApprover) readAnswer(ctx context.Context, call ptk.Call, why string) (string, error) {
	q := "? " + term.Text(call.Tool) + " " + describeCall(call) + "\n"
	if w := a.whyAsked(why); w != "" {
		q += "  " + term.Text(w) + "\n"
	}
	q += "  allow? [y]es, [n]o, [a]lways for " + term.Text(call.Tool) + ": "
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

// describeCall shows what a call will do, for the user to decide, made safe
// for the terminal: the whole command for bash, every line of it, nothing
// left out; the path and size for writes; the arguments otherwise.
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
		lines := strings.Split(term.Command(strings.TrimRight(a.Command, "\n")), "\n")
		return "$ " + strings.Join(lines, "\n    ")
	case a.Path != "" && c.Tool == "write_file":
		return fmt.Sprintf("%s (%d lines)", term.Text(a.Path), strings.Count(a.Content, "\n")+1)
	case a.Path != "" && a.OldString != "":
		return term.Text(fmt.Sprintf("%s: %q → %q", a.Path, clip(a.OldString, 120), clip(a.NewString, 120)))
	}
	args := compactJSON(c.Args)
	if len(args) > maxShownArgs {
		return term.Text(clip(args, maxShownArgs)) + fmt.Sprintf(" (%d more bytes of arguments not shown)", len(args)-maxShownArgs)
	}
	return term.Text(args)
}

// maxShownArgs is how much of a call's arguments (not a command, which is
// always shown whole) an approval question shows.
const maxShownArgs = 2000
