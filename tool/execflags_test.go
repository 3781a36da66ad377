package tool

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
)

// TestAllowRulesDoNotRunOtherPrograms: a plain command-prefix allow rule,
// as a naive policy file writes it, does not allow the flags and forms that
// make a well-known command run another program; it still allows the
// command's ordinary uses; allow_flags opens one flag on purpose; and the
// Decision says why a call falls to asking.
func TestAllowRulesDoNotRunOtherPrograms(t *testing.T) {
	cases := []struct {
		prefix, command string
		allowed         bool
		why             string // in Decision.Why when not allowed
	}{
		{"go test", "go test ./...", true, ""},
		{"go test", "go test -run TestX -count=1 -race ./pkg/...", true, ""},
		{"go test", "go test -exec 'sh -c touch-pwned' ./...", false, "go -exec: runs the program it names"},
		{"go test", "go test --exec=./evil ./...", false, "-exec"},
		{"go test", "go test -toolexec /tmp/x ./...", false, "outside the workspace"},
		{"go test", "go test -toolexec ./x ./...", false, "-toolexec"},
		{"go vet", "go vet -vettool=./mytool ./...", false, "-vettool"},
		{"go build", "go build -ldflags '-X main.v=1' .", true, ""},
		{"go build", "go build -ldflags '-linkmode=external -extld=./sh' .", false, "external linker"},
		{"go", "go env -w GOFLAGS=-toolexec=./x", false, "Go's settings"},
		{"go", "go generate ./...", false, "go generate: runs the commands"},
		{"go generate", "go generate ./...", true, ""},
		{"git", "git status", true, ""},
		{"git", "git log -p -n 3", true, ""},
		{"git", "git -c core.pager=./x log", false, "git -c"},
		{"git", "git --config-env=core.pager=X log", false, "--config-env"},
		{"git", "git -p log", false, "-p"},
		{"git log", "git log --ext-diff", false, "--ext-diff"},
		{"git log", "git log --output=notes.txt", false, "--output"},
		{"git", "git fetch --upload-pack=./x origin", false, "--upload-pack"},
		{"git", "git push --receive-pack=./x", false, "--receive-pack"},
		{"git", "git clone -u ./x repo", false, "-u"},
		{"git", "git rebase -x 'make test' main", false, "git -x"},
		{"git", "git rebase main", true, ""},
		{"git", "git bisect run ./test.sh", false, "git run"},
		{"git", "git submodule foreach ls", false, "foreach"},
		{"git", "git grep -O foo", false, "-O"},
		{"git", "git difftool HEAD", false, "difftool"},
		{"git", "git config core.pager ./x", false, "(a write)"},
		{"git", "git config --get user.name", true, ""},
		{"git", "git config user.name", true, ""},
		{"find", "find . -name '*.go'", true, ""},
		{"find", "find . -exec rm '{}' ';'", false, "find -exec: runs the command"},
		{"find", "find . -execdir ./x ';'", false, "-execdir"},
		{"find", "find . -ok rm '{}' ';'", false, "-ok"},
		{"find", "find . -delete", false, "deletes"},
		{"find", "find . -fprint out.txt", false, "-fprint"},
		{"rg", "rg -n foo", true, ""},
		{"rg", "rg --pre ./x foo", false, "--pre"},
		{"rg", "rg -z foo", false, "-z"},
		{"tar", "tar -cf out.tar src", true, ""},
		{"tar", "tar -cf out.tar --checkpoint-action=exec=./x src", false, "--checkpoint-action"},
		// --checkpoint may abbreviate --checkpoint-action: refused as one would be
		{"tar", "tar -cf out.tar --checkpoint=1 src", false, "--checkpoint"},
		{"tar", "tar -xf a.tar --to-command=./x", false, "--to-command"},
		{"zip", "zip -r a.zip src -TT ./x", false, "-TT"},
		{"rsync", "rsync -e ./x a b", false, "-e"},
		{"ssh", "ssh -o ProxyCommand=./x host", false, "-o"},
		{"sort", "sort --compress-program=./x a", false, "--compress-program"},
		{"make", "make test", true, ""},
		{"make", "make SHELL=./x test", false, "SHELL="},
		{"make", "make --eval='x:;./y' x", false, "--eval"},
		{"cargo test", "cargo test --config target.x.runner=./x", false, "--config"},
		{"npm", "npm exec pkg", false, "npm exec"},
		{"sed -n", "sed -n 1,5p a.txt", true, ""},
		{"sed", "sed -n '1e ./x' a.txt", false, "sed e"},
		{"sed", "sed 's/a/b/e' a.txt", false, "s///e"},
		{"sed", "sed -e 's/a/b/w out' a.txt", false, "s///w"},
		{"sed", "sed 'r secret' a.txt", false, "sed r"},
		{"sed", "sed -i 's/old/new/g' a.txt", true, ""},
		{"sed", "sed -f script.sed a.txt", false, "-f"},
		{"awk", "awk '{print $1}' a.txt", true, ""},
		{"awk", `awk 'BEGIN{system("./x")}'`, false, "awk system"},
		{"awk", `awk '{print | "sh"}' a.txt`, false, "awk |"},
		{"awk", `awk '{print > "out"}' a.txt`, false, "awk >"},
		{"xargs", "xargs rm", false, "xargs runs the command its arguments name (rm)"},
		{"xargs grep", "xargs grep foo", true, ""},
		{"env", "env rm -rf build", false, "env runs the command"},
		{"env", "env", true, ""},
		{"timeout 60 go test", "timeout 60 go test ./...", true, ""},
		{"timeout 60 go test", "timeout 60 go test -exec ./x ./...", false, "-exec"},
		{"timeout", "timeout 5 rm x", false, "timeout runs the command"},
		{"sh", "sh -c 'rm -rf build'", false, "sh runs the script"},
		{"bash", "bash scripts/test.sh", false, "bash runs the script"},
		{"bash scripts/test.sh", "bash scripts/test.sh -v", true, ""},
		{"ls", "ls -la", true, ""},
		{"go test", "go test ./... && rm -rf ~", false, `'&', which runs another command`},
		{"go test", "go test $(./x)", false, "expansion"},
		{"go test", "go test ./...\ntouch x", false, "a line break"},
	}
	for _, c := range cases {
		p := &Policy{Rules: []Rule{{Tool: "bash", Command: c.prefix, Action: Allow}}}
		d := p.Check(subjectTools()["bash"], ptk.Call{Tool: "bash", Args: json.RawMessage(`{"command": ` + strconv.Quote(c.command) + `}`)})
		if got := d.Action == Allow; got != c.allowed {
			t.Errorf("rule %q, %q: allowed %v, want %v (%s)", c.prefix, c.command, got, c.allowed, d.Why)
			continue
		}
		if !c.allowed && (!strings.Contains(d.Why, c.why) || !strings.Contains(d.Why, "rule 1 (allow bash "+strconv.Quote(c.prefix)+") does not cover it")) {
			t.Errorf("rule %q, %q: why %q, want it to say %q", c.prefix, c.command, d.Why, c.why)
		}
	}
}

func TestAllowFlags(t *testing.T) {
	p := &Policy{Rules: []Rule{
		{Tool: "bash", Command: "find .", AllowFlags: []string{"-delete"}, Action: Allow},
		{Tool: "bash", Command: "go", AllowFlags: []string{"generate"}, Action: Allow},
	}}
	for command, want := range map[string]string{
		"find . -name '*.tmp' -delete": Allow,
		"find . -exec rm '{}' ';'":     "",
		"go generate ./...":            Allow,
		"go test -exec ./x":            "",
	} {
		if got := decideCommand(p, command); got != want {
			t.Errorf("%q: %q, want %q", command, got, want)
		}
	}
	for _, bad := range []Rule{
		{Tool: "bash", AllowFlags: []string{"-x"}, Action: Allow},
		{Tool: "bash", Command: "go", AllowFlags: []string{"-x"}, Action: Deny},
		{Tool: "bash", Command: "go", AllowFlags: []string{"a b"}, Action: Allow},
	} {
		if bad.check() == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestWhyAsk: the Decision says why a call falls to asking: a rule that
// asks, the nearest allow rule's reason, nothing when no rule comes near.
func TestWhyAsk(t *testing.T) {
	p := &Policy{Rules: []Rule{
		{Tool: "bash", Command: "go test", Action: Allow},
		{Tool: "write_file", Action: Ask},
	}}
	bash := subjectTools()["bash"]
	d := p.Check(bash, ptk.Call{Tool: "bash", Args: json.RawMessage(`{"command": "go test -exec ./x ./..."}`)})
	if d.Action != "" || !strings.Contains(d.Why, `rule 1 (allow bash "go test") does not cover it: go -exec: runs the program it names`) {
		t.Errorf("%+v", d)
	}
	if d := p.Check(bash, ptk.Call{Tool: "bash", Args: json.RawMessage(`{"command": "ls"}`)}); d.Action != "" || d.Why != "" {
		t.Errorf("ls: %+v", d)
	}
	if d := p.Check(subjectTools()["write_file"], ptk.Call{Tool: "write_file", Args: json.RawMessage(`{"path": "a"}`)}); d.Action != Ask || d.Why != "rule 2 asks for it" {
		t.Errorf("write_file: %+v", d)
	}
}
