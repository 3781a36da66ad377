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

// The attack: a key under a name that says nothing (a model catalog's
// api_key_env MY_SERVICE) passes the filter by name and shape; named in
// Options.HiddenEnv, a stdio server never gets it — unless its own "env" in
// mcp.json gives it, which the user wrote.
func TestStdioServerDoesNotInheritHiddenEnv(t *testing.T) {
	t.Setenv("MY_SERVICE", "hunter2-planted")
	t.Setenv("AUDIT_VISIBLE", "visible-value")
	c, err := startFake(t, Options{HiddenEnv: []string{"MY_SERVICE"}}, map[string]ServerConfig{
		"srv":   fakeConfig("environ", "SERVER_TOKEN", "given-in-mcp-json"),
		"given": fakeConfig("environ", "MY_SERVICE", "given-by-the-user"),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := call(t, toolNamed(t, c, "srv__environ"), `{}`).Content
	if strings.Contains(got, "hunter2-planted") {
		t.Errorf("the server received MY_SERVICE:\n%s", got)
	}
	if !strings.Contains(got, "AUDIT_VISIBLE=visible-value") {
		t.Errorf("the server's environment lacks AUDIT_VISIBLE:\n%s", got)
	}
	given := call(t, toolNamed(t, c, "given__environ"), `{}`).Content
	if !strings.Contains(given, "MY_SERVICE=given-by-the-user") || strings.Contains(given, "hunter2-planted") {
		t.Errorf("the server whose env names MY_SERVICE got:\n%s", given)
	}
}
