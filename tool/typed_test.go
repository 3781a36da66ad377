package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/schema"
)

type place struct {
	City    string `json:"city" jsonschema:"city name, e.g. Paris"`
	Country string `json:"country,omitempty" jsonschema:"ISO 3166 country code"`
}

type forecastArgs struct {
	Place   place    `json:"place"`
	Days    int      `json:"days" jsonschema:"number of days" enum:"1,3,7"`
	MinTemp float64  `json:"min_temp,omitempty"`
	Hourly  bool     `json:"hourly,omitzero"`
	Fields  []string `json:"fields" enum:"temperature, wind, rain" jsonschema:"what to report"`
	Unit    *string  `json:"unit" enum:"celsius,fahrenheit"`
	Limit   *int     `json:"limit,omitempty"`
	Note    string
	Skipped string `json:"-"`
	//lint:ignore U1000 an unexported field is left out of the schema
	internal int
}

const forecastSchema = `{"type":"object","properties":{` +
	`"place":{"type":"object","properties":{` +
	`"city":{"type":"string","description":"city name, e.g. Paris"},` +
	`"country":{"type":"string","description":"ISO 3166 country code"}},` +
	`"required":["city"],"additionalProperties":false},` +
	`"days":{"type":"integer","description":"number of days","enum":[1,3,7]},` +
	`"min_temp":{"type":"number"},` +
	`"hourly":{"type":"boolean"},` +
	`"fields":{"type":"array","items":{"type":"string","enum":["temperature","wind","rain"]},"description":"what to report"},` +
	`"unit":{"type":["null","string"],"enum":["celsius","fahrenheit",null]},` +
	`"limit":{"type":["null","integer"]},` +
	`"Note":{"type":"string"}},` +
	`"required":["place","days","fields","Note"],"additionalProperties":false}`

// echo returns a tool that returns its decoded arguments as JSON and counts
// its calls.
func echo[In any](calls *atomic.Int32) ptk.Tool {
	return New("echo", "Echoes its arguments.", func(_ context.Context, in In) (In, error) {
		calls.Add(1)
		return in, nil
	})
}

func TestNewSchema(t *testing.T) {
	var calls atomic.Int32
	for name, tl := range map[string]ptk.Tool{
		"struct":  echo[forecastArgs](&calls),
		"pointer": echo[*forecastArgs](&calls),
	} {
		if got := string(tl.Info().Parameters); got != forecastSchema {
			t.Errorf("%s: parameters =\n%s\nwant\n%s", name, got, forecastSchema)
		}
	}
}

// TestNewSchemaProtocol checks that ptk's own protocol accepts the schema and
// the calls it describes.
func TestNewSchemaProtocol(t *testing.T) {
	var calls atomic.Int32
	tl := echo[forecastArgs](&calls)
	p, err := protocol.NewParser([]ptk.ToolInfo{tl.Info()})
	if err != nil {
		t.Fatal(err)
	}
	args := `{"place":{"city":"Oslo"},"days":3,"fields":["wind"],"unit":null,"Note":""}`
	a, diags := p.Check(ptk.Call{ID: "1", Tool: "echo", Args: json.RawMessage(args)})
	if a.Err != nil || len(diags) != 0 {
		t.Fatalf("Check = %v, %v", a.Err, diags)
	}
	res, err := tl.Run(context.Background(), a.Call.Args)
	if err != nil || res.IsError {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

func TestNewRequired(t *testing.T) {
	type args struct {
		Plain     string            `json:"plain"`
		NoTag     int               //
		OmitEmpty string            `json:"omit_empty,omitempty"`
		OmitZero  int               `json:"omit_zero,omitzero"`
		Pointer   *string           `json:"pointer"`
		Slice     []int             `json:"slice"`
		Map       map[string]string `json:"map"`
		Nested    struct {
			Inner *bool `json:"inner"`
			Must  bool  `json:"must"`
		} `json:"nested"`
	}
	var calls atomic.Int32
	tl := echo[args](&calls)
	var s struct {
		Required   []string
		Properties map[string]struct{ Required []string }
	}
	if err := json.Unmarshal(tl.Info().Parameters, &s); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(s.Required, ","), "plain,NoTag,slice,map,nested"; got != want {
		t.Errorf("required = %s, want %s", got, want)
	}
	if got, want := strings.Join(s.Properties["nested"].Required, ","), "must"; got != want {
		t.Errorf("nested required = %s, want %s", got, want)
	}

	for _, tc := range []struct {
		args, want string // want: "" for success, else a part of the error result
	}{
		{`{"plain":"","NoTag":0,"slice":[],"map":{},"nested":{"must":false}}`, ""},
		{`{"plain":"","NoTag":0,"slice":[],"map":{},"nested":{"must":false},"pointer":null,"omit_empty":"x"}`, ""},
		{`{"plain":"","NoTag":0,"slice":[],"map":{},"nested":{"must":false,"inner":null}}`, ""},
		{`{"plain":"","NoTag":0,"slice":null,"map":{},"nested":{"must":false}}`, `at /slice: expected array, got null`},
		{`{"plain":"","NoTag":0,"slice":[],"map":{},"nested":{}}`, `missing required argument "must" (at /nested/must)`},
		{`{"plain":"","slice":[],"map":{},"nested":{"must":false}}`, `missing required argument "NoTag" (at /NoTag)`},
	} {
		res, err := tl.Run(context.Background(), json.RawMessage(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if tc.want == "" && res.IsError || tc.want != "" && (!res.IsError || !strings.Contains(res.Content, tc.want)) {
			t.Errorf("%s: result %+v, want %q", tc.args, res, tc.want)
		}
	}
}

func TestNewInvalidArguments(t *testing.T) {
	var calls atomic.Int32
	tl := echo[forecastArgs](&calls)
	for _, tc := range []struct{ name, args, want string }{
		{"missing required", `{"days":1,"fields":[],"Note":""}`,
			`invalid arguments: missing required argument "place" (at /place)`},
		{"missing nested", `{"place":{},"days":1,"fields":[],"Note":""}`,
			`invalid arguments: missing required argument "city" (at /place/city)`},
		{"wrong type", `{"place":{"city":"Oslo"},"days":"3","fields":[],"Note":""}`,
			`invalid arguments at /days: expected integer, got string`},
		{"not an integer", `{"place":{"city":"Oslo"},"days":1.5,"fields":[],"Note":""}`,
			`invalid arguments at /days: expected integer, got number`},
		{"nested wrong type", `{"place":{"city":7},"days":1,"fields":[],"Note":""}`,
			`invalid arguments at /place/city: expected string, got number`},
		{"enum", `{"place":{"city":"Oslo"},"days":2,"fields":[],"Note":""}`,
			`invalid arguments at /days: 2 is not one of 1, 3, 7`},
		{"enum element", `{"place":{"city":"Oslo"},"days":1,"fields":["wind","snow"],"Note":""}`,
			`invalid arguments at /fields/1: "snow" is not one of "temperature", "wind", "rain"`},
		{"enum pointer", `{"place":{"city":"Oslo"},"days":1,"fields":[],"unit":"kelvin","Note":""}`,
			`invalid arguments at /unit: "kelvin" is not one of "celsius", "fahrenheit", null`},
		{"unknown field", `{"place":{"city":"Oslo"},"days":1,"fields":[],"Note":"","color":"red"}`,
			`invalid arguments: unexpected arguments "color"`},
		{"unknown nested field", `{"place":{"city":"Oslo","zip":"0150"},"days":1,"fields":[],"Note":""}`,
			`invalid arguments at /place: unexpected arguments "zip"`},
		{"case differs", `{"place":{"city":"Oslo"},"days":1,"fields":[],"note":""}`,
			`invalid arguments: missing required argument "Note" (at /Note); unexpected arguments "note"`},
		{"not an object", `["Oslo"]`,
			`invalid arguments: expected object, got array`},
		{"not JSON", `{"place":`,
			`invalid arguments: the arguments are not JSON: unexpected end of JSON input`},
		{"empty", ``,
			`invalid arguments: missing required arguments "place", "days", "fields", "Note"`},
		{"overflow", `{"place":{"city":"Oslo"},"days":1,"fields":[],"Note":"","limit":1e30}`,
			`invalid arguments: json: cannot unmarshal number 1e30 into Go struct field forecastArgs.limit of type int`},
	} {
		res, err := tl.Run(context.Background(), json.RawMessage(tc.args))
		if err != nil {
			t.Errorf("%s: error %v", tc.name, err)
		}
		if !res.IsError || res.Content != tc.want {
			t.Errorf("%s: result %+v\nwant content %s", tc.name, res, tc.want)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("fn was called %d times", n)
	}
}

func TestNewEmptyArguments(t *testing.T) {
	type opt struct {
		Query *string `json:"query"`
		Limit int     `json:"limit,omitempty"`
	}
	var calls atomic.Int32
	tl := echo[opt](&calls)
	for _, args := range []string{"", " ", "null", "{}"} {
		res, err := tl.Run(context.Background(), json.RawMessage(args))
		if err != nil || res.IsError || res.Content != "{\n  \"query\": null\n}" {
			t.Errorf("%q: %+v, %v", args, res, err)
		}
	}
	res, err := tl.Run(context.Background(), nil)
	if err != nil || res.IsError {
		t.Errorf("nil: %+v, %v", res, err)
	}
}

func TestNewOutput(t *testing.T) {
	type in struct {
		S string `json:"s"`
	}
	type out struct {
		Text  string   `json:"text"`
		Items []string `json:"items"`
	}
	ctx := context.Background()
	args := json.RawMessage(`{"s":"a<b & c"}`)
	for _, tc := range []struct {
		name string
		tool ptk.Tool
		want ptk.Result
	}{
		{"string", New("t", "", func(_ context.Context, in in) (string, error) { return in.S, nil }),
			ptk.Result{Content: "a<b & c"}},
		{"bytes", New("t", "", func(_ context.Context, in in) ([]byte, error) { return []byte(in.S), nil }),
			ptk.Result{Content: "a<b & c"}},
		{"struct", New("t", "", func(_ context.Context, in in) (out, error) { return out{in.S, []string{"x"}}, nil }),
			ptk.Result{Content: "{\n  \"text\": \"a<b & c\",\n  \"items\": [\n    \"x\"\n  ]\n}"}},
		{"map", New("t", "", func(_ context.Context, in in) (map[string]int, error) { return map[string]int{"b": 2, "a": 1}, nil }),
			ptk.Result{Content: "{\n  \"a\": 1,\n  \"b\": 2\n}"}},
		{"number", New("t", "", func(_ context.Context, in in) (float64, error) { return 2.5, nil }),
			ptk.Result{Content: "2.5"}},
		{"any string", New("t", "", func(_ context.Context, in in) (any, error) { return in.S, nil }),
			ptk.Result{Content: "a<b & c"}},
		{"result", New("t", "", func(_ context.Context, in in) (ptk.Result, error) {
			return ptk.Result{Content: "no such city: " + in.S, IsError: true}, nil
		}), ptk.Result{Content: "no such city: a<b & c", IsError: true}},
	} {
		res, err := tc.tool.Run(ctx, args)
		if err != nil || res != tc.want {
			t.Errorf("%s: %+v, %v\nwant %+v", tc.name, res, err, tc.want)
		}
	}

	bad := New("t", "", func(context.Context, in) (func(), error) { return func() {}, nil })
	if _, err := bad.Run(ctx, args); err == nil || !strings.Contains(err.Error(), "encoding the result") {
		t.Errorf("unencodable result: %v", err)
	}
}

func TestNewError(t *testing.T) {
	type in struct{}
	errDown := errors.New("service down")
	for _, wrap := range []bool{false, true} {
		tl := New("t", "", func(context.Context, in) (string, error) {
			if wrap {
				return "ignored", ptk.Retryable(errDown)
			}
			return "ignored", errDown
		})
		res, err := tl.Run(context.Background(), nil)
		if !errors.Is(err, errDown) || ptk.IsRetryable(err) != wrap || res != (ptk.Result{}) {
			t.Errorf("wrap=%v: %+v, %v", wrap, res, err)
		}
	}
}

func TestNewContextAndPointerIn(t *testing.T) {
	type key struct{}
	type in struct {
		N int `json:"n"`
	}
	tl := New("t", "", func(ctx context.Context, in *in) (string, error) {
		return fmt.Sprint(ctx.Value(key{}), in.N), nil
	})
	ctx := context.WithValue(context.Background(), key{}, "v")
	res, err := tl.Run(ctx, json.RawMessage(`{"n":4}`))
	if err != nil || res.Content != "v4" {
		t.Errorf("%+v, %v", res, err)
	}
}

func TestNewOptions(t *testing.T) {
	type in struct{}
	fn := func(context.Context, in) (string, error) { return "", nil }
	for _, tc := range []struct {
		opts                []Option
		readOnly, cacheable bool
	}{
		{nil, false, false},
		{[]Option{ReadOnly()}, true, false},
		{[]Option{Cacheable()}, false, true},
		{[]Option{ReadOnly(), Cacheable()}, true, true},
	} {
		info := New("lookup", "Looks up.", fn, tc.opts...).Info()
		if info.Name != "lookup" || info.Description != "Looks up." || info.ReadOnly != tc.readOnly || info.Cacheable != tc.cacheable {
			t.Errorf("%d options: %+v", len(tc.opts), info)
		}
		if got := string(info.Parameters); got != `{"type":"object","properties":{},"additionalProperties":false}` {
			t.Errorf("empty struct: parameters %s", got)
		}
	}
}

func TestNewPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func()
		want string
	}{
		{"not a struct", func() {
			New("t", "", func(context.Context, string) (string, error) { return "", nil })
		}, `tool.New("t"): the arguments type string is not a struct`},
		{"nil fn", func() {
			New[struct{}, string]("t", "", nil)
		}, `tool.New("t"): nil function`},
		{"channel", func() {
			New("t", "", func(context.Context, struct{ C chan int }) (string, error) { return "", nil })
		}, "type chan int is unsupported"},
		{"bad enum", func() {
			New("t", "", func(context.Context, struct {
				N int `enum:"1,two"`
			}) (string, error) {
				return "", nil
			})
		}, `enum tag: "two" is not a int`},
		{"enum on struct", func() {
			New("t", "", func(context.Context, struct {
				P place `enum:"x"`
			}) (string, error) {
				return "", nil
			})
		}, "enum tag on a field of type tool.place"},
		{"reserved description", func() {
			New("t", "", func(context.Context, struct {
				S string `jsonschema:"format=date"`
			}) (string, error) {
				return "", nil
			})
		}, "tag must not begin with 'WORD='"},
	} {
		func() {
			defer func() {
				p := recover()
				if msg, _ := p.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("%s: panic %v, want %q", tc.name, p, tc.want)
				}
			}()
			tc.make()
		}()
	}
}

func TestNewConcurrent(t *testing.T) {
	type in struct {
		N    int    `json:"n"`
		Kind string `json:"kind" enum:"even,odd"`
	}
	tl := New("t", "", func(_ context.Context, in in) (int, error) { return in.N * 2, nil }, ReadOnly())
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			kind := []string{"even", "odd"}[i%2]
			if i%3 == 0 {
				kind = "none"
			}
			res, err := tl.Run(context.Background(), json.RawMessage(fmt.Sprintf(`{"n":%d,"kind":%q}`, i, kind)))
			switch {
			case err != nil:
				t.Errorf("%d: %v", i, err)
			case kind == "none" && !strings.HasPrefix(res.Content, `invalid arguments at /kind: "none" is not one of`):
				t.Errorf("%d: %+v", i, res)
			case kind != "none" && res.Content != fmt.Sprint(2*i):
				t.Errorf("%d: %+v", i, res)
			}
		})
	}
	wg.Wait()
}

// TestNewValidatesOnce: on the agent's path a call is checked by the parser
// and then run; the parser and the tool hold the same compiled schema (the
// tool's parameters are the bytes it compiled), and the parser records the
// call it found valid, so the tool's validation of those bytes is a
// look-up. Arguments the parser never saw are validated in full.
func TestNewValidatesOnce(t *testing.T) {
	type args struct {
		N int `json:"n"`
	}
	tl := New("double", "", func(_ context.Context, in args) (int, error) { return 2 * in.N, nil })
	_, checker, err := schemaFor(reflect.TypeFor[args]())
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := schema.Compile(tl.Info().Parameters); s != checker {
		t.Fatal("the parser would compile another schema than the tool's")
	}
	p, err := protocol.NewParser([]ptk.ToolInfo{tl.Info()})
	if err != nil {
		t.Fatal(err)
	}
	call := p.Parse(`<PTK_CALL>{"tool": "double", "args": {"n": "21"}}</PTK_CALL>`).Calls[0]
	if string(call.Args) != `{"n":21}` {
		t.Fatalf("args %s", call.Args)
	}
	if res, err := tl.Run(context.Background(), call.Args); err != nil || res.IsError || res.Content != "42" {
		t.Errorf("run: %+v, %v", res, err)
	}
	if res, _ := tl.Run(context.Background(), json.RawMessage(`{"n": "21"}`)); !res.IsError {
		t.Errorf("arguments the parser never saw are not validated: %+v", res)
	}
}
