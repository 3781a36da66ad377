// Package npmtest installs the npm packages a test runs against (a client
// or a server nobody here wrote), at the versions of a pinned lock file,
// into the user's cache, the way .ci/run does, so that a test run on a
// developer's machine finds them too.
package npmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Packages are the npm packages of one package.json and its lock.
type Packages struct {
	// Name names the cache folder: NAME-<hash of the files>.
	Name string
	// JSON and Lock are package.json and package-lock.json.
	JSON, Lock []byte
	// DirEnv names the variable that gives the folder instead (.ci/run
	// sets it); RequiredEnv, set to 1, makes a missing install fail the
	// test instead of skipping it.
	DirEnv, RequiredEnv string
	// Marker is a path under node_modules that exists once the install is
	// complete.
	Marker string

	once   sync.Once
	dir    string
	errMsg string
}

// Dir returns the folder the packages are installed in: $DirEnv, or a
// folder of the user's cache named by a hash of the files.
func (p *Packages) Dir() string {
	if d := os.Getenv(p.DirEnv); d != "" {
		return d
	}
	sum := sha256.Sum256(append(append([]byte{}, p.JSON...), p.Lock...))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "ptk", p.Name+"-"+hex.EncodeToString(sum[:6]))
}

// NodeModules returns the node_modules folder, installing the packages
// with npm ci the first time (into a temporary folder, then moved in
// place, so that tests of several packages may race). It skips the test,
// with the reason, when node or npm is missing or the install fails, or
// fails it when $RequiredEnv is 1.
func (p *Packages) NodeModules(t testing.TB) string {
	t.Helper()
	p.once.Do(func() { p.dir, p.errMsg = p.install() })
	if p.errMsg != "" {
		if os.Getenv(p.RequiredEnv) == "1" {
			t.Fatalf("%s (%s=1)", p.errMsg, p.RequiredEnv)
		}
		t.Skip(p.errMsg)
	}
	return p.dir
}

// Node returns the path of node, or skips (fails) as NodeModules does.
func (p *Packages) Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(p.RequiredEnv) == "1" {
			t.Fatalf("node is not installed (%s=1)", p.RequiredEnv)
		}
		t.Skip("node is not installed")
	}
	return node
}

func (p *Packages) install() (string, string) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node is not installed"
	}
	final := p.Dir()
	modules := filepath.Join(final, "node_modules")
	if p.ready(modules) {
		return modules, ""
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "npm is not installed: the test needs it to install " + p.Name
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", "cannot make the npm folder: " + err.Error()
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".installing-")
	if err != nil {
		return "", "cannot make the npm folder: " + err.Error()
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), p.JSON, 0o644); err != nil {
		return "", err.Error()
	}
	if err := os.WriteFile(filepath.Join(tmp, "package-lock.json"), p.Lock, 0o644); err != nil {
		return "", err.Error()
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", "--ignore-scripts")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		s := string(out)
		if len(s) > 600 {
			s = "…" + s[len(s)-600:]
		}
		return "", "npm ci of " + p.Name + " failed (no network to the npm registry?): " + err.Error() + ": " + s
	}
	if err := os.Rename(tmp, final); err != nil && !p.ready(modules) {
		return "", "cannot move the npm folder in place: " + err.Error()
	}
	return modules, ""
}

func (p *Packages) ready(modules string) bool {
	_, err := os.Stat(filepath.Join(modules, p.Marker))
	return err == nil
}
