package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/ptkit/ptk"
)

// Verdict is an approver's answer about one call.
type Verdict struct {
	Allow bool
	// Reason says why a call was denied, and how the user can allow it; the
	// model reads it.
	Reason string
}

// Approver decides whether a call to a tool that is not read-only may run.
// The agent asks it for each such call, one at a time, in call order, before
// the call runs; read-only tools run without asking.
type Approver interface {
	Approve(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (Verdict, error)
}

// ApproverFunc makes a function an Approver.
type ApproverFunc func(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (Verdict, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (Verdict, error) {
	return f(ctx, call, info)
}

// The actions of a policy rule.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// Rule is one line of a Policy. A rule matches a call when every condition
// it sets holds.
type Rule struct {
	// Tool is the tool's name, or a pattern of names ("*", "edit_*").
	Tool string `json:"tool"`
	// Action is "allow", "deny" or "ask".
	Action string `json:"action"`
	// Command is a command prefix, matched on whole words against the
	// command the tool declares its call will run ([Subject].Command, as
	// bash does): "go test" matches "go test ./..." but not "go testify".
	//
	// An allow rule matches only one simple command whose every word is
	// plain: letters, digits, "-_./=:,+@%" and text in single quotes, or in
	// double quotes without "$", "`", "\" or "!". So no list, pipe or
	// redirection (; & | < >), no line break, no expansion of any kind
	// (parameters, commands, arithmetic, globs, braces, "~"), no
	// backslash; and no word that names a path outside the workspace (one
	// that starts with "/", or holds a ".." element, itself or after its
	// first "="). Anything else is left to the next rule, or to asking.
	//
	// A deny or ask rule matches, best effort, when any command of a list,
	// pipeline, subshell, $(…) or `…` runs the program the prefix names
	// (after quotes and backslashes are removed, a directory is dropped,
	// and wrappers such as env, command, exec, nohup, timeout, xargs, eval,
	// sudo and "sh -c" are looked through) with the prefix's other words
	// among its arguments in order ("git -C . push" for "git push").
	Command string `json:"command,omitempty"`
	// RefuseFlags, on a rule with a Command, lists flags that keep an
	// allow rule from matching a command that uses them, wherever they
	// appear after the prefix: "-exec" refuses -exec, --exec, -exec=…
	// and --exec=…; a word of two dashes refuses every abbreviation a
	// getopt_long program would take ("--ex"); a one-letter flag such as
	// "-o" refuses every word that begins with it ("-o", "-ofile",
	// "-out"). Short flags combined into one word ("-co" for -c -o) are not
	// taken apart: a program that reads them so needs its combinations
	// listed too. On deny and ask rules the field is not used.
	RefuseFlags []string `json:"refuse_flags,omitempty"`
	// AllowFlags, on an allow rule with a Command, lists flags (and other
	// words) of the built-in table of what makes well-known commands run
	// other programs (go test -exec, git -c, find -exec, sed's e, make
	// SHELL=...: see execflags.go) that this rule allows after its prefix.
	// By default it allows none of them: {"command": "go test"} does not
	// allow "go test -exec 'sh -c …'", nor does {"command": "xargs"} allow
	// "xargs rm"; a runner (xargs, env, timeout, sh -c, ...) is allowed only
	// when the rule's words name the command it runs.
	AllowFlags []string `json:"allow_flags,omitempty"`
	// Path is a glob ("src/**", "*.md") on the path the tool declares its
	// call acts on ([Subject].Path), as a clean path relative to the
	// workspace.
	Path string `json:"path,omitempty"`
}

// Policy allows or denies calls by tool and by what the call acts on: the
// command or path its tool declares ([Subjecter]). The last rule that
// matches a call decides.
//
// A policy bounds the command line, not what the program does: "go test"
// runs the tests, and a model that can write a test file can make it run
// anything. Deny rules are best effort: a shell has too many ways to spell
// a command ("x=git; $x push", "find -exec", a Makefile) for a deny list to
// be a wall. A spelling a deny rule misses still matches no allow rule but
// a broad one, so it falls to asking; do not allow a broad prefix ("git")
// in the hope that a deny rule ("git push") carves out of it.
type Policy struct {
	Rules []Rule `json:"rules"`
}

// LoadPolicy reads a policy file: {"rules": [{"tool": "bash", "command":
// "go test", "action": "allow"}, {"tool": "bash", "command": "find .",
// "allow_flags": ["-delete"], "action": "allow"}, ...]}.
func LoadPolicy(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	for i, r := range p.Rules {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("policy %s: rule %d: %w", file, i+1, err)
		}
	}
	return &p, nil
}

// check reports what is wrong with a rule.
func (r Rule) check() error {
	if r.Action != Allow && r.Action != Deny && r.Action != Ask {
		return fmt.Errorf("action must be allow, deny or ask, not %q", r.Action)
	}
	if r.Tool == "" {
		return errors.New(`no tool (use "*" for every tool)`)
	}
	if _, err := path.Match(r.Tool, ""); err != nil {
		return fmt.Errorf("bad tool pattern %q", r.Tool)
	}
	if r.Path != "" && !doublestar.ValidatePattern(r.Path) {
		return fmt.Errorf("bad path pattern %q", r.Path)
	}
	if r.Command != "" {
		if words, ok, _ := plainWords(r.Command); !ok || len(words) == 0 {
			return fmt.Errorf("command %q is not plain words", r.Command)
		}
	}
	if len(r.RefuseFlags) > 0 && r.Command == "" {
		return errors.New("refuse_flags without a command")
	}
	if len(r.AllowFlags) > 0 && (r.Command == "" || r.Action != Allow) {
		return errors.New("allow_flags is for an allow rule with a command")
	}
	for _, f := range r.AllowFlags {
		if f == "" || strings.ContainsAny(f, " \t") {
			return fmt.Errorf("allow_flags: %q is not one word", f)
		}
	}
	for _, f := range r.RefuseFlags {
		if !strings.HasPrefix(f, "-") || strings.Trim(f, "-") == "" || strings.ContainsAny(f, "= \t") {
			return fmt.Errorf("refuse_flags: %q is not a flag such as \"-o\" or \"--exec\"", f)
		}
	}
	return nil
}

// Decision is what a Policy says about a call.
type Decision struct {
	// Action is the action of the last rule that matches (Allow, Deny or
	// Ask), or "" when none does.
	Action string
	// Rule is that rule's number, from 1; 0 when none matches.
	Rule int
	// Why says, when no rule allowed or denied the call, why it falls to
	// asking: the rule that asks, or why the allow rule that came nearest
	// (its tool and its command's first words match) does not cover it: a
	// flag that makes the command run another program, a runner whose
	// command it does not name, a shell operator, a path outside the
	// workspace. "" when no rule comes near.
	Why string
}

// Decide returns the action of the last rule that matches a call to t, and
// that rule's number from 1; "" and 0 when none does. See [Policy.Check].
func (p *Policy) Decide(t ptk.Tool, call ptk.Call) (action string, rule int) {
	d := p.Check(t, call)
	return d.Action, d.Rule
}

// Check returns what p says about a call to t: the last rule that matches
// decides. Command and path conditions match what t declares the call acts
// on ([SubjectOf], through wrappers); a tool that declares nothing matches
// only rules without them. When no rule allows or denies the call, Why says
// why it falls to asking.
func (p *Policy) Check(t ptk.Tool, call ptk.Call) Decision {
	var d Decision
	if p == nil {
		return d
	}
	var subject Subject
	if t != nil {
		subject = SubjectOf(t, call.Args)
	}
	near := ""
	for i, r := range p.Rules {
		if ok, _ := path.Match(r.Tool, call.Tool); !ok {
			continue
		}
		if r.Command != "" {
			if subject.Command == "" {
				continue
			}
			if r.Action == Allow {
				if why, close := r.allowRefusal(subject.Command); why != "" {
					if close {
						near = fmt.Sprintf("rule %d (allow %s %q) does not cover it: %s", i+1, r.Tool, r.Command, why)
					}
					continue
				}
			}
			if r.Action != Allow && !runsAnywhere(r.Command, subject.Command) {
				continue
			}
		}
		if r.Path != "" {
			p := path.Clean(strings.TrimPrefix(strings.ReplaceAll(subject.Path, "\\", "/"), "./"))
			if subject.Path == "" || strings.HasPrefix(p, "../") || p == ".." || path.IsAbs(p) {
				continue
			}
			if ok, _ := doublestar.Match(r.Path, p); !ok {
				continue
			}
		}
		d.Action, d.Rule = r.Action, i+1
	}
	switch d.Action {
	case Ask:
		d.Why = fmt.Sprintf("rule %d asks for it", d.Rule)
		if near != "" {
			d.Why += "; " + near
		}
	case "":
		d.Why = near
	}
	return d
}

// allowRefusal returns "" when the allow rule r's command prefix covers
// command: one simple command of plain words (see [Rule].Command) that
// starts with the words of the prefix, names no path outside the
// workspace, uses none of the refused flags and none of the built-in
// table's (execflags.go) that r does not allow. Otherwise it says why not;
// close reports that the command does start with the prefix's words.
func (r Rule) allowRefusal(command string) (why string, close bool) {
	want, _, _ := plainWords(r.Command)
	words, ok, bad := plainWords(command)
	if !ok {
		fields := strings.Fields(command)
		close = len(want) > 0 && len(fields) >= len(want) && slices.Equal(fields[:len(want)], want)
		return "it is not one simple command of plain words (it has " + bad + ")", close
	}
	if len(want) == 0 || len(words) < len(want) || !slices.Equal(words[:len(want)], want) {
		return "the command does not start with " + strconv.Quote(r.Command), false
	}
	for _, w := range words {
		if outside(w) {
			return "it names a path outside the workspace (" + w + ")", true
		}
	}
	for _, w := range words[len(want):] {
		for _, f := range r.RefuseFlags {
			if refused(w, f) {
				return "it uses " + w + ", which the rule refuses", true
			}
		}
	}
	if why := execRefusal(want, words, r.AllowFlags); why != "" {
		return why, true
	}
	return "", true
}

// plainWords splits a command into words, with their quotes removed, if
// every word is plain (see [Rule].Command); ok is false otherwise, and bad
// says what is not plain.
func plainWords(command string) (words []string, ok bool, bad string) {
	var w strings.Builder
	inWord := false
	for i := 0; i < len(command); {
		c := command[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
			i++
			continue
		case c == '\'' || c == '"':
			end := strings.IndexByte(command[i+1:], c)
			if end < 0 {
				return nil, false, "a quote that does not close"
			}
			quoted := command[i+1 : i+1+end]
			if strings.ContainsFunc(quoted, unicode.IsControl) {
				return nil, false, "a control character in quotes"
			}
			if c == '"' && strings.ContainsAny(quoted, "$`\\!") {
				return nil, false, "an expansion in double quotes"
			}
			w.WriteString(quoted)
			i += end + 2
		default:
			r, size := utf8.DecodeRuneInString(command[i:])
			if !plainRune(r) {
				return nil, false, describeRune(r)
			}
			w.WriteRune(r)
			i += size
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true, ""
}

// describeRune names a character that is not plain in a shell word.
func describeRune(r rune) string {
	switch r {
	case '\n', '\r':
		return "a line break"
	case ';', '&', '|':
		return strconv.QuoteRune(r) + ", which runs another command"
	case '<', '>':
		return strconv.QuoteRune(r) + ", a redirection"
	case '$', '`':
		return strconv.QuoteRune(r) + ", an expansion"
	case '*', '?', '[', '{', '~':
		return strconv.QuoteRune(r) + ", which the shell expands"
	}
	if unicode.IsControl(r) || r == utf8.RuneError {
		return fmt.Sprintf("the control character %U", r)
	}
	return strconv.QuoteRune(r)
}

// plainRune reports whether r means only itself in an unquoted shell word.
func plainRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// outside reports whether a word names a path outside the workspace: it
// starts with "/" or has a ".." element, itself or after its first "=".
func outside(word string) bool {
	for _, p := range []string{word, afterEqual(word)} {
		if strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") {
			return true
		}
	}
	return false
}

func afterEqual(word string) string {
	_, v, _ := strings.Cut(word, "=")
	return v
}

// refused reports whether word uses flag (see [Rule].RefuseFlags).
func refused(word, flag string) bool {
	if !strings.HasPrefix(word, "-") || word == "-" || word == "--" {
		return false
	}
	name := strings.TrimLeft(flag, "-")
	got, _, _ := strings.Cut(strings.TrimLeft(word, "-"), "=")
	switch {
	case got == name:
		return true
	case len([]rune(name)) == 1 && !strings.HasPrefix(word, "--"):
		return strings.HasPrefix(got, name) // -ofile
	case strings.HasPrefix(flag, "--") && strings.HasPrefix(word, "--"):
		return got != "" && strings.HasPrefix(name, got) // --ex for --exec
	}
	return false
}

// wrappers are commands that run the command their arguments name.
var wrappers = map[string]bool{
	"command": true, "builtin": true, "exec": true, "env": true, "nohup": true, "time": true,
	"nice": true, "ionice": true, "timeout": true, "setsid": true, "stdbuf": true, "xargs": true,
	"sudo": true, "doas": true, "eval": true, "watch": true, "chrt": true, "taskset": true,
	// shell keywords that come before a command
	"if": true, "then": true, "else": true, "elif": true, "while": true, "until": true, "do": true, "!": true,
}

// shells run the script that follows their -c option.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "busybox": true}

// runsAnywhere reports, best effort, whether any command in a shell
// command line runs the program prefix names with prefix's other words
// among its arguments, in order (see [Rule].Command).
func runsAnywhere(prefix, command string) bool {
	want, _, _ := plainWords(prefix)
	if len(want) == 0 {
		return false
	}
	for _, part := range strings.FieldsFunc(command, func(r rune) bool {
		return strings.ContainsRune(";&|\n\r(){}`", r)
	}) {
		if runs(want, unquote(part)) {
			return true
		}
	}
	return false
}

// unquote splits a part of a command line into words, with quotes and
// backslashes removed ("g”it", "\git", $'git' all read "git").
func unquote(part string) []string {
	part = strings.ReplaceAll(part, "$'", "'")
	part = strings.ReplaceAll(part, `$"`, `"`)
	part = strings.NewReplacer(`\`, "", "'", "", `"`, "").Replace(part)
	return strings.Fields(part)
}

// runs reports whether words, one simple command, runs want[0] with the
// rest of want among its arguments in order, looking through wrappers.
func runs(want, words []string) bool {
	for len(words) > 0 {
		name := path.Base(words[0])
		switch {
		case strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-"):
			words = words[1:] // an assignment before the command
			continue
		case wrappers[name]:
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=") || isNumber(words[0])) {
				words = words[1:] // its options, assignments and durations
			}
			continue
		case shells[name]:
			for i, w := range words[1:] {
				if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "c") {
					return runs(want, words[i+2:])
				}
			}
		}
		if name != want[0] {
			return false
		}
		rest := want[1:]
		for _, w := range words[1:] {
			if len(rest) > 0 && w == rest[0] {
				rest = rest[1:]
			}
		}
		return len(rest) == 0
	}
	return false
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimRight(s, "smhd"), 64)
	return err == nil
}
