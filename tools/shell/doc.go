// Package shell holds the bash tool a coding assistant gives a model: it runs
// a command with "bash -c" in a workspace directory and returns its output
// and exit code.
//
// Bash cannot be confined to the workspace by checking paths: a command can
// name any file, change directory, expand variables or start any program.
// Without [WithSandbox] a command can do whatever the user running ptk can
// do, anywhere; the workspace is only where it starts. Only the sandbox
// confines it: with [WithSandbox] every command runs under bubblewrap
// (ptk's one sandbox, shared with ptk distill), in new namespaces of every
// kind, so with no network and its own PID namespace; as nobody in a new
// user namespace with every capability dropped, so that even when ptk runs
// as root the command cannot mount, remount or make a namespace in which it
// would be root again; and it sees only the system (/usr and /etc, less the
// files in /etc that only their owner may read), the workspace (writable),
// a private /tmp and an empty private home directory, and the workspace's
// .git (a folder or a file, when there is one as a command starts)
// read-only, so that a command cannot plant a hook, core.fsmonitor or a
// repointed .git file for the user's own git to run later: the real home
// directory, /run, /var and the rest of the host, its sockets included, are
// not there. Toolchains and caches under the home directory are therefore
// absent too: [WithReadOnly] shows them read-only, and caches that need
// writing can be pointed at /tmp or the workspace (GOCACHE,
// npm_config_cache). Each process has limits on its memory, the size of
// the files it writes and (unless ptk runs as root) the processes it may
// start ([WithSandboxLimits]). The workspace may not be, or hold, the home
// directory.
//
// Sandboxed or not, a command's environment is ptk's without its secrets
// (internal/secretenv): no variable whose name says it holds a key, a token,
// a password or a credential (OPENAI_API_KEY, ANTHROPIC_API_KEY,
// PTK_API_KEY, PTK_API_KEYS, GITHUB_TOKEN, PGPASSWORD), none that ptk reads
// as one (PTK_TRACE_DB, DATABASE_URL, OTEL_EXPORTER_OTLP_HEADERS), and none
// whose value is a URL with a password. [WithPassEnv] passes a variable on
// that a command needs; [WithHiddenEnv] holds back one whose name does not
// say it is a secret. Only the environment is filtered: without the sandbox
// a command can still read the files that hold secrets (~/.config, ~/.ssh).
//
// Each command runs with stdin empty (/dev/null) and PTK=1 added to the
// environment. Nothing a command starts outlives its call: on Linux the
// command runs under a reaper, a second copy of the running executable
// that makes itself a child subreaper, so that processes that leave the
// command's session (setsid, a double fork, nohup, a daemon) stay its
// descendants; when the command ends every one of them is killed, and on
// a timeout they get SIGTERM and, termGrace (2s) later, SIGKILL. The
// reaper is started through /proc/self/exe with PTK_SHELL_REAPER set in its
// environment; this package's init function turns that process into the
// reaper before main runs (init functions of packages initialised earlier
// do run in it). If the program dies, the reaper kills the command. A
// program started outside the command's tree (through a service manager
// such as systemd-run, at or a D-Bus activation) is beyond its reach, and
// so is what a command starts in another session after it kills the reaper
// itself (kill -9 $PPID): a process can always kill a supervisor run by the
// same user; only the sandbox is a wall. On
// other systems only the command's process group is killed, and a process
// that leaves it escapes unless sandboxed, where the PID namespace ends
// with the command. Stdout and stderr are read from one pipe, in the order
// written, into a buffer that keeps the head and the tail of the output, so
// memory stays bounded however much a command prints.
//
// A non-zero exit code is reported in the result, not as an error: the model
// reads it. A timeout, a bad argument or a command that could not start is a
// result with IsError set; a Go error is returned only when the context ends.
package shell
