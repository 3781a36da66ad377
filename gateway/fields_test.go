package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
)

var objects = []string{
	`{}`, ` { } `,
	`{"model":"m","messages":[{"role":"user","content":"a \"}],{\\"}],"seed":42,"user":"u"}`,
	"{ \"a\" : 1 ,\n \"b\" : [ 1, {\"c\": [\"]\"]} ] , \"c\":null, \"d\":true, \"e\": -1.5e3 , \"f\":{} }",
	`{"\u006dodel":"x","k\"q":"v","n":{"a":{"b":[[],[{}]]}},"z":"\\"}`,
	`{"a":1,"a":2}`,
	`{"s":"x" , "t":"y"}`,
	`{"a":"x\\\\","b":"\\\\\\\"q\\\\","c":["\\\"]\\\\",{"d":"\\\\\\\\"}],"e":"\\u0022"}`,
	`{"long":"` + strings.Repeat(`plain text and \"quotes\" `, 20) + `","after":1}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"user":"u-1","metadata":{"k":"v"},"stream":true,"seed":7,"user":"u-2","functions":[]}`,
	"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"k\xff\xfe\":1,\"tools\":null, \"reasoning_effort\" : \"low\" }",
}

// members finds what json.Unmarshal finds.
func TestMembers(t *testing.T) {
	for _, body := range objects {
		checkMembers(t, []byte(body))
	}
}

func checkMembers(t *testing.T, body []byte) {
	t.Helper()
	checkOthers(t, body)
	var want map[string]json.RawMessage
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	got := map[string]json.RawMessage{}
	for _, m := range members(body) {
		got[m.key] = json.RawMessage(body[m.start:m.end])
	}
	if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
		t.Errorf("members(%s) = %s, want %s", body, got, want)
	}
}

// FuzzMembers: members agrees with encoding/json on every valid object.
func FuzzMembers(f *testing.F) {
	for _, body := range objects {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if t := bytes.TrimSpace(body); !json.Valid(body) || len(t) == 0 || t[0] != '{' {
			return
		}
		checkMembers(t, body)
	})
}

// setFields changes the fields and nothing else.
func TestSetFields(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"model":"a","messages":[]}`, `{"model":"b","messages":[]}`},
		{`{"messages":[],"model" : "a" }`, `{"messages":[],"model" : "b" }`},
		{`{"messages":[{"content":"<b>\"model\":\"x\"</b>"}]}`, `{"model":"b","messages":[{"content":"<b>\"model\":\"x\"</b>"}]}`},
		{`{}`, `{"model":"b"}`},
		{` {"\u006dodel":null}`, ` {"\u006dodel":"b"}`},
	}
	for _, tt := range tests {
		got, err := setFields([]byte(tt.body), obj{"model": marshal("b")})
		if err != nil || string(got) != tt.want {
			t.Errorf("setFields(%s) = %s, %v; want %s", tt.body, got, err, tt.want)
		}
	}
	got, err := setFields([]byte(`{"stream":true}`), obj{"model": marshal("m"), "stream_options": json.RawMessage(`{"include_usage":true}`)})
	if want := `{"model":"m","stream_options":{"include_usage":true},"stream":true}`; err != nil || string(got) != want {
		t.Errorf("two fields: %s, %v; want %s", got, err, want)
	}
	for _, body := range objects {
		out, err := setFields([]byte(body), obj{"model": marshal("m")})
		var v map[string]json.RawMessage
		if err != nil || json.Unmarshal(out, &v) != nil || string(v["model"]) != `"m"` {
			t.Errorf("setFields(%s) = %s, %v", body, out, err)
		}
	}
	if _, err := setFields([]byte(`[1]`), obj{"model": marshal("m")}); err == nil {
		t.Error("an array was taken for an object")
	}
}

// requestFields are the JSON names of wire.Request's fields.
var requestFields = map[string]bool{"model": true, "messages": true, "temperature": true, "max_tokens": true,
	"stop": true, "tools": true, "tool_choice": true, "stream": true, "stream_options": true,
	"parallel_tool_calls": true, "max_completion_tokens": true, "n": true}

// The members the Chat Completions decoder finds as it reads a request in
// one pass are those members finds that name no field of the request, in
// order, at the same places.
func checkOthers(t *testing.T, body []byte) {
	t.Helper()
	var c chatAPI
	var x exchange
	if c.read(&x, body) != nil || !c.othersRead {
		return
	}
	var want []member
	for _, m := range members(body) {
		if !requestFields[m.key] {
			want = append(want, m)
		}
	}
	if fmt.Sprint(c.others) != fmt.Sprint(want) {
		t.Errorf("read in one pass, %s has others %v, members finds %v", body, c.others, want)
	}
}
