package protocol

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/ptkit/ptk/lenient"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
)

// The Berkeley Function Calling Leaderboard data (../shared/corpus/bfcl):
// real tool definitions, in BFCL's JSON-Schema-like dialect, with the calls
// that answer real questions. Each answer is written as a model would write
// it in several formats, then read back with the entry's tools declared.

const bfclDir = "../../shared/corpus/bfcl/v4"

var bfclCategories = []string{
	"simple_python", "multiple", "parallel", "parallel_multiple",
	"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
}

type bfclEntry struct {
	ID    string
	Tools []ptk.ToolInfo
	Calls []bfclCall
}

type bfclCall struct {
	Name string
	Args orderedArgs
}

// orderedArgs keeps argument order, so every format writes them alike.
type orderedArgs struct {
	keys []string
	vals []any
}

func loadBFCL(t testing.TB) []bfclEntry {
	t.Helper()
	if _, err := os.Stat(bfclDir); err != nil {
		t.Skipf("BFCL data not found: %v", err)
	}
	var out []bfclEntry
	for _, cat := range bfclCategories {
		questions := readJSONL(t, filepath.Join(bfclDir, "BFCL_v4_"+cat+".json"))
		answers := readJSONL(t, filepath.Join(bfclDir, "possible_answer", "BFCL_v4_"+cat+".json"))
		byID := map[string]json.RawMessage{}
		for _, a := range answers {
			var x struct {
				ID          string          `json:"id"`
				GroundTruth json.RawMessage `json:"ground_truth"`
			}
			if err := json.Unmarshal(a, &x); err != nil {
				t.Fatal(err)
			}
			byID[x.ID] = x.GroundTruth
		}
		for _, q := range questions {
			var x struct {
				ID       string         `json:"id"`
				Function []ptk.ToolInfo `json:"function"`
			}
			if err := json.Unmarshal(q, &x); err != nil {
				t.Fatal(err)
			}
			gt, ok := byID[x.ID]
			if !ok {
				continue
			}
			e := bfclEntry{ID: x.ID, Tools: x.Function}
			for _, call := range decodeOrdered(t, gt).([]any) {
				c := call.(orderedArgs)
				params := c.vals[0].(orderedArgs)
				e.Calls = append(e.Calls, bfclCall{Name: c.keys[0], Args: firstAcceptable(params)})
			}
			out = append(out, e)
		}
	}
	return out
}

func readJSONL(t testing.TB, path string) []json.RawMessage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		out = append(out, append(json.RawMessage(nil), sc.Bytes()...))
	}
	return out
}

// decodeOrdered decodes JSON keeping object key order.
func decodeOrdered(t testing.TB, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var read func() any
	read = func() any {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '[' {
				arr := []any{}
				for dec.More() {
					arr = append(arr, read())
				}
				dec.Token()
				return arr
			}
			obj := orderedArgs{}
			for dec.More() {
				k, _ := dec.Token()
				obj.keys = append(obj.keys, k.(string))
				obj.vals = append(obj.vals, read())
			}
			dec.Token()
			return obj
		}
		return tok
	}
	return read()
}

// firstAcceptable picks, for each parameter, the first acceptable value that
// is not "may be omitted" (""), recursively for BFCL's nested dicts.
func firstAcceptable(params orderedArgs) orderedArgs {
	var out orderedArgs
	for i, k := range params.keys {
		options, ok := params.vals[i].([]any)
		if !ok {
			continue
		}
		for _, o := range options {
			if s, ok := o.(string); ok && s == "" {
				continue
			}
			if d, ok := o.(orderedArgs); ok {
				o = firstAcceptable(d)
			}
			if arr, ok := o.([]any); ok {
				o = acceptableList(arr)
			}
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, o)
			break
		}
	}
	return out
}

// acceptableList turns the dicts inside a list answer into plain values.
func acceptableList(arr []any) []any {
	out := make([]any, len(arr))
	for i, v := range arr {
		if d, ok := v.(orderedArgs); ok && isAnswerDict(d) {
			v = firstAcceptable(d)
		}
		out[i] = v
	}
	return out
}

// isAnswerDict reports whether every value of d is a list of options.
func isAnswerDict(d orderedArgs) bool {
	for _, v := range d.vals {
		if _, ok := v.([]any); !ok {
			return false
		}
	}
	return len(d.vals) > 0
}

// ---- writing calls as models do ----

func writeJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case orderedArgs:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(": ")
			writeJSON(b, x.vals[i])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	default:
		out, _ := json.Marshal(x)
		b.Write(out)
	}
}

func jsonText(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

// writePython writes a value as a Python literal.
func writePython(b *strings.Builder, v any) {
	switch x := v.(type) {
	case orderedArgs:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writePython(b, k)
			b.WriteString(": ")
			writePython(b, x.vals[i])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePython(b, e)
		}
		b.WriteByte(']')
	case string:
		// Python's repr prefers single quotes
		q := "'"
		if strings.Contains(x, "'") && !strings.Contains(x, `"`) {
			q = `"`
		}
		b.WriteString(q)
		for _, r := range x {
			switch {
			case string(r) == q || r == '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\t':
				b.WriteString(`\t`)
			case r < 0x20:
				fmt.Fprintf(b, `\x%02x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteString(q)
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case nil:
		b.WriteString("None")
	case json.Number:
		b.WriteString(x.String())
	}
}

func pythonCall(c bfclCall) string {
	var b strings.Builder
	b.WriteString(c.Name + "(")
	for i, k := range c.Args.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=")
		writePython(&b, c.Args.vals[i])
	}
	b.WriteString(")")
	return b.String()
}

// textOf is a value written as XML parameter text: strings bare, the rest
// as JSON.
func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsonText(v)
}

var bfclFormats = map[string]func(calls []bfclCall) string{
	"ptk": func(calls []bfclCall) string {
		var b strings.Builder
		for _, c := range calls {
			fmt.Fprintf(&b, "<PTK_CALL>\n{\"tool\": %q, \"args\": %s}\n</PTK_CALL>\n", c.Name, jsonText(c.Args))
		}
		return b.String()
	},
	"hermes": func(calls []bfclCall) string {
		var b strings.Builder
		b.WriteString("I'll call the tools.\n")
		for _, c := range calls {
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>\n", c.Name, jsonText(c.Args))
		}
		return b.String()
	},
	"pythonic": func(calls []bfclCall) string {
		var parts []string
		for _, c := range calls {
			parts = append(parts, pythonCall(c))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	},
	"mistral": func(calls []bfclCall) string {
		var parts []string
		for _, c := range calls {
			parts = append(parts, fmt.Sprintf(`{"name": %q, "arguments": %s}`, c.Name, jsonText(c.Args)))
		}
		return "[TOOL_CALLS] [" + strings.Join(parts, ", ") + "]"
	},
	"bare-array": func(calls []bfclCall) string {
		var parts []string
		for _, c := range calls {
			parts = append(parts, fmt.Sprintf(`{"name": %q, "arguments": %s}`, c.Name, jsonText(c.Args)))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	},
	"args-as-string": func(calls []bfclCall) string {
		var b strings.Builder
		for _, c := range calls {
			s, _ := json.Marshal(jsonText(c.Args))
			fmt.Fprintf(&b, "<tool_call>{\"name\": %q, \"arguments\": %s}</tool_call>", c.Name, s)
		}
		return b.String()
	},
	"qwen-xml": func(calls []bfclCall) string {
		var b strings.Builder
		for _, c := range calls {
			fmt.Fprintf(&b, "<tool_call>\n<function=%s>\n", c.Name)
			for i, k := range c.Args.keys {
				fmt.Fprintf(&b, "<parameter=%s>\n%s\n</parameter>\n", k, textOf(c.Args.vals[i]))
			}
			b.WriteString("</function>\n</tool_call>\n")
		}
		return b.String()
	},
}

// xmlSafe reports whether every argument can be written as XML text and
// read back: strings without line breaks at their ends, and a declared type
// for every non-string value.
func xmlSafe(e bfclEntry, p *Parser) bool {
	for _, c := range e.Calls {
		t, _ := p.resolve(c.Name)
		if t == nil || t.schema == nil {
			return false
		}
		for i, k := range c.Args.keys {
			v := c.Args.vals[i]
			types := t.schema.ParamTypes(k)
			if s, ok := v.(string); ok {
				if strings.TrimSpace(s) != s || strings.Contains(s, "</parameter>") {
					return false
				}
				if len(types) == 0 || !slices.Contains(types, "string") {
					return false
				}
				continue
			}
			if len(types) == 0 || v == nil && slices.Contains(types, "string") {
				return false
			}
		}
	}
	return true
}

// sameValue compares an argument read by the parser with the answer: numbers
// by value (5 and 5.0 are the same number), the rest exactly.
func sameValue(got any, want any) bool {
	switch w := want.(type) {
	case orderedArgs:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w.keys) {
			return false
		}
		for i, k := range w.keys {
			if !sameValue(g[k], w.vals[i]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(g[i], w[i]) {
				return false
			}
		}
		return true
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return false
		}
		a, err1 := strconv.ParseFloat(string(g), 64)
		b, err2 := strconv.ParseFloat(string(w), 64)
		return err1 == nil && err2 == nil && (a == b || math.Abs(a-b) <= 1e-12*math.Abs(b))
	}
	return got == want
}

func decodeNumbers(b []byte) any {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	dec.Decode(&v)
	return v
}

// answerFits reports whether a BFCL answer is valid against the entry's own
// tool definitions, as the full JSON Schema validator sees it, and declares
// no argument the schema does not list (ptk drops those). A few answers are
// not (a value outside its enum, a required argument missing, a string for
// an integer): BFCL's checker is more lenient than JSON Schema, and its data
// has known label noise.
func answerFits(t *testing.T, e bfclEntry) bool {
	for _, c := range e.Calls {
		var tool *ptk.ToolInfo
		for i := range e.Tools {
			if e.Tools[i].Name == c.Name {
				tool = &e.Tools[i]
			}
		}
		if tool == nil {
			return false
		}
		ts, err := compileTool(*tool)
		if err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
		args := decodeNumbers([]byte(jsonText(c.Args)))
		if ts.schema.Validate(json.RawMessage(jsonText(c.Args))) != nil {
			return false
		}
		norm, _ := NormalizeSchema(tool.Parameters)
		if !onlyDeclared(args, decodeNumbers(norm)) {
			return false
		}
	}
	return true
}

// onlyDeclared reports whether every object in v has only the properties
// its schema declares (where the schema declares some), and no null for an
// optional property that does not allow null.
func onlyDeclared(v, schema any) bool {
	s, _ := schema.(map[string]any)
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for k, val := range x {
			ps, declared := props[k]
			if len(props) > 0 && !declared && s["additionalProperties"] == nil {
				return false
			}
			if val == nil {
				return false
			}
			if declared && !onlyDeclared(val, ps) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !onlyDeclared(e, s["items"]) {
				return false
			}
		}
	}
	return true
}

// TestBFCLRoundTrip writes every BFCL answer in several formats and checks
// that the parser reads back exactly the calls of every answer that fits its
// tools' schemas, and reads every other answer the same way in every format.
func TestBFCLRoundTrip(t *testing.T) {
	entries := loadBFCL(t)
	names := make([]string, 0, len(bfclFormats))
	for name := range bfclFormats {
		names = append(names, name)
	}
	sort.Strings(names)
	failures := map[string]int{}
	readings, unfit := 0, 0
	for _, e := range entries {
		p, err := NewParser(e.Tools)
		if err != nil {
			t.Errorf("%s: tools do not compile: %v", e.ID, err)
			continue
		}
		fits := answerFits(t, e)
		if !fits {
			unfit++
		}
		reference := p.Parse(bfclFormats["ptk"](e.Calls))
		for _, format := range names {
			if format == "qwen-xml" && !xmlSafe(e, p) {
				continue
			}
			text := bfclFormats[format](e.Calls)
			r := p.Parse(text)
			readings++
			var problem string
			if fits {
				if len(r.Calls) != len(e.Calls) {
					problem = fmt.Sprintf("%d calls, want %d", len(r.Calls), len(e.Calls))
				}
				for i := 0; problem == "" && i < len(e.Calls); i++ {
					if got, want := r.Calls[i], e.Calls[i]; got.Tool != want.Name || !sameValue(decodeNumbers(got.Args), want.Args) {
						problem = fmt.Sprintf("call %d = %s %s, want %s %s", i, got.Tool, got.Args, want.Name, jsonText(want.Args))
					}
				}
			} else {
				if len(r.Attempts) != len(reference.Attempts) {
					problem = fmt.Sprintf("%d attempts, the PTK form gives %d", len(r.Attempts), len(reference.Attempts))
				}
				for i := 0; problem == "" && i < len(r.Attempts); i++ {
					a, b := r.Attempts[i], reference.Attempts[i]
					if a.Call.Tool != b.Call.Tool || (a.Err == nil) != (b.Err == nil) || a.Err != nil && a.Err.Code != b.Err.Code {
						problem = fmt.Sprintf("attempt %d = %s %v, the PTK form gives %s %v", i, a.Call.Tool, a.Err, b.Call.Tool, b.Err)
					}
				}
			}
			if problem != "" {
				failures[format]++
				if failures[format] <= 3 {
					t.Errorf("%s (%s): %s\n%s", e.ID, format, problem, text)
				}
			}
		}
	}
	t.Logf("%d BFCL entries (%d whose answer does not fit its schema), %d readings in %d formats; failures: %v",
		len(entries), unfit, readings, len(names), failures)
}

// TestQuickValidityAgreesWithValidator checks the parser's quick validity
// check against the full JSON Schema validator on BFCL's schemas, with each
// answer and many broken variants of it: whatever the quick check accepts,
// the validator must accept.
func TestQuickValidityAgreesWithValidator(t *testing.T) {
	entries := loadBFCL(t)
	checked, quick := 0, 0
	replacements := []string{`"x"`, `1`, `1.5`, `true`, `null`, `[]`, `{}`, `["a"]`, `[1]`, `{"a": 1}`}
	for _, e := range entries {
		p, err := NewParser(e.Tools)
		if err != nil {
			continue
		}
		for _, c := range e.Calls {
			ts, _ := p.resolve(c.Name)
			if ts == nil || ts.schema == nil {
				continue
			}
			base := jsonText(c.Args)
			variants := []string{base, "{}"}
			for i := range c.Args.keys {
				drop := orderedArgs{keys: append(append([]string{}, c.Args.keys[:i]...), c.Args.keys[i+1:]...),
					vals: append(append([]any{}, c.Args.vals[:i]...), c.Args.vals[i+1:]...)}
				variants = append(variants, jsonText(drop))
				for _, r := range replacements {
					vals := append([]any{}, c.Args.vals...)
					vals[i] = json.RawMessage(r)
					variants = append(variants, jsonText(orderedArgs{keys: c.Args.keys, vals: vals}))
				}
			}
			for _, v := range variants {
				n, _, err := lenient.Parse([]byte(v))
				if err != nil {
					t.Fatalf("%s: %q: %v", e.ID, v, err)
				}
				checked++
				if ts.schema.Quick(n) {
					quick++
					if err := ts.schema.Validate(json.RawMessage(v)); err != nil {
						t.Errorf("%s: quick check accepts %s, the validator does not: %v", e.ID, v, err)
					}
				}
			}
		}
	}
	t.Logf("%d argument objects checked, %d accepted by the quick check", checked, quick)
}
