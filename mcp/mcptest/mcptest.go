// Package mcptest installs and finds the MCP servers ptk's tests run
// against: @modelcontextprotocol/server-filesystem, server-everything and
// the inspector, from npm, at the versions of npm/package-lock.json.
package mcptest

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

//go:embed npm/package.json
var packageJSON []byte

//go:embed npm/package-lock.json
var packageLock []byte

// RequiredEnv, set to 1 (as .ci/run does), makes a test fail instead of
// skip when node, npm or the packages are missing.
const RequiredEnv = "PTK_TEST_MCP_REQUIRED"

// Dir returns the folder the packages are installed in:
// $PTK_TEST_MCP_NPM, or a folder of the user's cache named by a hash of
// the lock file, so that a new lock installs anew.
func Dir() string {
	if d := os.Getenv("PTK_TEST_MCP_NPM"); d != "" {
		return d
	}
	sum := sha256.Sum256(append(append([]byte{}, packageJSON...), packageLock...))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "ptk", "mcp-test-npm-"+hex.EncodeToString(sum[:6]))
}

var (
	once   sync.Once
	dir    string
	errMsg string
)

// NodeModules returns the node_modules folder with the packages, installing
// them with npm ci the first time (into a temporary folder, then moved in
// place, so that tests of several packages may race). It skips the test,
// with the reason, when node or npm is missing or the install fails — or
// fails it when PTK_TEST_MCP_REQUIRED=1.
func NodeModules(t testing.TB) string {
	t.Helper()
	once.Do(func() { dir, errMsg = install() })
	if errMsg != "" {
		if os.Getenv(RequiredEnv) == "1" {
			t.Fatalf("%s (%s=1)", errMsg, RequiredEnv)
		}
		t.Skip(errMsg)
	}
	return dir
}

// Node returns the path of node, or skips as NodeModules does.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(RequiredEnv) == "1" {
			t.Fatalf("node is not installed (%s=1)", RequiredEnv)
		}
		t.Skip("node is not installed: the MCP tests against real servers need node and npm")
	}
	return node
}

// Bin returns the path of a package's script in node_modules/.bin.
func Bin(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(NodeModules(t), ".bin", name)
}

func install() (string, string) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node is not installed: the MCP tests against real servers need node and npm"
	}
	final := Dir()
	modules := filepath.Join(final, "node_modules")
	if ready(modules) {
		return modules, ""
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "npm is not installed: the MCP tests against real servers need it to install them"
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", "cannot make the npm folder: " + err.Error()
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".installing-")
	if err != nil {
		return "", "cannot make the npm folder: " + err.Error()
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), packageJSON, 0o644); err != nil {
		return "", err.Error()
	}
	if err := os.WriteFile(filepath.Join(tmp, "package-lock.json"), packageLock, 0o644); err != nil {
		return "", err.Error()
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", "--ignore-scripts")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "npm ci of the MCP test servers failed (no network to the npm registry?): " + err.Error() + ": " + lastLines(string(out))
	}
	if err := os.Rename(tmp, final); err != nil && !ready(modules) {
		return "", "cannot move the npm folder in place: " + err.Error()
	}
	return modules, ""
}

func ready(modules string) bool {
	for _, bin := range []string{"mcp-server-everything", "mcp-server-filesystem", "mcp-inspector"} {
		if _, err := os.Stat(filepath.Join(modules, ".bin", bin)); err != nil {
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
