package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk/agent"
)

// The attack through ptk serve: a client's tool whose schema is
// {"$ref": "file:///…"} on a JSON file of the machine the gateway runs on.
// The validator loaded it, so a call the model made against it was checked
// against the file's values and the error the model was sent named them
// (`is not one of "S3CR3T…"`): the client, who writes the prompt, could
// have them written back. No part of the file may reach the model or the
// client (schema.TestRefOutsideTheSchemaIsNotLoaded is the mechanism).
func TestClientSchemaCannotReadServerFiles(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "creds.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string","enum":["S3CR3T-ON-THE-SERVER"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t,
		say("<PTK_CALL>\n{\"tool\": \"lookup\", \"args\": {\"a\": \"guess\"}}\n</PTK_CALL>"),
		say("<PTK_CALL>\n{\"tool\": \"lookup\", \"args\": {\"a\": \"guess\"}}\n</PTK_CALL>"),
		say("done"))
	g := newGateway(t, up, agent.ModePTK)
	lookup := function("lookup", "Looks a thing up.", obj{
		"type":       "object",
		"properties": obj{"a": obj{"$ref": "file://" + secret}},
	})
	resp, err := g.client.Chat.Completions.New(context.Background(), chat("Look up a.", lookup))
	answer := ""
	if resp != nil {
		answer = resp.RawJSON()
	}
	if err != nil {
		answer += err.Error()
	}
	if strings.Contains(answer, "S3CR3T") {
		t.Errorf("the client got the file's value: %s", answer)
	}
	for i, r := range up.requests() {
		if strings.Contains(string(r.body), "S3CR3T") {
			t.Errorf("request %d to the model holds the file's value", i)
		}
	}
}
