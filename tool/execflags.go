package tool

import (
	"path"
	"slices"
	"strings"
)

// What makes a command run another program. A command-prefix allow rule
// ("go test") says which program runs, and with which first words; it does
// not expect the arguments after them to run something else. Many
// well-known commands have flags that do exactly that: go test -exec runs
// the test binary through any program, git -c core.pager=… runs the pager
// it names, find -exec runs a command per file. An allow rule never allows a
// command that uses one of them, unless it lists the flag in allow_flags.
//
// The table below is the one place they are listed. It was put together from
// the commands' manuals and from the lists other agents keep for the same
// purpose (Codex's known-safe commands, the argument-injection vectors
// SonarSource collected, GTFOBins); a flag belongs here when, on a command
// line a model wrote, it makes the command run a program, a shell script, a
// program text (awk's system(), sed's e) or a configuration that does.
//
// Besides flags, some commands run the command their arguments name
// (runners: xargs, env, timeout, sh -c, ...): an allow rule whose words do
// not reach the inner command's name allows none of them.

// execFlag is a row of the table: flags (and other words) of a program that
// make it run another program.
type execFlag struct {
	program string // the program, by its base name
	sub     string // the subcommand the row is about ("" for all)
	// flags make it run another program, as RefuseFlags reads them: "-exec"
	// also refuses --exec and -exec=…; "--exec" its abbreviations; a
	// one-letter flag ("-c") every word that starts with it.
	flags string
	// global: the flags count only before the subcommand (git -c).
	global bool
	// valueHas: a flag of flags counts only when its value (after "=" or
	// in the next word) holds this (go build -ldflags with -extld).
	valueHas string
	// words are arguments that do (git bisect run).
	words string
	// assigns are NAME=value arguments that do (make SHELL=…).
	assigns string
	// runs: the subcommand itself runs programs, whatever follows it (go
	// generate): the rule must name it.
	runs bool
	// text checks the program text a command is given (sed, awk): it
	// returns what in it runs something, or "".
	text func(args []string) string
	why  string
}

// execFlags is the table.
var execFlags = []execFlag{
	{program: "go", flags: "-exec -toolexec -vettool", why: "runs the program it names: the test binary through it (-exec), every build tool through it (-toolexec), or as the vet tool"},
	{program: "go", flags: "-ldflags -gccgoflags", valueHas: "extld", why: "sets the external linker, a program the build runs"},
	{program: "go", sub: "env", flags: "-w -u", why: "changes Go's settings for every later go command (GOFLAGS=-toolexec=…, CC=…)"},
	{program: "go", sub: "generate", runs: true, why: "runs the commands of //go:generate lines"},
	{program: "git", global: true, flags: "-c --config-env --exec-path -p --paginate", why: "sets git's configuration or its programs for the command, and configuration runs programs (core.pager, core.sshCommand, alias.x=!…)"},
	{program: "git", flags: "--upload-pack --receive-pack --exec --ext-diff --textconv --output", why: "runs the program it names instead of git's own, or a configured diff driver, or writes where it says"},
	{program: "git", sub: "clone", flags: "-u -c --config --template", why: "runs the program it names, or sets configuration and hooks that run programs"},
	{program: "git", sub: "rebase", flags: "-x --exec", why: "runs the command it is given after each commit"},
	{program: "git", sub: "bisect", words: "run", why: "runs the command it is given at each step"},
	{program: "git", sub: "submodule", words: "foreach", why: "runs the command it is given in each submodule"},
	{program: "git", sub: "grep", flags: "-O --open-files-in-pager", why: "opens the files in the program it names"},
	{program: "git", sub: "difftool", runs: true, why: "runs a diff program (the one it names, or the one configured)"},
	{program: "git", sub: "mergetool", runs: true, why: "runs a merge program (the one it names, or the one configured)"},
	{program: "git", sub: "filter-branch", flags: "--tree-filter --index-filter --msg-filter --env-filter --commit-filter --parent-filter --tag-name-filter", why: "runs the shell command it is given on each commit"},
	{program: "git", sub: "config", text: gitConfigWrites, why: "writes git configuration, which later git commands run (core.pager, core.hooksPath, alias.x=!…)"},
	{program: "find", flags: "-exec -execdir -ok -okdir", why: "runs the command it is given for each file"},
	{program: "find", flags: "-delete -fls -fprint -fprint0 -fprintf", why: "deletes the files it finds, or writes a file"},
	{program: "fd", flags: "-x --exec -X --exec-batch", why: "runs the command it is given for each file"},
	{program: "fdfind", flags: "-x --exec -X --exec-batch", why: "runs the command it is given for each file"},
	{program: "rg", flags: "--pre --hostname-bin -z --search-zip", why: "runs a program on each file (a preprocessor, a decompressor) or to find the host name"},
	{program: "tar", flags: "--to-command --checkpoint-action --use-compress-program -I --info-script -F --new-volume-script --rsh-command --rmt-command", why: "runs the program it names"},
	{program: "zip", flags: "-TT --unzip-command", why: "tests the archive with the program it names"},
	{program: "rsync", flags: "-e --rsh --rsync-path", why: "runs the program it names to reach the other side"},
	{program: "ssh", flags: "-o -F", why: "sets options (ProxyCommand, LocalCommand) or a configuration file that run programs"},
	{program: "scp", flags: "-S -o -F", why: "runs the program it names, or sets options that do"},
	{program: "sftp", flags: "-S -o -F", why: "runs the program it names, or sets options that do"},
	{program: "sort", flags: "--compress-program", why: "runs the program it names to compress"},
	{program: "man", flags: "-P --pager -H --html", why: "shows the page with the program it names"},
	{program: "make", flags: "--eval -E -f --file --makefile", assigns: "SHELL .SHELLFLAGS MAKEFLAGS", why: "runs recipes from text or a file it is given, or through the shell it names"},
	{program: "cargo", flags: "--config -Z", why: "sets configuration (a runner, a linker) that runs programs"},
	{program: "npm", flags: "--script-shell --node-options -c --call", why: "runs scripts through the shell it names, or the command it is given"},
	{program: "npm", sub: "exec", runs: true, why: "runs the package's program it names"},
	{program: "npm", sub: "x", runs: true, why: "runs the package's program it names"},
	{program: "sed", flags: "-f --file", text: sedRuns, why: "runs a command from its script (the e command or flag), writes a file (w) or reads one (r)"},
	{program: "awk", flags: "-f --file -l --load -E --exec", text: awkRuns, why: "runs commands from its program text (system(), pipes, getline from a command) or writes files"},
	{program: "gawk", flags: "-f --file -l --load -E --exec", text: awkRuns, why: "runs commands from its program text (system(), pipes, getline from a command) or writes files"},
	{program: "mawk", flags: "-f --file", text: awkRuns, why: "runs commands from its program text (system(), pipes, getline from a command) or writes files"},
	{program: "nawk", flags: "-f --file", text: awkRuns, why: "runs commands from its program text (system(), pipes, getline from a command) or writes files"},
}

// runners run the command their arguments name, after their own options.
var runners = map[string]bool{
	"xargs": true, "env": true, "nice": true, "nohup": true, "timeout": true, "time": true, "stdbuf": true,
	"setsid": true, "ionice": true, "taskset": true, "chrt": true, "flock": true, "watch": true, "sudo": true,
	"doas": true, "su": true, "strace": true, "ltrace": true, "chroot": true, "unshare": true, "nsenter": true,
	"script": true, "parallel": true, "npx": true, "pnpx": true, "command": true, "builtin": true, "exec": true,
	"eval": true, "busybox": true,
}

// execRefusal returns why a command, whose first words are an allow rule's
// prefix (want), does what the prefix does not say: it uses a flag of the
// table that allowed does not list, or a runner whose inner command the
// prefix does not name. "" when it does not.
func execRefusal(want, words, allowed []string) string {
	p := 0 // the program that runs, after runners
	for {
		name := path.Base(words[p])
		if shells[name] {
			// sh -c SCRIPT, sh FILE: the script is what runs
			j := p + 1
			for j < len(words) && strings.HasPrefix(words[j], "-") {
				j++
			}
			if j < len(words) && j >= len(want) {
				return name + " runs the script it is given (" + words[j] + "), which the rule does not name"
			}
			break
		}
		if !runners[name] {
			break
		}
		j := p + 1
		for j < len(words) && (strings.HasPrefix(words[j], "-") || strings.Contains(words[j], "=") || isNumber(words[j])) {
			j++ // its options, assignments and durations
		}
		if j >= len(words) {
			break
		}
		if j >= len(want) {
			return name + " runs the command its arguments name (" + words[j] + "), which the rule does not name"
		}
		p = j
	}
	// The flags of every program the prefix names, in what follows it.
	for q := range min(len(want), len(words)) {
		if why := flagRefusal(path.Base(words[q]), words[q+1:], len(want)-q-1, allowed); why != "" {
			return why
		}
	}
	return ""
}

// flagRefusal checks the arguments of program name from args[from:] (those
// before are the prefix's) against the table.
func flagRefusal(name string, args []string, from int, allowed []string) string {
	sub := -1
	for _, r := range execFlags {
		if r.program != name {
			continue
		}
		if sub < 0 {
			sub = subcommand(name, args)
		}
		if r.sub != "" && (sub < 0 || args[sub] != r.sub) {
			continue
		}
		if r.runs && sub >= from && !slices.Contains(allowed, r.sub) {
			return name + " " + r.sub + ": " + r.why
		}
		for k := from; k < len(args); k++ {
			w := args[k]
			if r.global && sub >= 0 && k > sub {
				break
			}
			for _, f := range strings.Fields(r.flags) {
				if !refused(w, f) || slices.Contains(allowed, f) {
					continue
				}
				if r.valueHas != "" && !strings.Contains(w, r.valueHas) && (k+1 >= len(args) || !strings.Contains(args[k+1], r.valueHas)) {
					continue
				}
				return name + " " + w + ": " + r.why
			}
			if slices.Contains(strings.Fields(r.words), w) && !slices.Contains(allowed, w) {
				return name + " " + w + ": " + r.why
			}
			for _, a := range strings.Fields(r.assigns) {
				if strings.HasPrefix(w, a+"=") && !slices.Contains(allowed, a) {
					return name + " " + w + ": " + r.why
				}
			}
		}
		if r.text != nil && from < len(args) {
			if what := r.text(args); what != "" && !slices.Contains(allowed, what) {
				return name + " " + what + ": " + r.why
			}
		}
	}
	return ""
}

// subcommand returns the index in args of a command's subcommand: the first
// word that is not an option, for git and go after the options that take a
// value; -1 when there is none.
func subcommand(name string, args []string) int {
	takesValue := map[string]bool{}
	switch name {
	case "git":
		takesValue = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true, "--config-env": true, "--super-prefix": true}
	case "go":
		takesValue = map[string]bool{"-C": true}
	}
	for k := 0; k < len(args); k++ {
		switch {
		case takesValue[args[k]]:
			k++
		case !strings.HasPrefix(args[k], "-"):
			return k
		}
	}
	return -1
}

// sedRuns returns what in sed's script runs a command or touches another
// file: the e command or the e flag of s (GNU sed runs it), w and W (write a
// file), r and R (read one into the output). It reads the script of -e
// (--expression) words, or the first word that is not an option.
func sedRuns(args []string) string {
	var scripts []string
	explicit := false
	for k := 0; k < len(args); k++ {
		w := args[k]
		switch {
		case w == "-e" || w == "--expression":
			if k+1 < len(args) {
				scripts = append(scripts, args[k+1])
			}
			explicit = true
			k++
		case strings.HasPrefix(w, "--expression="):
			scripts, explicit = append(scripts, strings.TrimPrefix(w, "--expression=")), true
		case strings.HasPrefix(w, "-e") && len(w) > 2:
			scripts, explicit = append(scripts, w[2:]), true
		case !strings.HasPrefix(w, "-") && !explicit && len(scripts) == 0:
			scripts = append(scripts, w)
		}
	}
	for _, s := range scripts {
		if c := sedCommand(s); c != "" {
			return c
		}
	}
	return ""
}

// sedCommand returns the first command of a sed script that runs or touches
// a file ("e", "w", "s///e", ...), or "".
func sedCommand(script string) string {
	i := 0
	for i < len(script) {
		// skip separators and an address
		for i < len(script) && strings.ContainsRune(" \t\n;{}!", rune(script[i])) {
			i++
		}
		for i < len(script) && strings.ContainsRune("0123456789$,~+ \t", rune(script[i])) {
			i++
		}
		if i < len(script) && (script[i] == '/' || script[i] == '\\') {
			d := script[i]
			if d == '\\' && i+1 < len(script) {
				i++
				d = script[i]
			}
			i = skipDelimited(script, i+1, d)
			continue // an address; the command follows
		}
		if i >= len(script) {
			break
		}
		c := script[i]
		switch c {
		case 'e', 'w', 'W', 'r', 'R':
			return string(c)
		case 's', 'y':
			if i+1 >= len(script) {
				return ""
			}
			d := script[i+1]
			j := skipDelimited(script, i+2, d)
			j = skipDelimited(script, j, d)
			k := j
			for k < len(script) && !strings.ContainsRune(";\n}", rune(script[k])) {
				k++
			}
			if c == 's' && strings.ContainsAny(script[j:k], "ewWrR") {
				return "s///" + script[j:k]
			}
			i = k
		case 'a', 'i', 'c', ':', 'b', 't', 'T':
			// text or a label to the end of the line
			for i < len(script) && script[i] != '\n' {
				i++
			}
		default:
			i++
		}
	}
	return ""
}

// skipDelimited returns the index after the next d in s from i, skipping
// backslash escapes.
func skipDelimited(s string, i int, d byte) int {
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case d:
			return i + 1
		}
		i++
	}
	return i
}

// awkRuns returns what in awk's program text runs a command or writes a
// file: system(, a pipe, getline from a command, a redirection, @load.
func awkRuns(args []string) string {
	for k := 0; k < len(args); k++ {
		w := args[k]
		if strings.HasPrefix(w, "-") {
			if w == "-v" || w == "-F" || w == "--assign" || w == "--field-separator" {
				k++ // its value
			}
			continue
		}
		for _, what := range []string{"system", "|", "getline", ">", "@load", "@include"} {
			if strings.Contains(w, what) {
				return what
			}
		}
		return "" // the program; what follows are files
	}
	return ""
}

// gitConfigWrites returns "a write" when git config is asked to write (any
// call but a read: --get, --get-all, --get-regexp, --list, -l, get, list).
func gitConfigWrites(args []string) string {
	sub := subcommand("git", args)
	if sub < 0 {
		return ""
	}
	rest := args[sub+1:]
	if len(rest) > 0 && (rest[0] == "get" || rest[0] == "list") {
		return ""
	}
	for _, w := range rest {
		switch w {
		case "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool":
			return ""
		}
	}
	nonFlags := 0
	for _, w := range rest {
		if !strings.HasPrefix(w, "-") {
			nonFlags++
		}
	}
	if nonFlags <= 1 {
		return "" // git config NAME reads it
	}
	return "(a write)"
}
