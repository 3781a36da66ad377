// Package acptest holds what ptk acp's end-to-end test runs: the official
// ACP TypeScript SDK (@agentclientprotocol/sdk, from npm, at the version of
// npm/package-lock.json) and the test client written with it,
// client.test.mjs, which drives a real `ptk acp` under node --test.
package acptest

import (
	_ "embed"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptkit/ptk/internal/npmtest"
)

//go:embed npm/package.json
var packageJSON []byte

//go:embed npm/package-lock.json
var packageLock []byte

//go:embed client.test.mjs
var clientTest []byte

// SDK is the TypeScript SDK's npm install. .ci/run installs it and sets
// PTK_TEST_ACP_NPM and PTK_TEST_ACP_REQUIRED=1.
var SDK = &npmtest.Packages{
	Name: "acp-test", PackageJSON: packageJSON, Lock: packageLock,
	DirEnv: "PTK_TEST_ACP_NPM", RequiredEnv: "PTK_TEST_ACP_REQUIRED",
	Bins: []string{"@agentclientprotocol/sdk/package.json"},
}

// Client writes the test client into a new folder beside a link to the
// SDK's node_modules, and returns the script's path, to run with
// node --test.
func Client(t testing.TB) string {
	t.Helper()
	modules := SDK.NodeModules(t)
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "client.test.mjs")
	if err := os.WriteFile(script, clientTest, 0o644); err != nil {
		t.Fatal(err)
	}
	return script
}
