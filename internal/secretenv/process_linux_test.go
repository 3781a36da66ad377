package secretenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holderEnv makes the test binary a process that holds a secret in its
// environment, calls HideProcess when asked, says its pid and waits.
const holderEnv = "SECRETENV_TEST_HOLDER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(holderEnv); mode != "" {
		if mode == "hide" {
			if err := HideProcess(); err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
		}
		fmt.Println(os.Getpid())
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The attack: a command the model runs without the sandbox is a process
// of the same user as ptk, so it could read ptk's own environment
// (/proc/PID/environ, where the provider keys are that secretenv keeps out
// of its own) or its memory. After HideProcess, ptk's /proc entries are
// root's and it cannot be traced by its user.
func TestHideProcess(t *testing.T) {
	const secret = "sk-planted-in-ptk-environment"
	asUser := func(cmd *exec.Cmd) {
		// As another user than root, for whom /proc is not open anyway:
		// both processes as nobody.
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
	}
	exe := os.Args[0]
	if os.Geteuid() == 0 {
		// A copy nobody may run: the build's folder is root's alone.
		dir, err := os.MkdirTemp("", "secretenv-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		exe = filepath.Join(dir, "holder")
		if err := os.WriteFile(exe, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []string{"plain", "hide"} {
		t.Run(mode, func(t *testing.T) {
			holder := exec.Command(exe, "-test.run=^$")
			holder.Env = append(os.Environ(), holderEnv+"="+mode, "OPENAI_API_KEY="+secret)
			asUser(holder)
			out, err := holder.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := holder.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { holder.Process.Kill(); holder.Wait() }()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("the holder said %q", line)
			}
			reader := exec.Command("cat", fmt.Sprintf("/proc/%d/environ", pid))
			asUser(reader)
			got, _ := reader.CombinedOutput()
			leaked := strings.Contains(string(got), secret)
			if mode == "plain" && !leaked {
				t.Skipf("a process of the same user cannot read another's environment here: %s", got)
			}
			if mode == "hide" && leaked {
				t.Error("a process of the same user read the environment of a hidden process")
			}
		})
	}
}
