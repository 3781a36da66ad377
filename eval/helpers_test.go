package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

const sharedDir = "../../shared/corpus/bfcl/v4"

// questions returns the in-repo sample, and, when the shared corpus is
// there, its questions too: every one with PTK_EVAL_FULL=1, else every
// step-th of each category.
func questions(t testing.TB, step int) []*Question {
	t.Helper()
	qs, err := Load("testdata/bfcl", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sharedDir); err != nil {
		t.Logf("shared BFCL corpus not found (%v): the in-repo sample only", err)
		return qs
	}
	all, err := Load(sharedDir, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("PTK_EVAL_FULL") != "" {
		step = 1
	}
	seen := map[string]bool{}
	for _, q := range qs {
		seen[q.ID] = true
	}
	n := map[string]int{}
	for _, q := range all {
		n[q.Category]++
		if !seen[q.ID] && (n[q.Category]-1)%step == 0 {
			qs = append(qs, q)
		}
	}
	return qs
}

// reference is the first acceptable answer of q: each parameter with its
// first acceptable value, omitted where it may be.
func reference(q *Question) []Call {
	var calls []Call
	for _, e := range q.Answer {
		args := &Dict{}
		var props *Dict
		for _, f := range q.Functions {
			if f.Name == e.Name {
				props = parseFuncDoc(f).props
			}
		}
		for _, p := range e.Params {
			if _, declared := props.Get(p.Name); props != nil && !declared && pyIn("", p.Acceptable) {
				continue // an optional parameter the function does not have
			}
			if v, ok := firstValue(p.Acceptable); ok {
				args.Set(p.Name, v)
			}
		}
		calls = append(calls, Call{Name: e.Name, Args: args})
	}
	return calls
}

func firstValue(acc []any) (any, bool) {
	for _, a := range acc {
		if s, ok := a.(string); ok && s == "" {
			continue
		}
		return plain(a), true
	}
	return nil, false
}

// plain turns a nested answer dict (each value a list of acceptable
// values) into a value, recursively, and the dicts of a list likewise.
func plain(v any) any {
	switch x := v.(type) {
	case *Dict:
		if !answerDict(x) {
			return x
		}
		out := &Dict{}
		for i, k := range x.Keys {
			if fv, ok := firstValue(x.Vals[i].([]any)); ok {
				out.Set(k, fv)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if d, ok := e.(*Dict); ok {
				out[i] = plain(d)
			} else {
				out[i] = e
			}
		}
		return out
	}
	return v
}

func answerDict(d *Dict) bool {
	for _, v := range d.Vals {
		if _, ok := v.([]any); !ok {
			return false
		}
	}
	return len(d.Keys) > 0
}

// literals writes a Java or JavaScript question's argument values as the
// literal strings BFCL asks the model for.
func literals(q *Question, calls []Call) []Call {
	lang := Language(q.Category)
	if lang == "python" {
		return calls
	}
	out := make([]Call, len(calls))
	for i, c := range calls {
		fd := parseFuncDoc(q.Functions[0])
		for _, f := range q.Functions {
			if f.Name == c.Name {
				fd = parseFuncDoc(f)
			}
		}
		args := &Dict{}
		for j, k := range c.Args.Keys {
			prop, _ := fd.props.Get(k)
			typ, items := propType(prop)
			args.Set(k, literal(c.Args.Vals[j], typ, items, lang))
		}
		out[i] = Call{Name: c.Name, Args: args}
	}
	return out
}

func literal(v any, typ, items, lang string) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		s := strconv.FormatInt(x, 10)
		switch typ {
		case "long":
			return s + "L"
		case "float":
			if lang == "java" {
				return s + "f"
			}
			return s + ".0"
		case "double":
			return s + ".0"
		}
		return s
	case float64:
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		if typ == "float" && lang == "java" {
			s += "f"
		}
		return s
	case []any:
		var parts []string
		for _, e := range x {
			switch {
			case lang == "java" && typ == "Array":
				parts = append(parts, literal(e, items, "", lang))
			case lang == "java" && (items == "String" || items == "char" || items == "" && isString(e)):
				parts = append(parts, strconv.Quote(fmt.Sprint(e)))
			case lang == "java":
				parts = append(parts, literal(e, items, "", lang))
			case typ == "array" && items == "" && isString(e):
				parts = append(parts, strconv.Quote(fmt.Sprint(e)))
			case isString(e) && items == "String":
				parts = append(parts, strconv.Quote(e.(string)))
			default:
				parts = append(parts, literal(e, items, "", lang))
			}
		}
		switch {
		case lang == "java" && typ == "Array":
			return "new " + javaElem(items) + "[]{" + strings.Join(parts, ", ") + "}"
		case lang == "java":
			return "new ArrayList<>(Arrays.asList(" + strings.Join(parts, ", ") + "))"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *Dict:
		var parts []string
		for i, k := range x.Keys {
			val := x.Vals[i]
			var lit string
			if s, ok := val.(string); ok {
				lit = strconv.Quote(s)
			} else {
				lit = literal(val, "", "", lang)
			}
			if lang == "java" {
				parts = append(parts, fmt.Sprintf("put(%q, %s);", k, lit))
			} else {
				parts = append(parts, fmt.Sprintf("%q: %s", k, lit))
			}
		}
		if lang == "java" {
			return "new HashMap<String, Object>() {{ " + strings.Join(parts, " ") + " }}"
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := EncodeJSON(v)
	return string(b)
}

func isString(v any) bool { _, ok := v.(string); return ok }

func javaElem(t string) string {
	switch t {
	case "integer":
		return "int"
	case "":
		return "Object"
	}
	return t
}

func argsJSON(d *Dict) string {
	b, err := d.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return string(b)
}

// dialects write calls as a model would, in the formats ptk reads.
var dialects = map[string]func(calls []Call) string{
	"ptk": func(calls []Call) string {
		var b strings.Builder
		for _, c := range calls {
			fmt.Fprintf(&b, "<PTK_CALL>\n{\"tool\": %q, \"args\": %s}\n</PTK_CALL>\n", c.Name, argsJSON(c.Args))
		}
		return b.String()
	},
	"hermes": func(calls []Call) string {
		var b strings.Builder
		for _, c := range calls {
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>\n", c.Name, argsJSON(c.Args))
		}
		return b.String()
	},
	"mistral": func(calls []Call) string {
		var parts []string
		for _, c := range calls {
			parts = append(parts, fmt.Sprintf(`{"name": %q, "arguments": %s}`, c.Name, argsJSON(c.Args)))
		}
		return "[TOOL_CALLS] [" + strings.Join(parts, ", ") + "]"
	},
	"pythonic": func(calls []Call) string {
		var parts []string
		for _, c := range calls {
			var args []string
			for i, k := range c.Args.Keys {
				args = append(args, k+"="+python(c.Args.Vals[i]))
			}
			parts = append(parts, c.Name+"("+strings.Join(args, ", ")+")")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	},
}

func python(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		b, _ := json.Marshal(x)
		return string(b)
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, python(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *Dict:
		var parts []string
		for i, k := range x.Keys {
			parts = append(parts, python(k)+": "+python(x.Vals[i]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := EncodeJSON(v)
	return string(b)
}

// scoreText scores a reply written as text, read as a turn in ptk mode
// reads it.
func scoreText(t testing.TB, q *Question, text string) Result {
	t.Helper()
	tools, names := Tools(q, false)
	p, err := protocol.NewParser(tools)
	if err != nil {
		t.Fatalf("%s: %v", q.ID, err)
	}
	res := p.Parse(text)
	rep := &turn.Reply{Raw: text, Text: res.Text, Attempts: res.Attempts}
	r := Result{ID: q.ID, Category: q.Category, Calls: []CallRecord{}}
	score(&r, q, rep, p, tools, names, false)
	return r
}

// scoreNative scores calls made through native function calling.
func scoreNative(t testing.TB, q *Question, calls []Call) Result {
	t.Helper()
	tools, names := Tools(q, true)
	back := map[string]string{}
	for k, v := range names {
		back[v] = k
	}
	p, err := protocol.NewParser(tools)
	if err != nil {
		t.Fatalf("%s: %v", q.ID, err)
	}
	rep := &turn.Reply{Native: true}
	for i, c := range calls {
		name := c.Name
		if n, ok := back[name]; ok {
			name = n
		}
		made := ptk.Call{ID: fmt.Sprint(i), Tool: name, Args: json.RawMessage(argsJSON(c.Args))}
		rep.Made = append(rep.Made, made)
		a, _ := p.Check(made)
		rep.Attempts = append(rep.Attempts, a)
	}
	r := Result{ID: q.ID, Category: q.Category, Calls: []CallRecord{}}
	score(&r, q, rep, p, tools, names, true)
	return r
}
