package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
)

func named(name string) ptk.Tool {
	return ptk.NewTool(ptk.ToolInfo{Name: name}, func(context.Context, json.RawMessage) (ptk.Result, error) {
		return ptk.Result{Content: name}, nil
	})
}

func TestRegistry(t *testing.T) {
	r, err := NewRegistry(named("read_file"), named("grep"))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := r.With(named("bash"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "read_file,grep" {
		t.Errorf("With changed the original: %s", got)
	}
	if got := strings.Join(r2.Names(), ","); got != "read_file,grep,bash" {
		t.Errorf("names = %s", got)
	}
	if tl, ok := r2.Get("bash"); !ok || tl.Info().Name != "bash" {
		t.Errorf("Get(bash) = %v, %v", tl, ok)
	}
	sel, err := r2.Select("bash", "read_file")
	if err != nil || len(sel) != 2 || sel[0].Info().Name != "bash" {
		t.Errorf("Select = %v, %v", sel, err)
	}
	if _, err := r2.Select("rm"); err == nil || !strings.Contains(err.Error(), `unknown tool "rm" (the tools are: read_file, grep, bash)`) {
		t.Errorf("Select(rm) error = %v", err)
	}
	for _, bad := range [][]ptk.Tool{{named("a"), named("a")}, {named("")}, {nil}} {
		if _, err := NewRegistry(bad...); err == nil {
			t.Errorf("NewRegistry(%v) accepted", bad)
		}
	}
	if len(r2.Tools()) != 3 {
		t.Errorf("Tools() = %d", len(r2.Tools()))
	}
}
