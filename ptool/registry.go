package ptool

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ptkit/ptk"
)

// Registry holds ptools by name, for what chooses among them: a program
// generator, a ReAct agent, a CLI. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	funcs map[string]Func
}

// DefaultRegistry is the registry Register adds to, as
// http.DefaultServeMux is the one http.Handle adds to. Programs that want
// their own make one with NewRegistry.
var DefaultRegistry = NewRegistry()

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{funcs: map[string]Func{}} }

// Register adds f to DefaultRegistry.
func Register(f Func) error { return DefaultRegistry.Register(f) }

// Register adds f under its name; a name already taken is an error.
func (r *Registry) Register(f Func) error {
	name := f.Spec().Name
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.funcs[name]; ok {
		return fmt.Errorf("ptool: %q is already registered", name)
	}
	r.funcs[name] = f
	return nil
}

// Lookup returns the ptool called name.
func (r *Registry) Lookup(name string) (Func, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.funcs[name]
	return f, ok
}

// List returns the registered ptools' specs, sorted by name.
func (r *Registry) List() []*Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	specs := make([]*Spec, 0, len(r.funcs))
	for _, name := range slices.Sorted(maps.Keys(r.funcs)) {
		specs = append(specs, r.funcs[name].Spec())
	}
	return specs
}

// Tools returns the registered ptools as tools, sorted by name, for an
// agent's registry.
func (r *Registry) Tools() []ptk.Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	tools := make([]ptk.Tool, 0, len(r.funcs))
	for _, name := range slices.Sorted(maps.Keys(r.funcs)) {
		tools = append(tools, r.funcs[name])
	}
	return tools
}

// Describe lists the registered ptools for a model that chooses among them:
// each signature, then its doc indented, sorted by name.
func (r *Registry) Describe() string {
	var b strings.Builder
	for _, s := range r.List() {
		b.WriteString("- ")
		b.WriteString(s.Signature())
		b.WriteByte('\n')
		for line := range strings.SplitSeq(s.Doc, "\n") {
			b.WriteString("    ")
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
