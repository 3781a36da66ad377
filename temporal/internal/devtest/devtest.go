// Package devtest starts a real Temporal server for the temporal module's
// tests: ptk-temporal-dev (the devserver module, Temporal's temporaltest
// server), as a child process that stops when the tests' end closes its
// standard input.
//
// $PTK_TEMPORAL_DEV names its binary; without it, it is built into ptk's
// cache folder under a hash of its sources, once for every test package
// and every CI run that finds it there.
package devtest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Binary returns the dev server's binary, built from the devserver module
// in dir when it is not in the cache.
func Binary(dir string) (string, error) {
	if b := os.Getenv("PTK_TEMPORAL_DEV"); b != "" {
		return b, nil
	}
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "ptk", "temporal-dev", hex.EncodeToString(h.Sum(nil))[:16], "ptk-temporal-dev")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	// built beside, then renamed: a test package that runs at the same
	// time never starts a binary half written
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the dev server: %w", err)
	}
	return bin, os.Rename(tmp, bin)
}

// Start starts the dev server of the devserver module in dir on a free
// loopback port, with the namespace "default", and returns its address
// and the function that stops it.
func Start(dir string) (addr string, stop func(), err error) {
	bin, err := Binary(dir)
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--stdin", "--namespace", "default")
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return "", nil, fmt.Errorf("the dev server did not start: %v", err)
	}
	return strings.TrimSpace(line), func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}, nil
}
