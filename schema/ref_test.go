package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The attack: a schema from outside (an MCP server's tool, a gateway
// client's tools, a ptools file) whose $ref names a file of the machine
// ptk runs on. The validator loaded it: a missing file said so (an
// oracle), and a JSON file's values came back in the check of every call
// ("is not one of \"SECRET\""), to the model and through the gateway to
// its client; a FIFO hung the compile. A schema is its own world: a $ref
// outside it is refused, and nothing is read.
func TestRefOutsideTheSchemaIsNotLoaded(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "creds.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string","enum":["S3CR3T-PLANTED"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{
		`{"type":"object","properties":{"a":{"$ref":"file://` + secret + `"}}}`,
		`{"$id":"file://` + dir + `/x.json","type":"object","properties":{"a":{"$ref":"creds.json"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"file://` + dir + `/missing.json"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"file://` + fifo + `"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
	} {
		done := make(chan struct{})
		var s *Schema
		var err error
		go func() {
			defer close(done)
			s, err = Compile(json.RawMessage(raw))
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the compile hangs", raw)
		}
		if err == nil {
			msg := ""
			if probs := s.Validate(json.RawMessage(`{"a":"guess"}`)); probs != nil {
				msg = probs.Error()
			}
			t.Errorf("%s: compiled, and a check says %q", raw, msg)
			continue
		}
		if strings.Contains(err.Error(), "S3CR3T") || strings.Contains(err.Error(), "no such file") {
			t.Errorf("%s: the error tells what is on the disk: %v", raw, err)
		}
		if !strings.Contains(err.Error(), "outside") {
			t.Errorf("%s: the error does not say why: %v", raw, err)
		}
	}
	// References inside the schema still work.
	s, err := Compile(json.RawMessage(`{"$defs":{"c":{"enum":["red","blue"]}},"type":"object","properties":{"a":{"$ref":"#/$defs/c"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if probs := s.Validate(json.RawMessage(`{"a":"green"}`)); probs == nil || !strings.Contains(probs.Error(), "red") {
		t.Errorf("an inner $ref is not checked: %v", probs)
	}
}
