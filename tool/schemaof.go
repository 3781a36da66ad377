package tool

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaOf returns, as compact JSON, the JSON Schema that [New] derives for
// values of type t, by the same rules (json names, `jsonschema:"..."`
// descriptions, `enum:"a,b"` tags, required unless omitempty, omitzero or a
// pointer, null only for pointers). Unlike New's arguments, t need not be a
// struct: a slice, a map with string keys, a string, a number or a bool has
// a schema too. It is what package ptool derives a typed function's input
// and output schemas with.
func SchemaOf(t reflect.Type) (json.RawMessage, error) {
	if t == nil {
		return nil, fmt.Errorf("tool.SchemaOf: nil type")
	}
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := adjustSchema(s, t, nullable); err != nil {
		return nil, err
	}
	if t.Kind() == reflect.Struct && s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return json.Marshal(s)
}
