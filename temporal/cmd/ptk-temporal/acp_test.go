package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk/acp/acptest"
)

// TestACPDurable: 'ptk acp --temporal' driven by the official ACP
// TypeScript SDK (acp/acptest's npm install) as the editor, under node
// --test (testdata/acp_durable.test.mjs): each prompt turn is a durable
// run on the worker; the call the run waits for becomes the editor's
// session/request_permission, and its answer the run's signal (rejected:
// denied, the file untouched; granted: the worker writes); session/cancel
// cancels the durable run, which ends canceled in Temporal; the session's
// mode goes with each run (auto-edit: the write runs without a question).
func TestACPDurable(t *testing.T) {
	need(t)
	node := acptest.SDK.Node(t)
	modules := acptest.SDK.NodeModules(t)
	environ, ws := testEnv(t, "acp", "read_file,write_file")
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/acp_durable.test.mjs")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "acp_durable.test.mjs")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--test", "--test-reporter=spec", script)
	cmd.Dir = dir
	cmd.Env = append(environ, "PTK_BIN="+env.ptk, "PTK_TEST_TEMPORAL="+env.addr, "PTK_TEST_WORKER_WS="+ws,
		"PTK_TEST_WORKSPACE="+t.TempDir(), "PTK_TEST_TRACE_DB="+filepath.Join(t.TempDir(), "acp.db"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test acp_durable.test.mjs: %v\n%s", err, out)
	}
	t.Logf("node --test acp_durable.test.mjs:\n%s", out)
	if !strings.Contains(string(out), "pass 7") {
		t.Errorf("the client's tests did not all run:\n%s", out)
	}
	checkCanceled(t, environ, "write canceled", "write granted")
}

// checkCanceled checks in the worker's trace store that the durable run
// of the prompt canceled ended canceled, and that of done did not.
func checkCanceled(t *testing.T, environ []string, canceled, done string) {
	t.Helper()
	runs := workerRuns(t, environ, canceled)
	if r := runs[canceled]; r.ErrorCode != "CANCELED" {
		t.Errorf("the durable run of %q: %+v (all: %+v)", canceled, r, runs)
	}
	if r := runs[done]; r.ID == "" || r.ErrorCode != "" {
		t.Errorf("the durable run of %q: %+v", done, r)
	}
}
