package tool

import (
	"reflect"
	"testing"
)

func TestSchemaOf(t *testing.T) {
	type out struct {
		Sentiment  string   `json:"sentiment" enum:"positive,negative" jsonschema:"the tone"`
		Confidence float64  `json:"confidence"`
		Tags       []string `json:"tags,omitempty"`
		Note       *string  `json:"note"`
	}
	tests := []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[out](), `{"type":"object","properties":{"sentiment":{"type":"string","description":"the tone","enum":["positive","negative"]},"confidence":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}},"note":{"type":["null","string"]}},"required":["sentiment","confidence"],"additionalProperties":false}`},
		{reflect.TypeFor[[]string](), `{"type":"array","items":{"type":"string"}}`},
		{reflect.TypeFor[string](), `{"type":"string"}`},
		{reflect.TypeFor[int](), `{"type":"integer"}`},
		{reflect.TypeFor[bool](), `{"type":"boolean"}`},
		{reflect.TypeFor[map[string]int](), `{"type":"object","additionalProperties":{"type":"integer"}}`},
		{reflect.TypeFor[struct{}](), `{"type":"object","properties":{},"additionalProperties":false}`},
	}
	for _, tt := range tests {
		got, err := SchemaOf(tt.t)
		if err != nil {
			t.Fatalf("%v: %v", tt.t, err)
		}
		if string(got) != tt.want {
			t.Errorf("SchemaOf(%v)\n got %s\nwant %s", tt.t, got, tt.want)
		}
	}
	if _, err := SchemaOf(reflect.TypeFor[chan int]()); err == nil {
		t.Error("SchemaOf(chan int): no error")
	}
}
