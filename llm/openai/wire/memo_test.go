package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk/llm/openai/wire"
)

// memoRequest is a request whose tools (over MemoMinLen) begin with the
// same bytes whatever schema is given: two clients' tools that the memo
// finds under one head and must tell apart by the rest.
func memoRequest(user, schema string) []byte {
	return fmt.Appendf(nil, `{"model":"m","messages":[{"role":"user","content":%q}],"tools":[{"type":"function","function":{"name":"bash","description":"%s","parameters":%s,"strict":true}}],"stream":false}`,
		user, strings.Repeat("Run a command in the workspace. ", 10), schema)
}

// Tools taken from the memo are the request's own: their schemas are
// slices of the request's body (changing it changes them, and nothing
// else), their Strict flags their own, and a request whose tools begin as
// another's, but differ, gets its own.
func TestRequestToolsMemoSharesNothing(t *testing.T) {
	schemaA := `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`
	schemaB := `{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}}}`
	var reqs []wire.Request
	var bodies [][]byte
	for i := range 4 {
		body := memoRequest(fmt.Sprint("question ", i), schemaA)
		var r wire.Request
		if err := wire.UnmarshalRequest(body, &r); err != nil {
			t.Fatal(err)
		}
		reqs, bodies = append(reqs, r), append(bodies, body)
	}
	// The last two were taken from the memo (kept on the second).
	if wire.ToolsMemoSize() == 0 {
		t.Fatal("the memo kept no tools")
	}
	for i, r := range reqs {
		f := r.Tools[0].Function
		if string(f.Parameters) != schemaA || !*f.Strict || r.Messages[0].Content.Text != fmt.Sprint("question ", i) {
			t.Fatalf("request %d read as %+v", i, r)
		}
	}
	// Each request's schema is in its own body.
	at := bytes.Index(bodies[3], []byte(`"command"`))
	bodies[3][at+1] = 'X'
	if got := string(reqs[3].Tools[0].Function.Parameters); !strings.Contains(got, `"Xommand"`) {
		t.Errorf("the schema is not a slice of the request's body: %s", got)
	}
	for i := range 3 {
		if got := string(reqs[i].Tools[0].Function.Parameters); got != schemaA {
			t.Errorf("changing request 3's body changed request %d's schema: %s", i, got)
		}
	}
	*reqs[3].Tools[0].Function.Strict = false
	if !*reqs[2].Tools[0].Function.Strict {
		t.Error("two requests share a Strict flag")
	}
	// The memo still reads what was kept, not what request 3 changed.
	var again wire.Request
	if err := wire.UnmarshalRequest(memoRequest("again", schemaA), &again); err != nil {
		t.Fatal(err)
	}
	if f := again.Tools[0].Function; string(f.Parameters) != schemaA || !*f.Strict {
		t.Errorf("after another request changed its own, the memo read %s, strict %v", f.Parameters, *f.Strict)
	}
	// Tools beginning as the kept ones, but not the same, are read anew.
	for range 3 {
		var b wire.Request
		if err := wire.UnmarshalRequest(memoRequest("b", schemaB), &b); err != nil {
			t.Fatal(err)
		}
		if got := string(b.Tools[0].Function.Parameters); got != schemaB {
			t.Fatalf("tools that begin as the kept ones read as %s", got)
		}
	}
}

// Requests read at once on many goroutines, each with one of several
// tool sets, each get what encoding/json reads (run with -race).
func TestRequestToolsMemoConcurrent(t *testing.T) {
	var bodies [][]byte
	for i := range 6 {
		bodies = append(bodies, memoRequest("q", fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string","description":"%s"}}}`, i, strings.Repeat("x", i*40))))
	}
	want := make([]wire.Request, len(bodies))
	for i, b := range bodies {
		if err := json.Unmarshal(b, &want[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				i := (g + n) % len(bodies)
				var r wire.Request
				if err := wire.UnmarshalRequest(bytes.Clone(bodies[i]), &r); err != nil {
					t.Error(err)
					return
				}
				if !reflect.DeepEqual(r, want[i]) {
					t.Errorf("request %d read as %+v, want %+v", i, r, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
