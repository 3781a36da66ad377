package tag

import "testing"

func TestRead(t *testing.T) {
	for in, want := range map[string]Info{
		"<PTK_CALL>":             {Name: "ptk_call", Raw: "ptk_call", End: 10},
		"</tool_call>":           {Name: "tool_call", Raw: "tool_call", Closing: true, End: 12},
		"<|python_tag|>":         {Name: "python_tag", Raw: "python_tag", BarL: true, BarR: true, End: 14},
		"<｜tool▁call▁begin｜>":    {Name: "tool_call_begin", Raw: "tool_call_begin", BarL: true, BarR: true, End: len("<｜tool▁call▁begin｜>")},
		"<function=get_weather>": {Name: "function", Raw: "function", Eq: "get_weather", End: 22},
		`<invoke name="x">`:      {Name: "invoke", Raw: "invoke", Attrs: `name="x"`, End: 17},
		"<minimax:tool_call>":    {Name: "tool_call", Raw: "minimax:tool_call", End: 19},
	} {
		got, ok, need := Read([]byte(in), 0, true)
		if !ok || need {
			t.Errorf("%q: ok %v, need %v", in, ok, need)
			continue
		}
		if got != want {
			t.Errorf("%q: %+v, want %+v", in, got, want)
		}
	}
	for _, in := range []string{"< b>", "<3", "<a b"} {
		if _, ok, _ := Read([]byte(in), 0, true); ok {
			t.Errorf("%q read as a tag", in)
		}
	}
	if _, ok, need := Read([]byte("<tool_ca"), 0, false); ok || !need {
		t.Errorf("a tag cut off: ok %v, need %v", ok, need)
	}
}

func TestFinder(t *testing.T) {
	f := Finder{Pats: []string{"</tool_call>", "</function>"}}
	buf := []byte("abc </TOOL_")
	if i, _ := f.Find(buf, false); i != -1 {
		t.Fatalf("found %d in a cut-off closer", i)
	}
	buf = append(buf, "CALL> x"...)
	if i, k := f.Find(buf, false); i != 4 || k != 0 {
		t.Errorf("found %d, %d; want 4, 0", i, k)
	}
	if v, ok := Attr(` name="get_weather" x='1'`, "name"); !ok || v != "get_weather" {
		t.Errorf("Attr: %q, %v", v, ok)
	}
}
