//go:build unix

package mcp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCloseStopsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	c, err := startFake(t, Options{}, map[string]ServerConfig{"fake": fakeConfig("tools", "PTK_MCP_FAKE_CHILD", pidFile)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if !alive(pid) {
		t.Fatal("the server's child is not running")
	}
	start := time.Now()
	c.Close()
	t.Logf("Close took %s", time.Since(start))
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the server's child outlived Close")
	}
}

// alive reports whether a process runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}
