package lenient

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestPartial: at every byte of a value, Partial holds only what is
// complete, and each value it holds is in the whole value, where it stays.
func TestPartial(t *testing.T) {
	src := `{"name": "Ada \"L\"", "tags": ["x", "yz", 12], "n": -1.5e3, "o": {"a": [true, null, {"b": "c"}]}, "e": []}`
	want := []string{
		`{}`,
		`{"name":"Ada \"L\""}`,
		`{"name":"Ada \"L\"","tags":[]}`,
		`{"name":"Ada \"L\"","tags":["x"]}`,
		`{"name":"Ada \"L\"","tags":["x","yz"]}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12]}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12],"n":-1.5e3}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12],"n":-1.5e3,"o":{}}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12],"n":-1.5e3,"o":{"a":[]}}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12],"n":-1.5e3,"o":{"a":[true]}}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12],"n":-1.5e3,"o":{"a":[true,null]}}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12],"n":-1.5e3,"o":{"a":[true,null,{}]}}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12],"n":-1.5e3,"o":{"a":[true,null,{"b":"c"}]}}`,
		`{"name":"Ada \"L\"","tags":["x","yz",12],"n":-1.5e3,"o":{"a":[true,null,{"b":"c"}]},"e":[]}`,
	}
	r := NewReader(0, false)
	var seen []string
	for i := 1; i <= len(src); i++ {
		st := r.Feed([]byte(src[:i]), false)
		if st == Fail {
			t.Fatalf("failed at %d: %s", i, r.FailMsg)
		}
		n := r.Partial()
		if n == nil {
			continue
		}
		var b bytes.Buffer
		if err := json.Compact(&b, AppendJSON(nil, n, []byte(src[:i]))); err != nil {
			t.Fatalf("at %d: %v", i, err)
		}
		got := b.String()
		if len(seen) == 0 || seen[len(seen)-1] != got {
			seen = append(seen, got)
		}
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("partials:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if NewReader(0, false).Partial() != nil {
		t.Error("a partial before any input")
	}
}
