package secretenv

import (
	"fmt"
	"slices"
	"testing"
)

func TestSecret(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		secret      bool
	}{
		{"OPENAI_API_KEY", "sk-x", true},
		{"ANTHROPIC_API_KEY", "sk-ant", true},
		{"PTK_API_KEY", "k", true},
		{"PTK_API_KEYS", "a,b", true},
		{"PTK_DASHBOARD_TOKEN", "t", true},
		{"PTK_TRACE_DB", "/home/u/.local/share/ptk/traces.db", true},
		{"PTK_BROWSER", "http://127.0.0.1:9222", true},
		{"PGPASSWORD", "ptk", true},
		{"MYSQL_PWD", "x", true},
		{"PG_PASSWORD", "ptk", true},
		{"DATABASE_URL", "postgres://h/db", true},
		{"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic eA==", true},
		{"AWS_SECRET_ACCESS_KEY", "x", true},
		{"AWS_SESSION_TOKEN", "x", true},
		{"GITHUB_TOKEN", "ghp_x", true},
		{"GH_PAT", "x", true},
		{"HF_TOKEN", "x", true},
		{"npm_config_token", "x", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", "/k.json", true},
		{"SENTRY_DSN", "https://k@o.ingest.sentry.io/1", true},
		{"LOCAL_KEY", "x", true},
		{"MY_DB", "postgres://ptk:hunter2@db:5432/ptk", true},
		{"HTTPS_PROXY", "http://user:pw@proxy:3128", true},
		{"WEIRD", "x://a:b@c d%zz", true},
		{"HTTPS_PROXY", "http://proxy:3128", false},
		{"GIT_URL", "https://user@github.com/x", false},
		{"PATH", "/usr/bin:/bin", false},
		{"HOME", "/root", false},
		{"PTK_MODEL", "qwen3:8b", false},
		{"PTK_BASE_URL", "http://localhost:11434/v1", false},
		{"GOFLAGS", "-mod=mod", false},
		{"TOKENIZERS_PARALLELISM", "false", false},
		{"KEYTIMEOUT", "1", false},
		{"SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1", false},
		{"XDG_SESSION_TYPE", "tty", false},
		{"PWD", "/work", false},
	} {
		name := tc.name
		if got := Secret(name, tc.value); got != tc.secret {
			t.Errorf("Secret(%q, %q) = %v, want %v", name, tc.value, got, tc.secret)
		}
	}
}

func TestFilter(t *testing.T) {
	env := []string{"PATH=/bin", "OPENAI_API_KEY=sk", "GITHUB_TOKEN=g", "MY_SERVICE=hunter2", "noequals", "=x", "TERM=xterm"}
	kept, held := Filter{}.Apply(env)
	if want := []string{"PATH=/bin", "MY_SERVICE=hunter2", "TERM=xterm"}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	if want := []string{"OPENAI_API_KEY", "GITHUB_TOKEN"}; !slices.Equal(held, want) {
		t.Errorf("held %q, want %q", held, want)
	}
	f := Filter{}.Pass("GITHUB_TOKEN").Hide("MY_SERVICE")
	kept, _ = f.Apply(env)
	if want := []string{"PATH=/bin", "GITHUB_TOKEN=g", "TERM=xterm"}; !slices.Equal(kept, want) {
		t.Errorf("with Pass and Hide: kept %q, want %q", kept, want)
	}
	// Filters do not share their lists.
	a := Filter{}.Pass("A")
	b := a.Pass("B")
	c := a.Pass("C")
	if slices.Contains(b.pass, "C") || slices.Contains(c.pass, "B") {
		t.Errorf("copies share a list: %q %q", b.pass, c.pass)
	}
}

// BenchmarkApply filters an environment of 60 variables, about what a
// developer's shell holds, as each bash command does.
func BenchmarkApply(b *testing.B) {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/dev", "OPENAI_API_KEY=sk-x", "PGPASSWORD=x",
		"HTTPS_PROXY=http://proxy:3128", "DATABASE_URL=postgres://u:p@db/x"}
	for i := len(env); i < 60; i++ {
		env = append(env, fmt.Sprintf("SOME_SETTING_%d=value-%d", i, i))
	}
	f := Filter{}.Pass("GITHUB_TOKEN")
	b.ReportAllocs()
	for b.Loop() {
		f.Apply(env)
	}
}
