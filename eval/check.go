package eval

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Call is a call as the checker sees it: the function's name and its
// arguments, decoded as Python's json module decodes them ([Decode]).
type Call struct {
	Name string
	Args *Dict
}

// Verdict is the checker's judgement of a model's calls.
type Verdict struct {
	Correct bool `json:"correct"`
	// ErrorType is BFCL's name for why the calls are wrong
	// ("simple_function_checker:missing_required", "type_error:simple",
	// "value_error:string", "parallel_function_checker_no_order:wrong_count",
	// "irrelevance:called", ...); empty when they are right.
	ErrorType string `json:"error_type,omitempty"`
	// Errors say what was wrong, as BFCL's checker says it.
	Errors []string `json:"errors,omitempty"`
}

func wrong(errType string, format string, args ...any) Verdict {
	return Verdict{ErrorType: errType, Errors: []string{fmt.Sprintf(format, args...)}}
}

var right = Verdict{Correct: true}

// Check scores calls, the calls a model made for q, as BFCL's AST checker
// does (see the package documentation). Irrelevance questions are right
// when there is no call, live_relevance ones when there is at least one.
func Check(q *Question, calls []Call) Verdict {
	switch {
	case strings.Contains(q.Category, "irrelevance"):
		if len(calls) > 0 {
			return wrong("irrelevance:called", "the model called %s on a question no function answers", calls[0].Name)
		}
		return right
	case strings.Contains(q.Category, "relevance"):
		if len(calls) == 0 {
			return wrong("relevance:no_call", "the model made no call on a question a function answers")
		}
		return right
	}
	lang := Language(q.Category)
	funcs := q.docs
	if len(funcs) != len(q.Functions) {
		funcs = funcDocs(q.Functions)
	}
	switch {
	case strings.Contains(q.Category, "parallel"):
		return checkParallel(funcs, calls, q.Answer, lang)
	case strings.Contains(q.Category, "multiple"):
		if len(calls) != len(q.Answer) {
			return wrong("multiple_function_checker:wrong_count", "Wrong number of functions: %d, want %d.", len(calls), len(q.Answer))
		}
		return checkCall(findFunc(funcs, q.Answer[0].Name), calls[0], q.Answer[0], lang)
	}
	if len(calls) != 1 {
		return wrong("simple_function_checker:wrong_count", "Wrong number of functions: %d, want 1.", len(calls))
	}
	if len(funcs) == 0 || len(q.Answer) == 0 {
		return wrong("simple_function_checker:unclear", "the question has no function or no answer")
	}
	return checkCall(funcs[0], calls[0], q.Answer[0], lang)
}

// checkParallel matches each expected call, in order, with the first of the
// model's calls not yet matched that passes for it.
func checkParallel(funcs []*funcDoc, calls []Call, answer []Expected, lang string) Verdict {
	if len(calls) != len(answer) {
		return wrong("parallel_function_checker_no_order:wrong_count", "Wrong number of functions: %d, want %d.", len(calls), len(answer))
	}
	matched := make([]bool, len(calls))
	for i, exp := range answer {
		fd := findFunc(funcs, exp.Name)
		var errs []string
		found := false
		for j, c := range calls {
			if matched[j] {
				continue
			}
			v := checkCall(fd, c, exp, lang)
			if v.Correct {
				matched[j], found = true, true
				break
			}
			errs = append(errs, fmt.Sprintf("model call %d: %s (%s)", j, strings.Join(v.Errors, " "), v.ErrorType))
		}
		if !found {
			return Verdict{ErrorType: "parallel_function_checker_no_order:cannot_find_match",
				Errors: append([]string{fmt.Sprintf("Could not find a matching function among the model's calls for expected call %d (%s).", i, exp.Name)}, errs...)}
		}
	}
	return right
}

// funcDoc is the part of a function document the checker reads.
type funcDoc struct {
	name     string
	props    *Dict
	required []string
}

// funcDocs reads the function documents the checker needs.
func funcDocs(fs []Function) []*funcDoc {
	out := make([]*funcDoc, len(fs))
	for i, f := range fs {
		out[i] = parseFuncDoc(f)
	}
	return out
}

func parseFuncDoc(f Function) *funcDoc {
	fd := &funcDoc{name: f.Name, props: &Dict{}}
	v, err := Decode(f.Parameters)
	if err != nil {
		return fd
	}
	params, ok := v.(*Dict)
	if !ok {
		return fd
	}
	if p, ok := params.Get("properties"); ok {
		if d, ok := p.(*Dict); ok {
			fd.props = d
		}
	}
	if r, ok := params.Get("required"); ok {
		if l, ok := r.([]any); ok {
			for _, x := range l {
				if s, ok := x.(string); ok {
					fd.required = append(fd.required, s)
				}
			}
		}
	}
	return fd
}

func findFunc(funcs []*funcDoc, name string) *funcDoc {
	for _, f := range funcs {
		if f.name == name {
			return f
		}
	}
	return nil
}

// propType returns the declared type of a property and of its items.
func propType(prop any) (typ, items string) {
	d, ok := prop.(*Dict)
	if !ok {
		return "", ""
	}
	if t, ok := d.Get("type"); ok {
		typ, _ = t.(string)
	}
	if it, ok := d.Get("items"); ok {
		if id, ok := it.(*Dict); ok {
			if t, ok := id.Get("type"); ok {
				items, _ = t.(string)
			}
		}
	}
	return typ, items
}

// The Python types BFCL's checker expects for each declared type, by
// language. A type a table does not have is checked as a string.
var (
	pythonTypes = map[string]string{
		"string": "str", "integer": "int", "float": "float", "boolean": "bool",
		"array": "list", "tuple": "list", "dict": "dict", "any": "str",
	}
	javaTypes = map[string]string{
		"byte": "int", "short": "int", "integer": "int", "float": "float", "double": "float",
		"long": "int", "boolean": "bool", "char": "str", "Array": "list", "ArrayList": "list",
		"Set": "set", "HashMap": "dict", "Hashtable": "dict", "Queue": "list", "Stack": "list",
		"String": "str", "any": "str",
	}
	jsTypes = map[string]string{
		"String": "str", "integer": "int", "float": "float", "Bigint": "int", "Boolean": "bool",
		"dict": "dict", "array": "list", "any": "str",
	}
)

func typeIn(table map[string]string, t string) string {
	if p, ok := table[t]; ok {
		return p
	}
	return "str"
}

// checkCall is BFCL's simple_function_checker: one call against one
// expected call.
func checkCall(fd *funcDoc, c Call, exp Expected, lang string) Verdict {
	if fd == nil {
		return wrong("simple_function_checker:unclear", "Function %q is not among the question's functions.", exp.Name)
	}
	if c.Name != fd.name {
		return wrong("simple_function_checker:wrong_func_name", "Function name %q not found in model output (got %q).", fd.name, c.Name)
	}
	args := c.Args
	if args == nil {
		args = &Dict{}
	}
	for _, r := range fd.required {
		if _, ok := args.Get(r); !ok {
			return wrong("simple_function_checker:missing_required", "Missing required parameter: %q.", r)
		}
	}
	acceptable := map[string][]any{}
	for _, p := range exp.Params {
		acceptable[p.Name] = p.Acceptable
	}
	for i, param := range args.Keys {
		value := args.Vals[i]
		prop, declared := fd.props.Get(param)
		acc, listed := acceptable[param]
		if !declared || !listed {
			return wrong("simple_function_checker:unexpected_param", "Unexpected parameter: %q.", param)
		}
		desc, itemDesc := propType(prop)
		var expected, nested string
		switch lang {
		case "java", "javascript":
			table, convert, name := javaTypes, javaConvert, "java"
			if lang == "javascript" {
				table, convert, name = jsTypes, jsConvert, "js"
			}
			expected = typeIn(table, desc)
			if _, ok := table[desc]; ok {
				s, isString := value.(string)
				if !isString {
					return wrong("type_error:"+name, "Incorrect type for parameter %q. Expected type String, got %s. Parameter value: %s.", param, pyType(value), pyRepr(value))
				}
				if slices.Contains([]string{"Array", "ArrayList", "array"}, desc) {
					nested = typeIn(table, itemDesc)
					if itemDesc == "" {
						nested = ""
					}
					value = convert(s, desc, itemDesc)
				} else {
					value = convert(s, desc, "")
				}
			}
		default:
			expected = typeIn(pythonTypes, desc)
			if (desc == "array" || desc == "tuple") && itemDesc != "" {
				nested = typeIn(pythonTypes, itemDesc)
			}
		}
		// Python turns an int into a float where a float is expected.
		if n, ok := value.(int64); ok && lang == "python" && desc == "float" {
			value = float64(n)
		}
		tc := checkType(param, value, acc, desc, expected, nested)
		if !tc.ok {
			return tc.verdict
		}
		if !tc.variable {
			var v Verdict
			switch {
			case expected == "dict":
				v = checkDict(param, value, acc)
			case expected == "list" && nested == "dict":
				v = checkListOfDicts(param, value, acc)
			case expected == "str":
				v = checkString(param, value, acc)
			case expected == "list":
				v = checkList(param, value, acc)
			default:
				goto member
			}
			if !v.Correct {
				return v
			}
			continue
		}
	member:
		if !pyIn(value, acc) {
			return wrong("value_error:others", "Invalid value for parameter %q: %s. Expected one of %s.", param, pyRepr(value), pyRepr(acc))
		}
	}
	for _, p := range exp.Params {
		if _, ok := args.Get(p.Name); !ok && !pyIn("", p.Acceptable) {
			return wrong("simple_function_checker:missing_optional", "Optional parameter %q not provided and not marked as optional.", p.Name)
		}
	}
	return right
}

type typeResult struct {
	ok, variable bool
	verdict      Verdict
}

// answerType is the type of the first acceptable value that is not ""
// (may be omitted); "" when there is none.
func answerType(acc []any) string {
	for _, a := range acc {
		if s, ok := a.(string); ok && s == "" {
			continue
		}
		return pyType(a)
	}
	return ""
}

// checkType is BFCL's type_checker: the value must have the expected type
// (the items of a list, one level deep, the nested type), or the type of
// the acceptable values, when they have another (a variable's name given
// for a value).
func checkType(param string, value any, acc []any, desc, expected, nested string) typeResult {
	at := answerType(acc)
	variable := at != "" && at != expected
	if pyType(value) == expected {
		if nested == "" {
			return typeResult{ok: true, variable: variable}
		}
		items, _ := value.([]any)
		for _, a := range acc {
			fits := true
			if al, ok := a.([]any); ok {
				for _, it := range items {
					if !checkType(param, it, al, nested, nested, "").ok {
						fits = false
						break
					}
				}
			}
			if fits {
				return typeResult{ok: true, variable: variable}
			}
		}
		// The items have the wrong type: BFCL's type_checker says so even
		// when the list has the answer's own type.
		errType := "type_error:simple"
		if at != "" && pyType(value) == at {
			errType = "type_error:nested"
		}
		return typeResult{verdict: wrong(errType, "Nested type checking failed for parameter %q. Expected outer type %s with inner type %s. Parameter value: %s.", param, desc, nested, pyRepr(value))}
	}
	if at != "" && pyType(value) == at {
		return typeResult{ok: true, variable: true}
	}
	return typeResult{verdict: wrong("type_error:simple", "Incorrect type for parameter %q. Expected type %s, got %s. Parameter value: %s.", param, desc, pyType(value), pyRepr(value))}
}

// standardize is BFCL's string normalisation: spaces and ,./-_*^ removed,
// lower case, single quotes read as double quotes.
func standardize(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(" ,./-_*^", r) {
			return -1
		}
		return r
	}, s)
	return strings.ReplaceAll(strings.ToLower(s), "'", `"`)
}

func standardizeIf(v any) any {
	if s, ok := v.(string); ok {
		return standardize(s)
	}
	return v
}

func checkString(param string, value any, acc []any) Verdict {
	s, _ := value.(string)
	std := standardize(s)
	for _, a := range acc {
		if as, ok := a.(string); ok && standardize(as) == std {
			return right
		}
	}
	return wrong("value_error:string", "Invalid value for parameter %q: %s. Expected one of %s. Case insensitive.", param, pyRepr(value), pyRepr(acc))
}

// checkList compares a list whole, in order, its strings (one level deep)
// normalised, with each acceptable list.
func checkList(param string, value any, acc []any) Verdict {
	items, _ := value.([]any)
	std := make([]any, len(items))
	for i, it := range items {
		std[i] = standardizeIf(it)
	}
	for _, a := range acc {
		var opt []any
		switch x := a.(type) {
		case []any:
			opt = make([]any, len(x))
			for i, it := range x {
				opt[i] = standardizeIf(it)
			}
		case string:
			// BFCL walks a string option character by character: "" (may
			// be omitted) becomes the empty list.
			for _, r := range x {
				opt = append(opt, standardize(string(r)))
			}
			if opt == nil {
				opt = []any{}
			}
		default:
			continue
		}
		if pyEqual(std, opt) {
			return right
		}
	}
	return wrong("value_error:list/tuple", "Invalid value for parameter %q: %s. Expected one of %s.", param, pyRepr(value), pyRepr(acc))
}

// checkDict compares a dict key by key with each acceptable dict, whose
// values are lists of acceptable values.
func checkDict(param string, value any, acc []any) Verdict {
	d, ok := value.(*Dict)
	if !ok {
		return wrong("dict_checker:unclear", "Parameter %q is not a dict: %s.", param, pyRepr(value))
	}
	result := wrong("dict_checker:unclear", "No acceptable value for parameter %q.", param)
	for _, a := range acc {
		if s, ok := a.(string); ok && s == "" {
			continue
		}
		opt, ok := a.(*Dict)
		if !ok {
			continue
		}
		result = Verdict{ErrorType: "dict_checker:unclear"}
		fits := true
		for i, k := range d.Keys {
			vals, ok := opt.Get(k)
			if !ok {
				result.Errors = append(result.Errors, fmt.Sprintf("Unexpected dict key parameter: %q.", k))
				result.ErrorType, fits = "value_error:dict_key", false
				break
			}
			std := standardizeIf(d.Vals[i])
			var stdOpts []any
			for _, o := range asList(vals) {
				stdOpts = append(stdOpts, standardizeIf(o))
			}
			if !pyIn(std, stdOpts) {
				result.Errors = append(result.Errors, fmt.Sprintf("Invalid value for parameter %q: %s. Expected one of %s.", k, pyRepr(d.Vals[i]), pyRepr(stdOpts)))
				result.ErrorType, fits = "value_error:dict_value", false
				break
			}
		}
		for i, k := range opt.Keys {
			if _, ok := d.Get(k); !ok && !pyIn("", asList(opt.Vals[i])) {
				result.Errors = append(result.Errors, fmt.Sprintf("Missing dict key parameter: %q.", k))
				result.ErrorType, fits = "value_error:dict_key", false
				break
			}
		}
		if fits {
			return right
		}
	}
	return result
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// checkListOfDicts compares a list of dicts, position by position, with
// each acceptable list of dicts of the same length.
func checkListOfDicts(param string, value any, acc []any) Verdict {
	items, _ := value.([]any)
	result := wrong("list_dict_checker:unclear", "No acceptable value for parameter %q.", param)
	for _, a := range acc {
		opt, ok := a.([]any)
		if s, isString := a.(string); isString {
			// BFCL takes a string option's length, in characters: "" (may
			// be omitted) is the empty list.
			if len(items) == 0 && s == "" {
				return right
			}
			if len(items) != utf8.RuneCountInString(s) {
				result = wrong("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
				continue
			}
			return wrong("list_dict_checker:unclear", "Parameter %q: %s is not a list of dicts.", param, pyRepr(a))
		}
		if !ok || len(items) != len(opt) {
			result = wrong("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
			continue
		}
		fits := true
		for i := range items {
			if result = checkDict(param, items[i], []any{opt[i]}); !result.Correct {
				fits = false
				break
			}
		}
		if fits {
			return right
		}
	}
	return result
}
