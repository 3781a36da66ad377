package mcp

import (
	"strings"
	"testing"
)

// The attack: an MCP server started over stdio is a third party's program
// (an npm package, often fetched by npx at start). It must not receive the
// provider keys, the gateway's client keys or the trace store's password
// from ptk's environment; what the user's mcp.json gives it in "env" it
// gets, whatever its name.
func TestStdioServerDoesNotInheritSecrets(t *testing.T) {
	planted := map[string]string{
		"OPENAI_API_KEY":    "sk-planted-openai",
		"ANTHROPIC_API_KEY": "sk-ant-planted",
		"PTK_API_KEYS":      "planted-client-key",
		"PTK_TRACE_DB":      "postgres://ptk:planted-db-password@127.0.0.1/ptk",
		"PGPASSWORD":        "planted-pgpassword",
	}
	for k, v := range planted {
		t.Setenv(k, v)
	}
	t.Setenv("AUDIT_VISIBLE", "visible-value")
	c, err := startFake(t, Options{}, map[string]ServerConfig{
		"srv": fakeConfig("environ", "SERVER_TOKEN", "given-in-mcp-json"),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := call(t, toolNamed(t, c, "srv__environ"), `{}`).Content
	for k, v := range planted {
		if strings.Contains(got, v) {
			t.Errorf("the server received %s", k)
		}
	}
	for _, want := range []string{"SERVER_TOKEN=given-in-mcp-json", "AUDIT_VISIBLE=visible-value", "PATH="} {
		if !strings.Contains(got, want) {
			t.Errorf("the server's environment lacks %s:\n%s", want, got)
		}
	}
}
