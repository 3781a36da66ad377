package eval

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestReferenceAnswersScoreCorrect writes the reference answer of every
// question in each dialect ptk reads, and natively, and checks that BFCL's
// verdict on it is right; ptk's verdict is right too except where ptk's
// schema check disagrees with the answer (BFCL's label noise), which is
// counted.
func TestReferenceAnswersScoreCorrect(t *testing.T) {
	qs := questions(t, 4)
	var names []string
	for n := range dialects {
		names = append(names, n)
	}
	sort.Strings(names)
	strictFail, ptkDiffer := map[string]int{}, map[string]int{}
	checked, noise := 0, 0
	for _, q := range qs {
		if q.Answer == nil {
			continue
		}
		calls := literals(q, reference(q))
		// An answer BFCL's own checker rejects (label noise: an
		// acceptable-value list that is empty, a parameter the function
		// does not declare) must be rejected the same way in every dialect.
		direct := Check(q, calls)
		if !direct.Correct {
			noise++
			t.Logf("%s: the reference answer does not pass BFCL's checker: %s %v", q.ID, direct.ErrorType, direct.Errors)
		}
		results := map[string]Result{"native": scoreNative(t, q, calls)}
		for _, d := range names {
			if d == "pythonic" && Language(q.Category) != "python" {
				continue
			}
			results[d] = scoreText(t, q, dialects[d](calls))
		}
		for d, r := range results {
			checked++
			if r.Strict.Correct != direct.Correct || r.Strict.ErrorType != direct.ErrorType {
				strictFail[d]++
				if strictFail[d] <= 3 {
					t.Errorf("%s (%s): BFCL's verdict %s %v, the answer checked directly: %s\ncalls: %s", q.ID, d, r.Strict.ErrorType, r.Strict.Errors, direct.ErrorType, callsText(r.Calls))
				}
			}
			if direct.Correct && !r.Correct {
				ptkDiffer[d]++
				if ptkDiffer[d] <= 2 {
					t.Logf("%s (%s): ptk's verdict %s %v; calls %s", q.ID, d, r.Verdict.ErrorType, r.Verdict.Errors, callsText(r.Calls))
				}
			}
		}
	}
	t.Logf("%d questions (%d whose answer BFCL's checker rejects), %d readings; BFCL's verdict changed by the dialect: %v; ptk's verdict wrong on a right answer: %v",
		len(qs), noise, checked, strictFail, ptkDiffer)
	if float64(noise) > 0.02*float64(len(qs)) {
		t.Errorf("%d of %d reference answers do not pass the checker: more than label noise", noise, len(qs))
	}
	for d, n := range ptkDiffer {
		if float64(n) > 0.02*float64(len(qs)) {
			t.Errorf("%s: ptk's verdict wrong on %d right answers, more than 2%%", d, n)
		}
	}
}

func callsText(cs []CallRecord) string {
	var parts []string
	for _, c := range cs {
		s := c.Tool + string(c.Args)
		if c.Error != "" {
			s += " [" + c.Error + "]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// perturbation changes a correct answer in one way; it returns false when
// it does not apply to the question.
type perturbation struct {
	name string
	// reason is BFCL's error type for the question's category.
	reason func(cat string) string
	apply  func(q *Question, calls []Call) ([]Call, bool)
}

func byCount(simple, multiple, parallel string) func(string) string {
	return func(cat string) string {
		switch {
		case strings.Contains(cat, "parallel"):
			return parallel
		case strings.Contains(cat, "multiple"):
			return multiple
		}
		return simple
	}
}

func clone(calls []Call) []Call {
	out := make([]Call, len(calls))
	for i, c := range calls {
		out[i] = Call{Name: c.Name, Args: &Dict{Keys: slices.Clone(c.Args.Keys), Vals: slices.Clone(c.Args.Vals)}}
	}
	return out
}

func without(d *Dict, k string) *Dict {
	out := &Dict{}
	for i, key := range d.Keys {
		if key != k {
			out.Set(key, d.Vals[i])
		}
	}
	return out
}

// typedParam finds in the first call a parameter declared with one of
// types whose acceptable values all have the declared type.
func typedParam(q *Question, c Call, types ...string) (string, string, bool) {
	fd := findFunc([]*funcDoc{parseFuncDoc(funcNamed(q, c.Name))}, c.Name)
	if fd == nil {
		return "", "", false
	}
	for _, k := range c.Args.Keys {
		prop, _ := fd.props.Get(k)
		typ, _ := propType(prop)
		if !slices.Contains(types, typ) {
			continue
		}
		for _, p := range answerFor(q, c.Name).Params {
			if p.Name == k && answerType(p.Acceptable) == pythonTypes[typ] {
				return k, typ, true
			}
		}
	}
	return "", "", false
}

func funcNamed(q *Question, name string) Function {
	for _, f := range q.Functions {
		if f.Name == name {
			return f
		}
	}
	return Function{}
}

func answerFor(q *Question, name string) Expected {
	for _, e := range q.Answer {
		if e.Name == name {
			return e
		}
	}
	return Expected{}
}

var perturbations = []perturbation{
	{"wrong function name",
		byCount("simple_function_checker:wrong_func_name", "simple_function_checker:wrong_func_name", "parallel_function_checker_no_order:cannot_find_match"),
		func(q *Question, calls []Call) ([]Call, bool) {
			calls[0].Name = "zzq_unrelated_function"
			return calls, true
		}},
	{"missing required parameter",
		byCount("simple_function_checker:missing_required", "simple_function_checker:missing_required", "parallel_function_checker_no_order:cannot_find_match"),
		func(q *Question, calls []Call) ([]Call, bool) {
			fd := parseFuncDoc(funcNamed(q, calls[0].Name))
			for _, r := range fd.required {
				if _, ok := calls[0].Args.Get(r); ok {
					calls[0].Args = without(calls[0].Args, r)
					return calls, true
				}
			}
			return nil, false
		}},
	{"wrong type",
		byCount("type_error:simple", "type_error:simple", "parallel_function_checker_no_order:cannot_find_match"),
		func(q *Question, calls []Call) ([]Call, bool) {
			k, typ, ok := typedParam(q, calls[0], "integer", "boolean", "string", "array")
			if !ok {
				return nil, false
			}
			v := map[string]any{"integer": "twelve", "boolean": []any{"yes"}, "string": []any{int64(7)}, "array": "a, b"}[typ]
			calls[0].Args.Set(k, v)
			return calls, true
		}},
	{"value outside the possible answers",
		byCount("value_error:string", "value_error:string", "parallel_function_checker_no_order:cannot_find_match"),
		func(q *Question, calls []Call) ([]Call, bool) {
			k, _, ok := typedParam(q, calls[0], "string")
			if !ok {
				return nil, false
			}
			calls[0].Args.Set(k, "zzq not an answer")
			return calls, true
		}},
	{"an extra call",
		byCount("simple_function_checker:wrong_count", "multiple_function_checker:wrong_count", "parallel_function_checker_no_order:wrong_count"),
		func(q *Question, calls []Call) ([]Call, bool) {
			return append(calls, calls[0]), true
		}},
}

// TestPerturbedAnswersScoreWrong changes correct answers one way at a time
// and checks that both verdicts say wrong, BFCL's for the reason the change
// gives.
func TestPerturbedAnswersScoreWrong(t *testing.T) {
	qs := questions(t, 10)
	applied := map[string]int{}
	for _, q := range qs {
		if q.Answer == nil || Language(q.Category) != "python" {
			continue
		}
		base := reference(q)
		if r := scoreNative(t, q, base); !r.Strict.Correct || !r.Correct {
			continue // label noise: the reference itself does not pass
		}
		for _, p := range perturbations {
			calls, ok := p.apply(q, clone(base))
			if !ok {
				continue
			}
			applied[p.name]++
			want := p.reason(q.Category)
			for d, r := range map[string]Result{"native": scoreNative(t, q, calls), "ptk": scoreText(t, q, dialects["ptk"](calls))} {
				if r.Strict.Correct || r.Strict.ErrorType != want {
					t.Errorf("%s, %s (%s): BFCL's verdict %v %s %v, want %s", q.ID, p.name, d, r.Strict.Correct, r.Strict.ErrorType, r.Strict.Errors, want)
				}
				if r.Correct {
					t.Errorf("%s, %s (%s): ptk's verdict correct; calls %s", q.ID, p.name, d, callsText(r.Calls))
				}
			}
		}
	}
	for _, p := range perturbations {
		if applied[p.name] == 0 {
			t.Errorf("%s: applied to no question", p.name)
		}
	}
	t.Logf("perturbations applied: %v", applied)
}

// TestRelevance checks the relevance categories: a call on an irrelevance
// question is wrong, prose is right; a live_relevance question needs a call.
func TestRelevance(t *testing.T) {
	qs := questions(t, 8)
	n := 0
	for _, q := range qs {
		if !strings.Contains(q.Category, "relevance") || len(q.Functions) == 0 {
			continue
		}
		n++
		call := fmt.Sprintf("<PTK_CALL>{\"tool\": %q, \"args\": {}}</PTK_CALL>", q.Functions[0].Name)
		prose := scoreText(t, q, "None of the functions can answer this.")
		called := scoreText(t, q, call)
		if strings.Contains(q.Category, "irrelevance") {
			if !prose.Correct || !prose.Strict.Correct || prose.Refusal {
				t.Errorf("%s: prose scored %+v", q.ID, prose.Verdict)
			}
			if called.Correct || called.Strict.ErrorType != "irrelevance:called" {
				t.Errorf("%s: a call scored %+v", q.ID, called.Strict)
			}
		} else {
			if prose.Correct || prose.Strict.ErrorType != "relevance:no_call" || !prose.Refusal {
				t.Errorf("%s: prose scored %+v, refusal %v", q.ID, prose.Strict, prose.Refusal)
			}
			if !called.Strict.Correct {
				t.Errorf("%s: a call scored %+v", q.ID, called.Strict)
			}
		}
	}
	if n == 0 {
		t.Fatal("no relevance question")
	}
}

// TestCheckerAsBFCL checks the port against what BFCL's ast_checker does
// with values the corpus of real replies showed ptk's port judging
// otherwise: an empty list for a list of dicts the answer allows to be left
// out ("" among its values, which BFCL measures as the empty string's
// length), and a list whose items have the wrong type (an int where the
// items are floats), which BFCL rejects even though the list itself has the
// answer's type.
func TestCheckerAsBFCL(t *testing.T) {
	q := &Question{
		ID: "simple_python_x", Category: "simple_python",
		Functions: []Function{{Name: "f", Parameters: json.RawMessage(`{"type": "dict", "properties": {
			"rank": {"type": "string"},
			"deck": {"type": "array", "items": {"type": "dict", "properties": {"rank": {"type": "string"}}}},
			"numbers": {"type": "array", "items": {"type": "float"}}}, "required": ["rank"]}`)}},
		Answer: []Expected{{Name: "f", Params: []Param{
			{Name: "rank", Acceptable: []any{"Queen"}},
			{Name: "deck", Acceptable: []any{""}},
			{Name: "numbers", Acceptable: []any{[]any{12.0, 15.5}, ""}},
		}}},
	}
	// numbers must be given: without "" among its values, its items' type is checked
	must := *q
	must.Answer = []Expected{{Name: "f", Params: []Param{
		{Name: "rank", Acceptable: []any{"Queen"}},
		{Name: "numbers", Acceptable: []any{[]any{12.0, 15.5}}},
	}}}
	for _, c := range []struct {
		q    *Question
		args string
		want string // "" for correct, else BFCL's error type
	}{
		{q, `{"rank": "Queen"}`, ""},
		{q, `{"rank": "Queen", "deck": []}`, ""},
		{q, `{"rank": "Queen", "deck": [{"rank": "Ace"}]}`, "value_error:list_dict_count"},
		// with "" among the values, BFCL checks no item's type
		{q, `{"rank": "Queen", "numbers": [12, 15.5]}`, ""},
		{&must, `{"rank": "Queen", "numbers": [12.0, 15.5]}`, ""},
		{&must, `{"rank": "Queen", "numbers": [12, 15.5]}`, "type_error:nested"},
		{&must, `{"rank": "Queen", "numbers": ["12", 15.5]}`, "type_error:nested"},
		{&must, `{"rank": "Queen", "numbers": "12, 15.5"}`, "type_error:simple"},
	} {
		v, err := Decode([]byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		got := Check(c.q, []Call{{Name: "f", Args: v.(*Dict)}})
		if got.Correct != (c.want == "") || got.ErrorType != c.want {
			t.Errorf("%s: %+v, want %q", c.args, got, c.want)
		}
	}
}
