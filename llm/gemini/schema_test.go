package gemini

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpenAPISchema(t *testing.T) {
	tests := []struct{ name, in, want string }{{
		name: "kept as it is",
		in:   `{"type":"object","title":"Args","description":"d","properties":{"n":{"type":"integer","minimum":1,"maximum":9,"format":"int32"},"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3}},"required":["n"]}`,
		want: `{"type":"object","title":"Args","description":"d","properties":{"n":{"type":"integer","minimum":1,"maximum":9,"format":"int32"},"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3}},"required":["n"]}`,
	}, {
		name: "keys the subset lacks are dropped",
		in:   `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"x","type":"object","additionalProperties":false,"properties":{"n":{"type":"integer","default":3,"examples":[1],"exclusiveMinimum":0,"multipleOf":2},"s":{"type":"array","uniqueItems":true,"items":{"type":"string"}}}}`,
		want: `{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"array","items":{"type":"string"}}}}`,
	}, {
		name: "nullable type list",
		in:   `{"type":["string","null"],"description":"d"}`,
		want: `{"type":"string","nullable":true,"description":"d"}`,
	}, {
		name: "a type list keeps its first type",
		in:   `{"type":["integer","string"]}`,
		want: `{"type":"integer"}`,
	}, {
		name: "anyOf with null",
		in:   `{"anyOf":[{"type":"string","format":"date-time"},{"type":"null"}],"default":null,"description":"when"}`,
		want: `{"type":"string","format":"date-time","nullable":true,"description":"when"}`,
	}, {
		name: "oneOf becomes anyOf, alone",
		in:   `{"oneOf":[{"type":"string"},{"type":"integer"}],"description":"id"}`,
		want: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
	}, {
		name: "const becomes an enum of one",
		in:   `{"const":"fast"}`,
		want: `{"type":"string","enum":["fast"]}`,
	}, {
		name: "enums of strings only",
		in:   `{"type":"object","properties":{"a":{"enum":["x","y"]},"b":{"type":"integer","enum":[1,2]}}}`,
		want: `{"type":"object","properties":{"a":{"type":"string","enum":["x","y"]},"b":{"type":"integer"}}}`,
	}, {
		name: "formats the subset has",
		in:   `{"type":"object","properties":{"a":{"type":"string","format":"uri"},"b":{"type":"string","format":"date-time"},"c":{"type":"number","format":"double"},"d":{"type":"string","format":"enum","enum":["x"]}}}`,
		want: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string","format":"date-time"},"c":{"type":"number","format":"double"},"d":{"type":"string","format":"enum","enum":["x"]}}}`,
	}, {
		name: "refs inlined",
		in:   `{"type":"object","$defs":{"Point":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"definitions":{"Unit":{"enum":["cm","in"]}},"properties":{"from":{"$ref":"#/$defs/Point","description":"start"},"unit":{"$ref":"#/definitions/Unit"}}}`,
		want: `{"type":"object","properties":{"from":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"description":"start"},"unit":{"type":"string","enum":["cm","in"]}}}`,
	}, {
		name: "a ref within itself or elsewhere becomes empty",
		in:   `{"type":"object","$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"}}}},"properties":{"head":{"$ref":"#/$defs/Node"},"other":{"$ref":"https://example.com/s.json"}}}`,
		want: `{"type":"object","properties":{"head":{"type":"object","properties":{"next":{}}},"other":{}}}`,
	}, {
		name: "required names only defined properties",
		in:   `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`,
		want: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
	}, {
		name: "empty properties dropped",
		in:   `{"type":"object","properties":{},"required":[]}`,
		want: `{"type":"object"}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openAPISchema(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			// Compare as JSON values: numbers as float64 on both sides.
			b, _ := json.Marshal(got)
			var gotJSON map[string]any
			json.Unmarshal(b, &gotJSON)
			if diff := cmp.Diff(want, gotJSON); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
		})
	}
	for _, in := range []string{`[]`, `null`, `{"type":`} {
		if _, err := openAPISchema(json.RawMessage(in)); err == nil {
			t.Errorf("openAPISchema(%s): no error", in)
		}
	}
}
