// Package agentnpmtest installs and finds the clients of the agents' APIs that
// the gateway's tests run: the official Anthropic and OpenAI SDKs, Claude
// Code and the Codex CLI, from npm, at the versions of npm/package-lock.json.
package agentnpmtest

import (
	_ "embed"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ptkit/ptk/internal/npmtest"
)

//go:embed npm/package.json
var packageJSON []byte

//go:embed npm/package-lock.json
var packageLock []byte

// RequiredEnv, set to 1 (as .ci/run does), makes a test fail instead of
// skip when node, npm or the packages are missing; DirEnv names the folder
// .ci/run installed them in.
const (
	RequiredEnv = "PTK_TEST_AGENTS_REQUIRED"
	DirEnv      = "PTK_TEST_AGENTS_NPM"
)

var packages = &npmtest.Packages{
	Name: "agents-test", PackageJSON: packageJSON, Lock: packageLock,
	DirEnv: DirEnv, RequiredEnv: RequiredEnv,
	Bins: []string{"@anthropic-ai/sdk/package.json", "openai/package.json", claudeCode(), codex()},
}

// NodeModules returns the node_modules folder, installing the packages the
// first time; it skips the test (fails it under $RequiredEnv) when it
// cannot.
func NodeModules(t testing.TB) string { return packages.NodeModules(t) }

// Node returns the path of node.
func Node(t testing.TB) string { return packages.Node(t) }

// ClaudeCode returns the path of Claude Code's binary, from its platform
// package (npm may skip the postinstall that links it in place).
func ClaudeCode(t testing.TB) string { return filepath.Join(NodeModules(t), claudeCode()) }

// Codex returns the path of the Codex CLI's binary, from its platform
// package.
func Codex(t testing.TB) string { return filepath.Join(NodeModules(t), codex()) }

func claudeCode() string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	return filepath.Join("@anthropic-ai", "claude-code-"+runtime.GOOS+"-"+arch, "claude")
}

func codex() string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	triple := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH] + "-unknown-linux-musl"
	return filepath.Join("@openai", "codex-"+runtime.GOOS+"-"+arch, "vendor", triple, "bin", "codex")
}
