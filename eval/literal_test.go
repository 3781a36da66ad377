package eval

import "testing"

// The cases of BFCL's own tests of its Java and JavaScript type converters
// (type_convertor/java_type_converter.py, js_type_converter.py).
func TestLiteralsAsBFCL(t *testing.T) {
	d := func(kv ...any) *Dict {
		out := &Dict{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i].(string), kv[i+1])
		}
		return out
	}
	l := func(v ...any) []any { return v }
	for _, c := range []struct {
		lang, in, typ, nested string
		want                  any
	}{
		{"java", "true", "boolean", "", true},
		{"java", "false", "boolean", "", false},
		{"java", "123", "integer", "", int64(123)},
		{"java", "-123", "integer", "", int64(-123)},
		{"java", "3.14f", "float", "", 3.14},
		{"java", "3.14", "double", "", 3.14},
		{"java", "123L", "long", "", int64(123)},
		{"java", "-9223372036854775808L", "long", "", int64(-9223372036854775808)},
		{"java", "abc", "String", "", "abc"},
		{"java", "123", "any", "", "123"},
		{"java", "3e-3F", "float", "", 3e-3},
		{"java", "3.14e2", "double", "", 3.14e2},
		{"java", "3.14", "float", "", "3.14"},    // not a float literal: kept as a string
		{"java", "3.14f", "double", "", "3.14f"}, // likewise
		{"java", "true", "integer", "", "true"},
		{"java", "new int[]{1, 2, 3}", "Array", "", l(int64(1), int64(2), int64(3))},
		{"java", "new int[] { 1, 2, 3 }", "Array", "", l(int64(1), int64(2), int64(3))},
		{"java", "new int[]{}", "Array", "", l()},
		{"java", `new Object[]{1, "abc", true}`, "Array", "", l(int64(1), "abc", true)},
		{"java", "new long[]{1L, 2, 3L}", "Array", "long", l(int64(1), "2", int64(3))},
		{"java", `new ArrayList<>(Arrays.asList("a", "b"))`, "ArrayList", "", l("a", "b")},
		{"java", `new ArrayList<>(Arrays.asList(1, "abc", true))`, "ArrayList", "", l(int64(1), "abc", true)},
		{"java", "new ArrayList<Integer>(Arrays.asList(1, 2, 3))", "ArrayList", "integer", l(int64(1), int64(2), int64(3))},
		{"java", "new ArrayList<Float>() {{ add(1.0f); add(2.0f); add(3.0f); }}", "ArrayList", "float", l(1.0, 2.0, 3.0)},
		{"java", "new ArrayList<>()", "ArrayList", "", l()},
		{"java", `new HashMap<String, String>() {{ put("key", "value"); }}`, "HashMap", "", d("key", "value")},
		{"java", `new HashMap<String, Object>() {{ put("key1", 1); put("key2", "value"); put("key3", true); }}`, "HashMap", "", d("key1", int64(1), "key2", "value", "key3", true)},
		{"java", "new HashMap<>() {{ }}", "HashMap", "", d()},
		{"java", "new HashMap<>()", "HashMap", "", d()},
		{"javascript", "true", "Boolean", "", true},
		{"javascript", "123", "integer", "", int64(123)},
		{"javascript", "3.14", "float", "", 3.14},
		{"javascript", "123n", "Bigint", "", int64(123)},
		{"javascript", "123", "Bigint", "", "123"},
		{"javascript", "abc", "String", "", "abc"},
		{"javascript", "'abc'", "String", "", "abc"},
		{"javascript", "123.45", "integer", "", "123.45"},
		{"javascript", "[1, 2, 3]", "array", "", l(int64(1), int64(2), int64(3))},
		{"javascript", "new Array(1, 2, 3)", "array", "", l(int64(1), int64(2), int64(3))},
		{"javascript", "[]", "array", "", l()},
		{"javascript", "[1, 'two', true]", "array", "", l(int64(1), "two", true)},
		{"javascript", "[1n, 2n, 3n]", "array", "Bigint", l(int64(1), int64(2), int64(3))},
		{"javascript", `["hello", "world", "!"]`, "array", "String", l("hello", "world", "!")},
		{"javascript", " [ [ 1, 2 ], [ 3,   4], [5, 6]]", "array", "array", l(l(int64(1), int64(2)), l(int64(3), int64(4)), l(int64(5), int64(6)))},
		{"javascript", "new Array([1, 2], [3, 4], [5, 6])", "array", "array", l(l(int64(1), int64(2)), l(int64(3), int64(4)), l(int64(5), int64(6)))},
		{"javascript", "{'key': 'value'}", "dict", "", d("key", "value")},
		{"javascript", "{'key1': 123, 'key2': 'value', 'key3': false}", "dict", "", d("key1", int64(123), "key2", "value", "key3", false)},
		{"javascript", "{}", "dict", "", d()},
		{"javascript", `{"initialState": initialStateObject, "reducers": reducersMap, "middlewares": ["loggerMiddleware"], "enhancers": ["applyMiddleware", "myMiddleWare"]}`, "dict", "",
			d("initialState", "initialStateObject", "reducers", "reducersMap", "middlewares", l("loggerMiddleware"), "enhancers", l("applyMiddleware", "myMiddleWare"))},
	} {
		convert := javaConvert
		if c.lang == "javascript" {
			convert = jsConvert
		}
		if got := convert(c.in, c.typ, c.nested); !pyEqual(got, c.want) || pyType(got) != pyType(c.want) {
			t.Errorf("%s %s %q = %s (%s), want %s", c.lang, c.typ, c.in, pyRepr(got), pyType(got), pyRepr(c.want))
		}
	}
}

// TestJSPairs checks the hand-written reading of BFCL's key: value pattern,
// whose look-ahead RE2 lacks: a comma ends a value only when a key and a
// colon follow before the next comma.
func TestJSPairs(t *testing.T) {
	got := jsPairs(`'a': 1, 'b': 'x, y', c: [1, 2], d:e`)
	want := [][2]string{{"'a'", "1"}, {"'b'", "'x, y'"}, {"c", "[1, 2]"}, {"d", "e"}}
	if len(got) != len(want) {
		t.Fatalf("%q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d = %q, want %q", i, got[i], want[i])
		}
	}
}
