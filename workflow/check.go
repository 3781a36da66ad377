package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/schema"
)

// Problem is one thing wrong with a trace, found by Check: the step, the
// argument (a JSON Pointer into the step's Args; empty for the step as a
// whole) and what is wrong.
type Problem struct {
	// Step is the step's position from 0; -1 for the trace as a whole.
	Step    int    `json:"step"`
	StepID  string `json:"step_id,omitempty"`
	PTool   string `json:"ptool,omitempty"`
	Arg     string `json:"arg,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Step < 0 {
		b.WriteString("the trace")
	} else {
		b.WriteString(p.StepID)
		if p.PTool != "" {
			b.WriteString(" (" + p.PTool + ")")
		}
	}
	if p.Arg != "" {
		b.WriteString(", argument " + p.Arg)
	}
	return b.String() + ": " + p.Message
}

// ErrCheck is what a *CheckError is: a trace that does not pass Check.
var ErrCheck = errors.New("workflow: the trace does not pass the check")

// CheckError lists every problem Check found.
type CheckError struct {
	Problems []Problem
}

func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow: %d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteByte('s')
	}
	b.WriteString(" in the trace:")
	for _, p := range e.Problems {
		b.WriteString("\n- " + p.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrCheck) true.
func (e *CheckError) Is(target error) bool { return target == ErrCheck }

// Check returns every problem t has against reg, without calling anything:
// a step that names no registered ptool, arguments that are not an object,
// a malformed reference, a reference to a step that does not exist or does
// not come earlier, a path the referenced output's schema does not have, a
// referenced output whose type does not fit the argument's schema, literal
// arguments that do not fit the ptool's input schema (missing, unexpected,
// wrong type, out of range...), and two steps of one id. It returns nil for
// a trace that may run.
func Check(t *Trace, reg *ptool.Registry) []Problem {
	var probs []Problem
	if len(t.Steps) == 0 {
		return []Problem{{Step: -1, Message: "the trace has no steps"}}
	}
	seen := map[string]int{}
	for i := range t.Steps {
		st := &t.Steps[i]
		id := t.StepID(i)
		add := func(arg, format string, a ...any) {
			probs = append(probs, Problem{Step: i, StepID: id, PTool: st.PTool, Arg: arg, Message: fmt.Sprintf(format, a...)})
		}
		if j, ok := seen[id]; ok {
			add("", "step %d has the same id", j)
		}
		seen[id] = i

		var spec *ptool.Spec
		if st.PTool == "" {
			add("", "the step names no ptool")
		} else if f, ok := reg.Lookup(st.PTool); !ok {
			add("", "no ptool %q is registered%s", st.PTool, suggest(reg, st.PTool))
		} else {
			spec = f.Spec()
		}
		args, err := decodeArgs(st.Args)
		if err != nil {
			add("", "the arguments: %v", err)
			continue
		}
		var in map[string]any
		if spec != nil {
			in = schemaMap(spec.Input)
		}
		var refs []refAt
		walkRefs(args, "", func(r refAt) { refs = append(refs, r) }, func(at, msg string) {
			add(at, "%s", msg)
			refs = append(refs, refAt{At: at}) // its value is not a literal either
		})
		slices.SortFunc(refs, func(a, b refAt) int { return strings.Compare(a.At, b.At) })
		for _, r := range refs {
			if r.Step == "" {
				continue
			}
			j := t.Index(r.Step)
			switch {
			case j < 0:
				add(r.At, "refers to %s, but the trace has no such step", r.Step)
				continue
			case j == i:
				add(r.At, "refers to its own step")
				continue
			case j > i:
				add(r.At, "refers to %s, which comes later (step %d); a step can use only earlier steps' outputs", r.Step, j)
				continue
			}
			target, ok := reg.Lookup(t.Steps[j].PTool)
			if !ok {
				continue // that step's own problem says why
			}
			out := schemaMap(target.Spec().Output)
			got, err := schemaAt(out, r.Path)
			if err != nil {
				add(r.At, "%s's output (%s) has no %s: %v", r.Step, t.Steps[j].PTool, r.Path, err)
				continue
			}
			if in == nil {
				continue
			}
			want, err := schemaAt(in, r.At)
			if err != nil || want == nil || got == nil {
				continue // an undeclared argument is the literal check's to report
			}
			gt, wt := types(out, got), types(in, want)
			if gt != nil && wt != nil && !fits(gt, wt) {
				add(r.At, "%s is %s, but the argument takes %s", r, strings.Join(gt, " or "), strings.Join(wt, " or "))
			}
		}
		if spec == nil {
			continue
		}
		// the literal arguments: references stand in as null, and what is
		// said about them is left out
		lit, _ := substitute(args, func(Reference) (any, error) { return nil, nil })
		if lit == nil { // a malformed reference: validate the rest
			lit = dropBad(args)
		}
		raw, _ := json.Marshal(lit)
		s, err := schema.Compile(spec.Input)
		if err != nil {
			add("", "the ptool's input schema: %v", err)
			continue
		}
		var serr *schema.Error
		if err := s.Validate(raw); errors.As(err, &serr) {
			for _, n := range serr.Problems {
				if underRef(n.Pointer, refs) {
					continue
				}
				add(n.Pointer, "%s", n.Message)
			}
		} else if err != nil {
			add("", "%v", err)
		}
	}
	return probs
}

// dropBad replaces malformed references by null.
func dropBad(v any) any {
	if _, isRef, _ := asRef(v); isRef {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = dropBad(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropBad(e)
		}
		return out
	}
	return v
}

func underRef(ptr string, refs []refAt) bool {
	for _, r := range refs {
		if ptr == r.At || strings.HasPrefix(ptr, r.At+"/") {
			return true
		}
	}
	return false
}

func suggest(reg *ptool.Registry, name string) string {
	var names []string
	for _, s := range reg.List() {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return " (the registry is empty)"
	}
	return " (registered: " + strings.Join(names, ", ") + ")"
}

func schemaMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// deref follows a local "$ref" ("#/$defs/X") in s.
func deref(root, s map[string]any) map[string]any {
	for range 16 {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return s
		}
		v, err := pointerGet(any(root), strings.TrimPrefix(ref, "#"))
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return s
		}
		s = m
	}
	return s
}

// schemaAt returns the schema of the value at ptr in a value of schema
// root; nil (and no error) where the schema does not say; an error where
// it says there is no such value.
func schemaAt(root map[string]any, ptr string) (map[string]any, error) {
	s := root
	if s == nil {
		return nil, nil
	}
	for _, tok := range tokens(ptr) {
		s = deref(root, s)
		wt := types(root, s)
		if props, ok := s["properties"].(map[string]any); ok || slices.Contains(wt, "object") {
			if p, ok := props[tok].(map[string]any); ok {
				s = p
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case map[string]any:
				s = ap
				continue
			case bool:
				if !ap {
					return nil, fmt.Errorf("no property %q", tok)
				}
			}
			if props != nil && !slices.Contains(wt, "array") {
				return nil, fmt.Errorf("no property %q", tok)
			}
			return nil, nil
		}
		if wt != nil && slices.Contains(wt, "array") || s["items"] != nil {
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%q is not an index of an array", tok)
			}
			if pre, ok := s["prefixItems"].([]any); ok && n < len(pre) {
				s, _ = pre[n].(map[string]any)
				continue
			}
			it, _ := s["items"].(map[string]any)
			if it == nil {
				return nil, nil
			}
			s = it
			continue
		}
		if wt != nil {
			return nil, fmt.Errorf("%s has no %q", strings.Join(wt, " or "), tok)
		}
		return nil, nil
	}
	return deref(root, s), nil
}

// types returns the JSON types a schema allows, nil when it does not say.
func types(root, s map[string]any) []string {
	s = deref(root, s)
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if n, ok := x.(string); ok {
				out = append(out, n)
			}
		}
		return out
	}
	if c, ok := s["const"]; ok {
		return []string{jsonType(c)}
	}
	if e, ok := s["enum"].([]any); ok {
		var out []string
		for _, v := range e {
			if t := jsonType(v); !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		return out
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, ok := s[key].([]any)
		if !ok {
			continue
		}
		var out []string
		for _, a := range alts {
			m, _ := a.(map[string]any)
			ts := types(root, m)
			if ts == nil {
				return nil
			}
			for _, t := range ts {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
		return out
	}
	if _, ok := s["properties"]; ok {
		return []string{"object"}
	}
	if _, ok := s["items"]; ok {
		return []string{"array"}
	}
	return nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

// fits reports whether some type a value may have is one the argument
// takes: a mismatch is reported only when none could fit.
func fits(got, want []string) bool {
	for _, g := range got {
		for _, w := range want {
			if g == w || g == "integer" && w == "number" || g == "number" && w == "integer" {
				return true
			}
		}
	}
	return false
}
