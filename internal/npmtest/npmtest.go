// Package npmtest installs the npm packages a test runs against (clients
// and servers nobody here wrote), from a pinned package.json and
// package-lock.json, once per lock, into the user's cache.
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

// Packages are the packages of one pinned lock.
type Packages struct {
	// Name names the cache folder: ptk/NAME-npm-HASH.
	Name string
	// PackageJSON and Lock are the files npm ci installs from.
	PackageJSON, Lock []byte
	// DirEnv names a variable that, when set, is the folder the packages
	// are in (.ci/run installs them there first).
	DirEnv string
	// RequiredEnv names a variable that, set to 1 (as .ci/run does), makes
	// a test fail instead of skip when node, npm or the packages are
	// missing.
	RequiredEnv string
	// Bins are paths under node_modules that must exist once installed.
	Bins []string

	once   sync.Once
	dir    string
	errMsg string
}

// Dir returns the folder the packages are installed in: $DirEnv, or a
// folder of the user's cache named by a hash of the lock, so that a new
// lock installs anew.
func (p *Packages) Dir() string {
	if d := os.Getenv(p.DirEnv); d != "" {
		return d
	}
	sum := sha256.Sum256(append(append([]byte{}, p.PackageJSON...), p.Lock...))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "ptk", p.Name+"-npm-"+hex.EncodeToString(sum[:6]))
}

// NodeModules returns the node_modules folder with the packages,
// installing them with npm ci the first time (into a temporary folder,
// then moved in place, so that tests of several packages may race). It
// skips the test, with the reason, when node or npm is missing or the
// install fails, or fails it when $RequiredEnv is 1.
func (p *Packages) NodeModules(t testing.TB) string {
	t.Helper()
	p.once.Do(func() { p.dir, p.errMsg = p.install() })
	if p.errMsg != "" {
		p.missing(t, p.errMsg)
	}
	return p.dir
}

// Node returns the path of node, or skips (fails) as NodeModules does.
func (p *Packages) Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		p.missing(t, "node is not installed")
	}
	return node
}

func (p *Packages) missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(p.RequiredEnv) == "1" {
		t.Fatalf("%s (%s=1)", why, p.RequiredEnv)
	}
	t.Skip(why)
}

func (p *Packages) install() (string, string) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node is not installed: the tests against " + p.Name + " need node and npm"
	}
	final := p.Dir()
	modules := filepath.Join(final, "node_modules")
	if p.ready(modules) {
		return modules, ""
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "npm is not installed: the tests against " + p.Name + " need it to install them"
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", "cannot make the npm folder: " + err.Error()
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".installing-")
	if err != nil {
		return "", "cannot make the npm folder: " + err.Error()
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), p.PackageJSON, 0o644); err != nil {
		return "", err.Error()
	}
	if err := os.WriteFile(filepath.Join(tmp, "package-lock.json"), p.Lock, 0o644); err != nil {
		return "", err.Error()
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", "--ignore-scripts")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "npm ci of " + p.Name + " failed (no network to the npm registry?): " + err.Error() + ": " + lastLines(string(out))
	}
	if err := os.Rename(tmp, final); err != nil && !p.ready(modules) {
		return "", "cannot move the npm folder in place: " + err.Error()
	}
	if !p.ready(modules) {
		return "", "npm ci of " + p.Name + " left out a package this machine needs (" + filepath.Join(p.Bins...) + ")"
	}
	return modules, ""
}

func (p *Packages) ready(modules string) bool {
	for _, bin := range p.Bins {
		if _, err := os.Stat(filepath.Join(modules, bin)); err != nil {
			return false
		}
	}
	return true
}

func lastLines(s string) string {
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}
