package shell

import (
	"strings"
	"testing"
)

// plantSecrets sets the variables a user of ptk typically has, each with a
// value the test looks for, and returns the values.
func plantSecrets(t *testing.T) map[string]string {
	t.Helper()
	vars := map[string]string{
		"OPENAI_API_KEY":             "sk-planted-openai",
		"ANTHROPIC_API_KEY":          "sk-ant-planted",
		"PTK_API_KEY":                "planted-ptk-key",
		"PTK_API_KEYS":               "planted-client-key-1,planted-client-key-2",
		"PTK_DASHBOARD_TOKEN":        "planted-dashboard-token",
		"PTK_TRACE_DB":               "postgres://ptk:planted-db-password@127.0.0.1:5432/ptk",
		"PGPASSWORD":                 "planted-pgpassword",
		"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Basic planted-otlp",
		"GITHUB_TOKEN":               "ghp_planted",
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	t.Setenv("AUDIT_VISIBLE", "visible-value")
	return vars
}

// The attack: a model (told by a file or a page it read) runs a command
// that prints its environment, or reads it from /proc. Provider keys, the
// gateway's client keys and the trace store's password must not be there.
func TestSecretsNotInCommandEnvironment(t *testing.T) {
	vars := plantSecrets(t) // t.Setenv: not parallel
	check := func(t *testing.T, sh *Shell) {
		for _, c := range []string{"env", "cat /proc/self/environ | tr '\\0' '\\n'", "echo \"$OPENAI_API_KEY$PGPASSWORD\""} {
			res := run(t, sh, command(c))
			for k, v := range vars {
				if strings.Contains(res.Content, v) {
					t.Errorf("%s: the command saw %s:\n%s", c, k, res.Content)
				}
			}
		}
		if res := run(t, sh, command("echo $AUDIT_VISIBLE $PTK")); !strings.Contains(res.Content, "visible-value 1") {
			t.Errorf("an ordinary variable was lost: %s", res.Content)
		}
	}
	t.Run("plain", func(t *testing.T) {
		sh, _ := newShell(t)
		check(t, sh)
	})
	t.Run("sandboxed", func(t *testing.T) {
		sh, _, _ := sandboxed(t)
		check(t, sh)
	})
	t.Run("passed on when asked", func(t *testing.T) {
		sh, _ := newShell(t, WithPassEnv("GITHUB_TOKEN"))
		if res := run(t, sh, command("echo $GITHUB_TOKEN $OPENAI_API_KEY.")); !strings.Contains(res.Content, "ghp_planted .") {
			t.Errorf("GITHUB_TOKEN was asked for and not passed on, or OPENAI_API_KEY was: %s", res.Content)
		}
	})
	t.Run("hidden when named", func(t *testing.T) {
		t.Setenv("CORP_LLM", "planted-catalog-key")
		sh, _ := newShell(t, WithHiddenEnv("CORP_LLM"))
		if res := run(t, sh, command("echo \"[$CORP_LLM]\"")); !strings.Contains(res.Content, "[]") {
			t.Errorf("a variable named to hide was passed on: %s", res.Content)
		}
	})
}
