package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
)

// editorFiles reads and writes files through the editor (fs/*), which sees
// the user's unsaved changes and puts edits in its buffers.
type editorFiles struct {
	a       *server
	session sdk.SessionId
}

var _ fs.Editor = editorFiles{}

func (e editorFiles) ReadTextFile(ctx context.Context, path string) (string, error) {
	resp, err := e.a.client().ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: e.session, Path: path})
	if err != nil {
		return "", rpcError(err)
	}
	return resp.Content, nil
}

func (e editorFiles) WriteTextFile(ctx context.Context, path, content string) error {
	_, err := e.a.client().WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: e.session, Path: path, Content: content})
	return rpcError(err)
}

// rpcError is an error of the editor's, with its message for the model.
func rpcError(err error) error {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		msg := re.Message
		if d, ok := re.Data.(map[string]any); ok {
			for _, k := range []string{"error", "details", "message"} {
				if v, ok := d[k].(string); ok && v != "" {
					msg += ": " + v
					break
				}
			}
		}
		return errors.New(msg)
	}
	return err
}

// terminalExec runs bash's commands in the editor's terminals
// (terminal/*): the user watches them run in the tool call.
type terminalExec struct{ s *session }

var _ shell.Executor = terminalExec{}

func (t terminalExec) Exec(ctx context.Context, c shell.Command) (shell.Outcome, error) {
	conn := t.s.a.client()
	sid := sdk.SessionId(t.s.id)
	var env []sdk.EnvVariable
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, sdk.EnvVariable{Name: k, Value: v})
	}
	limit, dir := c.MaxOutput, c.Dir
	created, err := conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: sid, Command: c.Argv[0], Args: c.Argv[1:],
		Cwd: &dir, Env: env, OutputByteLimit: &limit})
	if err != nil {
		if ctx.Err() != nil {
			return shell.Outcome{}, ctx.Err()
		}
		return shell.Outcome{Failed: fmt.Errorf("the editor could not start a terminal: %w", rpcError(err))}, nil
	}
	id := created.TerminalId
	t.s.attachTerminal(c.Line, id)
	// Whatever happens, the terminal is released (which kills what still
	// runs), even when the run was cancelled.
	bg := context.WithoutCancel(ctx)
	defer conn.ReleaseTerminal(bg, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: id})

	wctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	exit, werr := conn.WaitForTerminalExit(wctx, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: id})
	timedOut := false
	if werr != nil {
		conn.KillTerminal(bg, sdk.KillTerminalRequest{SessionId: sid, TerminalId: id})
		if ctx.Err() != nil {
			return shell.Outcome{}, ctx.Err()
		}
		if wctx.Err() == nil {
			return shell.Outcome{Failed: fmt.Errorf("the editor's terminal: %w", rpcError(werr))}, nil
		}
		timedOut = true
	}
	out, oerr := conn.TerminalOutput(bg, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: id})
	if oerr != nil {
		return shell.Outcome{Failed: fmt.Errorf("the editor's terminal output: %w", rpcError(oerr))}, nil
	}
	o := shell.Outcome{Output: out.Output, TimedOut: timedOut}
	if out.Truncated {
		o.Output = fmt.Sprintf("[the start of the output was cut: the terminal keeps its last %d bytes]\n", limit) + o.Output
	}
	code, signal := exit.ExitCode, exit.Signal
	if timedOut && out.ExitStatus != nil {
		code, signal = out.ExitStatus.ExitCode, out.ExitStatus.Signal
	}
	if code != nil {
		o.ExitCode = *code
	}
	if signal != nil && *signal != "" {
		o.Signal = *signal
		if code == nil {
			o.ExitCode = 128
		}
	}
	return o, nil
}

// attachTerminal shows the terminal a bash call runs in, in the call.
// Commands that change something run one at a time, in call order, so the
// first started call with this command is this one.
func (s *session) attachTerminal(command string, id string) {
	s.mu.Lock()
	var call sdk.ToolCallId
	for i, b := range s.bash {
		if b.command == command {
			call = b.id
			s.bash = append(s.bash[:i], s.bash[i+1:]...)
			break
		}
	}
	if call != "" {
		if s.terminals == nil {
			s.terminals = map[sdk.ToolCallId]string{}
		}
		s.terminals[call] = id
	}
	s.mu.Unlock()
	if call == "" {
		return
	}
	s.a.notify(s.id, sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: call,
		Content: []sdk.ToolCallContent{sdk.ToolTerminalRef(id)}}})
}

// terminalOf returns the terminal a call ran in, once.
func (s *session) terminalOf(call sdk.ToolCallId) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.terminals[call]
	delete(s.terminals, call)
	return id, ok
}
