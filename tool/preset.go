package tool

import (
	"fmt"
	"strings"
)

// Preset is how much a session lets calls run without asking: the approval
// modes a front end offers its user (ptk acp's session modes; the
// --approval flag of ptk run and chat). A Policy still decides first: a
// preset only answers for the calls no policy rule matched. Read-only tools
// never ask, whatever the preset.
type Preset string

// The presets, from the most careful to the least.
const (
	// PresetPlan runs read-only tools only: the model looks and plans,
	// and every call that would change something is refused, with a
	// reason that tells it to describe the change instead.
	PresetPlan Preset = "plan"
	// PresetAsk asks the user about every call that may change something.
	PresetAsk Preset = "ask"
	// PresetAutoEdit runs file edits in the workspace without asking (the
	// calls whose tool declares a path and no command, [Subject]) and asks
	// about everything else: commands, and tools that declare nothing.
	PresetAutoEdit Preset = "auto-edit"
	// PresetYolo runs every call without asking.
	PresetYolo Preset = "yolo"
)

// Presets lists the presets, from the most careful to the least.
var Presets = []Preset{PresetPlan, PresetAsk, PresetAutoEdit, PresetYolo}

// ParsePreset reads a preset's name, in any letter case; "plan-only" and
// "auto_edit" are taken too.
func ParsePreset(s string) (Preset, error) {
	switch p := Preset(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")); p {
	case PresetPlan, "plan-only":
		return PresetPlan, nil
	case PresetAsk, PresetAutoEdit, PresetYolo:
		return p, nil
	}
	return "", fmt.Errorf("unknown approval mode %q: use plan, ask, auto-edit or yolo", s)
}

// Name is the preset's name for a person.
func (p Preset) Name() string {
	switch p {
	case PresetPlan:
		return "Plan only"
	case PresetAsk:
		return "Ask"
	case PresetAutoEdit:
		return "Auto-edit"
	case PresetYolo:
		return "Yolo"
	}
	return string(p)
}

// Description says in one sentence what the preset lets run.
func (p Preset) Description() string {
	switch p {
	case PresetPlan:
		return "Reads and plans; nothing is changed: edits and commands are refused."
	case PresetAsk:
		return "Asks before every edit and command."
	case PresetAutoEdit:
		return "Edits files in the workspace without asking; asks before commands."
	case PresetYolo:
		return "Runs every edit and command without asking."
	}
	return ""
}

// Decide returns what the preset does with a call, to a tool that is not
// read-only, that no policy rule matched: Allow, Deny or Ask. subject is
// what the call's tool declares it acts on (SubjectOf). A preset that is not
// one of the four asks.
func (p Preset) Decide(subject Subject) string {
	switch p {
	case PresetPlan:
		return Deny
	case PresetYolo:
		return Allow
	case PresetAutoEdit:
		if subject.Path != "" && subject.Command == "" {
			return Allow
		}
	}
	return Ask
}

// Instructions is what the model is told of the preset in its system
// prompt: in plan mode, that it may only look and is to answer with a plan;
// "" for the other presets, whose calls simply run or are asked.
func (p Preset) Instructions() string {
	if p == PresetPlan {
		return "You are in plan mode: you may look (read files, list, search) but not change anything; " +
			"calls that would change something are refused. Find out what you need, then answer with a plan: " +
			"the files to change and how, and the commands to run, in order. The user will switch modes to let you carry it out."
	}
	return ""
}

// DenyReason is what the model is told of a call the preset refused.
func (p Preset) DenyReason() string {
	if p == PresetPlan {
		return "the session is in plan-only mode: nothing may be changed now. " +
			"Do not try other ways to change it; describe the change you would make (the files, the edits, the commands), and the user will switch modes to let you make it."
	}
	return "the session's approval mode does not allow this call"
}
