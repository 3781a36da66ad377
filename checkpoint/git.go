package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// findGit finds the git program on the PATH.
func findGit() (string, error) {
	p, err := exec.LookPath("git")
	if err != nil {
		return "", ErrNoGit
	}
	return p, nil
}

// A gitError is a git command that failed: its arguments and what it said.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("checkpoint: git %s: %s", e.args[0], msg)
}

func (e *gitError) Unwrap() error { return e.err }

// run runs git on the shadow repository and the workspace, with stdin,
// and returns its output without the last newline.
func (s *Store) run(ctx context.Context, stdin []byte, args ...string) (string, error) {
	out, err := s.runBytes(ctx, stdin, args...)
	return trimNL(out), err
}

func (s *Store) runBytes(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	// safe.directory: the workspace may belong to another user (root in a
	// user's folder); the repository is ours, and nothing in the workspace
	// is read as git configuration.
	full := append([]string{"-c", "safe.directory=*", "-c", "core.excludesFile=" + os.DevNull, "-c", "core.attributesFile=" + os.DevNull}, args...)
	cmd := exec.CommandContext(ctx, s.git, full...)
	cmd.Env = s.env()
	cmd.Dir = s.workspace
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return stdout.Bytes(), &gitError{args: args, stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}

// env is git's environment: the caller's, without any GIT_ variable (a
// GIT_DIR of the caller's would point git at another repository), with the
// shadow repository and the workspace, and without the user's and the
// system's configuration, whose hooks, signing, filters and fsmonitor
// would run here otherwise.
func (s *Store) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_DIR="+s.dir,
		"GIT_WORK_TREE="+s.workspace,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=ptk", "GIT_AUTHOR_EMAIL=ptk@localhost",
		"GIT_COMMITTER_NAME=ptk", "GIT_COMMITTER_EMAIL=ptk@localhost",
		"LC_ALL=C",
	)
}

// errLocked wraps a lock that could not be taken.
var errLocked = errors.New("checkpoint: the shadow repository is locked")
