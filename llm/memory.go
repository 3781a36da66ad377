package llm

import (
	"reflect"
	"sync"
	"time"
)

// NativeTools remembers which models rejected native tool definitions
// (ErrToolsUnsupported), so that a caller in auto mode teaches them the text
// protocol from the first call next time instead of being refused again.
//
// The caller owns it: the CLI, the gateway and a library user each hold one
// (or share one), and nothing is remembered process-wide behind their back.
// Its zero value remembers for ever; TTL bounds how long, for a long-lived
// server whose upstream may be upgraded while it runs. Safe for concurrent
// use.
type NativeTools struct {
	// TTL, when above zero, is how long a rejection is remembered.
	TTL time.Duration

	m sync.Map // nativeKey → time.Time of the rejection
}

type nativeKey struct {
	model any
	name  string
}

// keyOf identifies a model: by the base URL of its server (through
// wrappers) and the model's name there, or by its identity when it has no
// base URL; ok is false when it cannot be told apart from others.
func keyOf(m Model, name string) (k nativeKey, ok bool) {
	if base := BaseURLOf(m); base != "" {
		return nativeKey{base, name}, true
	}
	if m == nil {
		return k, false
	}
	if t := reflect.TypeOf(m); !t.Comparable() {
		return k, false
	}
	return nativeKey{m, name}, true
}

// Reject remembers that m, asked for the model name, rejected native tools.
// A nil memory remembers nothing.
func (n *NativeTools) Reject(m Model, name string) {
	if n == nil {
		return
	}
	if k, ok := keyOf(m, name); ok {
		n.m.Store(k, time.Now())
	}
}

// Rejected reports whether m, for the model name, rejected native tools
// (within TTL). A model that says it takes none (ToolSupporter) counts as
// rejecting them.
func (n *NativeTools) Rejected(m Model, name string) bool {
	if t, ok := As[ToolSupporter](m); ok && !t.SupportsNativeTools() {
		return true
	}
	if n == nil {
		return false
	}
	k, ok := keyOf(m, name)
	if !ok {
		return false
	}
	v, ok := n.m.Load(k)
	if !ok {
		return false
	}
	if n.TTL > 0 && time.Since(v.(time.Time)) >= n.TTL {
		n.m.CompareAndDelete(k, v)
		return false
	}
	return true
}
