// Package tool holds what ptk needs around tools: [New], which makes any Go
// function a tool with a JSON Schema derived from its argument struct; the
// [Registry] that names tools; [Middleware] that wraps them ([Timeout],
// [Limit]); and approval: the [Approver] the agent asks before a tool that
// is not read-only runs, and the [Policy] that allows or denies calls by
// tool and by the command or path a tool declares its call acts on
// ([WithSubject], [SubjectOf]). Tools themselves are [ptk.Tool] values; the
// built-in ones live in tools/fs and tools/shell.
package tool

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ptkit/ptk"
)

// Registry is a set of tools by name. It does not change after it is made
// (With returns a new Registry), so one Registry may be shared by any number
// of goroutines.
type Registry struct {
	byName map[string]ptk.Tool
	order  []string
}

// NewRegistry returns a registry of tools, in the order given. It fails on a
// tool without a name and on two tools with the same name.
func NewRegistry(tools ...ptk.Tool) (*Registry, error) {
	return (&Registry{}).With(tools...)
}

// With returns a new registry with tools added after the existing ones.
func (r *Registry) With(tools ...ptk.Tool) (*Registry, error) {
	n := &Registry{byName: make(map[string]ptk.Tool, len(r.order)+len(tools)), order: slices.Clone(r.order)}
	for name, t := range r.byName {
		n.byName[name] = t
	}
	for _, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("tool registry: nil tool")
		}
		name := t.Info().Name
		if name == "" {
			return nil, fmt.Errorf("tool registry: a tool has no name")
		}
		if _, dup := n.byName[name]; dup {
			return nil, fmt.Errorf("tool registry: two tools are named %q", name)
		}
		n.byName[name] = t
		n.order = append(n.order, name)
	}
	return n, nil
}

// Get returns the tool with the given name.
func (r *Registry) Get(name string) (ptk.Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Names returns the names of the tools, in order.
func (r *Registry) Names() []string { return slices.Clone(r.order) }

// Tools returns the tools, in order.
func (r *Registry) Tools() []ptk.Tool {
	out := make([]ptk.Tool, len(r.order))
	for i, name := range r.order {
		out[i] = r.byName[name]
	}
	return out
}

// Select returns the named tools, in the order named. An unknown name is an
// error that lists the tools there are.
func (r *Registry) Select(names ...string) ([]ptk.Tool, error) {
	out := make([]ptk.Tool, 0, len(names))
	for _, name := range names {
		t, ok := r.byName[name]
		if !ok {
			return nil, fmt.Errorf("unknown tool %q (the tools are: %s)", name, strings.Join(r.order, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}
