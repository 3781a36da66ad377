// Package secretenv keeps secrets out of the environment of the programs a
// model or a third party controls: the bash tool's commands (sandboxed or
// not) and MCP servers started over stdio. Those programs inherit ptk's
// environment, which holds the provider keys ptk itself reads
// (OPENAI_API_KEY, ANTHROPIC_API_KEY, PTK_API_KEY), the keys of ptk serve's
// clients (PTK_API_KEYS), the trace store's address with its password
// (PTK_TRACE_DB, PGPASSWORD, DATABASE_URL) and the OpenTelemetry
// exporter's headers; a command that prints its environment would hand
// them to the model, and through it to whoever wrote the file or page that
// told it to.
//
// A variable is held back when its name says it holds a secret (one of its
// words, split at "_", is KEY, TOKEN, SECRET, PASSWORD and the like, see
// [Secret]), when ptk reads it as one (the list in [Secret]), or when its
// value is a URL with a password in it (postgres://user:pass@host). The
// test is by name and shape, so a secret under a name that says nothing
// (MY_SERVICE=hunter2) is passed on: name it to [Filter.Hide]. A variable
// the program needs (a GITHUB_TOKEN for gh) is passed on when named to
// [Filter.Pass].
package secretenv

import (
	"net/url"
	"slices"
	"strings"
)

// secretWords are the words, of a name split at "_", that mark it as
// holding a secret.
var secretWords = []string{
	"KEY", "KEYS", "APIKEY", "APIKEYS", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY",
	"TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD",
	"PASS", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "CREDS", "PAT", "DSN",
	"COOKIE", "COOKIES",
}

// secretEnds end words that mark a name as a secret's: PGPASSWORD,
// GHTOKEN.
var secretEnds = []string{"PASSWORD", "PASSWD", "SECRET", "APIKEY", "TOKEN"}

// secretNames are variables whose names do not say so but that ptk or the
// programs it talks to read as secrets or as a way in.
var secretNames = []string{
	"PTK_TRACE_DB",                      // may be postgres://user:password@host
	"PTK_BROWSER",                       // a debugging port is a key to a signed-in browser
	"DATABASE_URL",                      // the usual home of a DSN
	"OTEL_EXPORTER_OTLP_HEADERS",        // Authorization for the trace backend
	"OTEL_EXPORTER_OTLP_TRACES_HEADERS", // the same
	"PGSERVICEFILE", "PGPASSFILE",       // where libpq finds passwords
	"MYSQL_PWD",
	"NETRC", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
}

// Secret reports whether the variable name=value holds a secret by its
// name or shape: a word of its name (split at "_", in any case) in the
// lists above, a variable ptk knows to hold one, or a value that is a URL
// with a password.
func Secret(name, value string) bool {
	up := strings.ToUpper(name)
	if slices.Contains(secretNames, up) {
		return true
	}
	for w := range strings.SplitSeq(up, "_") {
		if slices.Contains(secretWords, w) {
			return true
		}
		for _, end := range secretEnds {
			if strings.HasSuffix(w, end) {
				return true
			}
		}
	}
	return hasPassword(value)
}

// hasPassword reports whether v is a URL that holds a password, as
// postgres://ptk:secret@db/ptk or https://user:token@proxy:3128 do.
func hasPassword(v string) bool {
	i := strings.Index(v, "://")
	if i <= 0 || !strings.Contains(v[i:], "@") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		// Not a URL Go reads, yet scheme://…:…@: take it as one.
		rest := v[i+3:]
		at := strings.LastIndex(rest, "@")
		return at > 0 && strings.Contains(rest[:at], ":")
	}
	if u.User == nil {
		return false
	}
	_, set := u.User.Password()
	return set
}

// A Filter says which variables of an environment are passed on. The zero
// Filter holds back what [Secret] says is one. It does not change once
// made and is safe for concurrent use.
type Filter struct {
	pass, hide []string
}

// Pass returns a copy of f that passes on the variables named, even when
// they look like secrets: the user asked for them.
func (f Filter) Pass(names ...string) Filter {
	f.pass = append(slices.Clip(f.pass), names...)
	return f
}

// Hide returns a copy of f that also holds back the variables named (a
// catalog's api_key_env, say), whatever their names look like.
func (f Filter) Hide(names ...string) Filter {
	f.hide = append(slices.Clip(f.hide), names...)
	return f
}

// Apply returns env (NAME=value strings) without the variables f holds
// back, and their names, in order. A string without "=" is dropped.
func (f Filter) Apply(env []string) (kept, held []string) {
	kept = make([]string, 0, len(env))
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if f.held(name, value) {
			held = append(held, name)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, held
}

func (f Filter) held(name, value string) bool {
	if slices.Contains(f.pass, name) {
		return false
	}
	return slices.Contains(f.hide, name) || Secret(name, value)
}
