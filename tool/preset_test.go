package tool_test

import (
	"strings"
	"testing"

	"github.com/ptkit/ptk/tool"
)

func TestPresetDecide(t *testing.T) {
	edit := tool.Subject{Path: "main.go"}
	command := tool.Subject{Command: "go test ./..."}
	none := tool.Subject{}
	for _, c := range []struct {
		preset tool.Preset
		s      tool.Subject
		want   string
	}{
		{tool.PresetPlan, edit, tool.Deny},
		{tool.PresetPlan, command, tool.Deny},
		{tool.PresetPlan, none, tool.Deny},
		{tool.PresetAsk, edit, tool.Ask},
		{tool.PresetAsk, command, tool.Ask},
		{tool.PresetAutoEdit, edit, tool.Allow},
		{tool.PresetAutoEdit, command, tool.Ask},
		// A tool that declares nothing (an MCP server's) is not taken for
		// an edit.
		{tool.PresetAutoEdit, none, tool.Ask},
		// A subject with both is a command first.
		{tool.PresetAutoEdit, tool.Subject{Path: "x", Command: "rm x"}, tool.Ask},
		{tool.PresetYolo, command, tool.Allow},
		{tool.Preset("nonsense"), edit, tool.Ask},
	} {
		if got := c.preset.Decide(c.s); got != c.want {
			t.Errorf("%s.Decide(%+v) = %q, want %q", c.preset, c.s, got, c.want)
		}
	}
}

func TestParsePreset(t *testing.T) {
	for in, want := range map[string]tool.Preset{
		"plan": tool.PresetPlan, "Plan-Only": tool.PresetPlan, " ask ": tool.PresetAsk,
		"auto-edit": tool.PresetAutoEdit, "AUTO_EDIT": tool.PresetAutoEdit, "yolo": tool.PresetYolo,
	} {
		if got, err := tool.ParsePreset(in); err != nil || got != want {
			t.Errorf("ParsePreset(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "auto", "never", "plan only"} {
		if _, err := tool.ParsePreset(bad); err == nil {
			t.Errorf("ParsePreset(%q) took it", bad)
		}
	}
	for _, p := range tool.Presets {
		if p.Name() == "" || p.Description() == "" {
			t.Errorf("%s has no name or description", p)
		}
	}
}

// Only plan mode tells the model anything, and it says what to write.
func TestPresetInstructions(t *testing.T) {
	for _, p := range tool.Presets {
		got := p.Instructions()
		if (got != "") != (p == tool.PresetPlan) {
			t.Errorf("%s: %q", p, got)
		}
	}
	if got := tool.PresetPlan.Instructions(); !strings.Contains(got, "answer with a plan") || !strings.Contains(got, "not change anything") {
		t.Errorf("plan: %q", got)
	}
}
