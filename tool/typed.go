package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/schema"
)

// Option configures a tool made by [New].
type Option func(*typedOptions)

type typedOptions struct {
	readOnly, cacheable bool
	subject             func(json.RawMessage) Subject
}

// ReadOnly marks the tool as changing nothing outside itself
// ([ptk.ToolInfo.ReadOnly]), so it runs without approval.
func ReadOnly() Option { return func(o *typedOptions) { o.readOnly = true } }

// Cacheable marks the tool's results as depending only on its arguments for
// the length of a run ([ptk.ToolInfo.Cacheable]). Only read-only tools
// should say so.
func Cacheable() Option { return func(o *typedOptions) { o.cacheable = true } }

// WithSubject declares what a call will act on (a command, a path), for
// approvers and policies: the tool then implements [Subjecter], with f given
// the call's arguments decoded into In (the zero Subject when they cannot
// be decoded).
func WithSubject[In any](f func(In) Subject) Option {
	return func(o *typedOptions) {
		o.subject = func(args json.RawMessage) Subject {
			var in In
			if json.Unmarshal(args, &in) != nil {
				return Subject{}
			}
			return f(in)
		}
	}
}

// New returns a tool that decodes its arguments into In, calls fn, and
// returns Out as the result.
//
// In must be a struct or a pointer to one. The tool's parameters are the JSON
// Schema that github.com/google/jsonschema-go derives from In, with the
// properties in field order:
//
//   - a property is named by the field's json tag, as encoding/json names it;
//   - a field is optional when its json tag says omitempty or omitzero, or
//     its type is a pointer; every other field is required, even when its
//     zero value would do;
//   - JSON null is accepted for pointers only, and means nil;
//   - the `jsonschema:"..."` tag is the property's description (it must not
//     begin with "WORD=", which jsonschema-go reserves);
//   - the `enum:"a,b,c"` tag lists the allowed values, separated by commas,
//     for a field of string, number or boolean type, or for the elements of
//     a slice or array of them;
//   - no property outside the struct's fields is allowed.
//
// New panics if In is not a struct, if a field's type has no JSON Schema
// (channels, functions, maps with non-string keys, cyclic types), if a tag
// is malformed, or if fn is nil: like [regexp.MustCompile], these are
// mistakes in the program, found the first time it runs.
//
// Arguments are checked against the schema before fn runs; empty or null
// arguments count as {}. Arguments that do not fit (a missing required
// property, a wrong type, a value outside the enum, an unknown property)
// give a result marked IsError that says where and what was expected, with
// a nil error, so the model can correct the call; fn is not called.
//
// The result's content depends on Out: a string is the content as it is,
// a []byte is the content as text, a [ptk.Result] is returned as it is (so
// fn decides IsError and can report a failure to the model without an
// error), and anything else is encoded as JSON indented by two spaces,
// without HTML escaping.
//
// An error from fn is returned as it is: the agent shows it to the model as
// a failed call, and makes the call again if the error is marked with
// [ptk.Retryable]. A panic in fn is not recovered here; the agent recovers
// it.
//
// The tool holds no state of its own, so it may run concurrently if fn may.
func New[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...Option) ptk.Tool {
	if fn == nil {
		panic(fmt.Sprintf("tool.New(%q): nil function", name))
	}
	var o typedOptions
	for _, opt := range opts {
		opt(&o)
	}
	params, checker, err := schemaFor(reflect.TypeFor[In]())
	if err != nil {
		panic(fmt.Sprintf("tool.New(%q): %v", name, err))
	}
	info := ptk.ToolInfo{
		Name:        name,
		Description: description,
		Parameters:  params,
		ReadOnly:    o.readOnly,
		Cacheable:   o.cacheable,
	}
	run := func(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
		if s := bytes.TrimSpace(args); len(s) == 0 || string(s) == "null" {
			args = json.RawMessage("{}")
		}
		if !json.Valid(args) {
			var v any
			err := json.Unmarshal(args, &v)
			return invalidArgs("", "the arguments are not JSON: "+err.Error()), nil
		}
		if err := checker.ValidateOnce(args); err != nil {
			return invalidArgs(validationMessage(err)), nil
		}
		var in In
		d := json.NewDecoder(bytes.NewReader(args))
		d.DisallowUnknownFields()
		if err := d.Decode(&in); err != nil {
			return invalidArgs("", err.Error()), nil
		}
		out, err := fn(ctx, in)
		if err != nil {
			return ptk.Result{}, err
		}
		return encodeOut(out)
	}
	if o.subject != nil {
		return subjectTool{Tool: ptk.NewTool(info, run), subject: o.subject}
	}
	return ptk.NewTool(info, run)
}

// subjectTool is a tool that declares its calls' subject.
type subjectTool struct {
	ptk.Tool
	subject func(json.RawMessage) Subject
}

func (t subjectTool) Subject(args json.RawMessage) Subject { return t.subject(args) }

// invalidArgs is the result for arguments that do not fit, at the JSON
// pointer at (empty if unknown).
func invalidArgs(at, msg string) ptk.Result {
	if at != "" {
		at = " at " + at
	}
	return ptk.Result{Content: "invalid arguments" + at + ": " + msg, IsError: true}
}

// encodeOut turns fn's result into a ptk.Result.
func encodeOut(out any) (ptk.Result, error) {
	switch v := out.(type) {
	case ptk.Result:
		return v, nil
	case string:
		return ptk.Result{Content: v}, nil
	case []byte:
		return ptk.Result{Content: string(v)}, nil
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(out); err != nil {
		return ptk.Result{}, fmt.Errorf("encoding the result: %w", err)
	}
	return ptk.Result{Content: strings.TrimSuffix(b.String(), "\n")}, nil
}

// schemaFor returns the parameters of a tool whose arguments decode into t,
// as compact JSON and compiled for validation by ptk's schema layer, the
// same validator the parser checks calls with (jsonschema-go only derives
// the schema from the type).
func schemaFor(t reflect.Type) (json.RawMessage, *schema.Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("the arguments type %s is not a struct", t)
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := adjustSchema(s, t, false); err != nil {
		return nil, nil, err
	}
	if s.Properties == nil { // no fields: say so, as ptk.ToolInfo asks
		s.Properties = map[string]*jsonschema.Schema{}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	checker, err := schema.Compile(raw)
	if err != nil {
		return nil, nil, err
	}
	return raw, checker, nil
}

// adjustSchema walks s, the schema jsonschema-go derived for t, to apply
// what New adds to it: pointer fields are optional, only pointers accept
// null (jsonschema-go also lets every slice be null), and enum tags.
func adjustSchema(s *jsonschema.Schema, t reflect.Type, nullable bool) error {
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if !nullable && slices.Equal(s.Types, []string{"null", "array"}) {
			s.Type, s.Types = "array", nil
		}
		return adjustSchema(s.Items, t.Elem(), false)
	case reflect.Map:
		return adjustSchema(s.AdditionalProperties, t.Elem(), false)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name := jsonName(f)
			p := s.Properties[name]
			if f.Anonymous || name == "" || p == nil {
				continue
			}
			if f.Type.Kind() == reflect.Pointer {
				s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
			}
			if err := adjustSchema(p, f.Type, false); err != nil {
				return err
			}
			if tag, ok := f.Tag.Lookup("enum"); ok {
				if err := setEnum(p, f.Type, tag); err != nil {
					return fmt.Errorf("field %s.%s: %w", t, f.Name, err)
				}
			}
		}
	}
	return nil
}

// jsonName returns the name encoding/json gives field f, or "" if it has none.
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name
	}
	return f.Name
}

// setEnum sets the enum of s, the schema of a field of type t, or of its
// elements if t is a slice or an array, from the values listed in tag.
func setEnum(s *jsonschema.Schema, t reflect.Type, tag string) error {
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	if k := t.Kind(); k == reflect.Slice || k == reflect.Array {
		s, t, nullable = s.Items, t.Elem(), false
		for t.Kind() == reflect.Pointer {
			t, nullable = t.Elem(), true
		}
	}
	var vals []any
	for v := range strings.SplitSeq(tag, ",") {
		v = strings.TrimSpace(v)
		var x any
		var err error
		switch t.Kind() {
		case reflect.String:
			x = v
		case reflect.Bool:
			x, err = strconv.ParseBool(v)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			x, err = strconv.ParseInt(v, 10, 64)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			x, err = strconv.ParseUint(v, 10, 64)
		case reflect.Float32, reflect.Float64:
			x, err = strconv.ParseFloat(v, 64)
		default:
			return fmt.Errorf("enum tag on a field of type %s, not a string, number or boolean", t)
		}
		if err != nil {
			return fmt.Errorf("enum tag: %q is not a %s", v, t)
		}
		vals = append(vals, x)
	}
	if nullable {
		vals = append(vals, nil)
	}
	s.Enum = vals
	return nil
}

// validationMessage says where the arguments do not fit the schema and
// what was expected, from the problems ptk's schema layer describes: with
// one problem at an argument, "at" is its JSON Pointer; otherwise each
// problem carries its own.
func validationMessage(err error) (at, what string) {
	var e *schema.Error
	if !errors.As(err, &e) || len(e.Problems) == 0 {
		return "", err.Error()
	}
	if p := e.Problems[0]; len(e.Problems) == 1 && p.Pointer != "" && strings.HasPrefix(p.Message, p.Pointer+": ") {
		return p.Pointer, strings.TrimPrefix(p.Message, p.Pointer+": ")
	}
	msgs := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		msg := strings.TrimPrefix(p.Message, "arguments: ")
		if !slices.Contains(msgs, msg) {
			msgs = append(msgs, msg)
		}
	}
	return "", strings.Join(msgs, "; ")
}
