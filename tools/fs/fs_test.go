package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fixture writes a small repository to a temporary directory: a Go module
// with nested packages, .gitignore files at two levels (one re-including
// with "!"), a .ptkignore, node_modules, .git, a binary file, a CRLF file, a
// Latin-1 file, an empty file and a file of 5000 lines.
func fixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	var big strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	files := map[string]string{
		"go.mod":                            "module example.com/demo\n\ngo 1.26\n",
		"README.md":                         "# demo\n\nA small service.\n",
		"main.go":                           "package main\n\nimport \"example.com/demo/internal/server\"\n\nfunc main() {\n\tserver.Run()\n}\n",
		"internal/server/server.go":         "package server\n\n// Run starts the server.\nfunc Run() {\n\tlisten(\":8080\")\n}\n\nfunc listen(addr string) {}\n",
		"internal/server/server_test.go":    "package server\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) {}\n",
		".gitignore":                        "# build output\n*.log\nbuild/\n/dist\n",
		".ptkignore":                        "secrets/\n",
		"app.log":                           "log: started\n",
		"build/out.txt":                     "func built() {}\n",
		"dist/bundle.js":                    "function bundled() {}\n",
		"sub/dist/kept.js":                  "function kept() {}\n",
		"docs/.gitignore":                   "!notes.log\n",
		"docs/notes.log":                    "func notes are kept\n",
		"docs/other.log":                    "ignored\n",
		"web/.gitignore":                    "*.js\n!keep.js\n",
		"web/app.js":                        "function app() {}\n",
		"web/keep.js":                       "function keep() {}\n",
		"web/src/index.ts":                  "export function index() {}\n",
		"secrets/key.txt":                   "hunter2\n",
		"node_modules/left-pad/index.js":    "module.exports = function leftPad() {}\n",
		".git/HEAD":                         "ref: refs/heads/main\n",
		".git/config":                       "[core]\n",
		"assets/logo.png":                   "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR func",
		"crlf.txt":                          "one\r\ntwo\r\nthree\r\n",
		"latin1.txt":                        "caf\xe9 cr\xe8me\n",
		"empty.txt":                         "",
		"big.txt":                           big.String(),
		"internal/server/testdata/wide.txt": "short\n" + strings.Repeat("wide ", 1000) + "needle " + strings.Repeat("é", 3000) + "\nlast\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink(t, "main.go", filepath.Join(dir, "link.go"))
	symlink(t, "internal", filepath.Join(dir, "linkdir"))
	return dir
}

func symlink(t testing.TB, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
}

func open(t testing.TB, dir string) *Workspace {
	t.Helper()
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// run calls the named tool with args and fails the test on a Go error.
func run(t testing.TB, w *Workspace, tool string, args any) ptk.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := w.Tool(tool)
	if !ok {
		t.Fatalf("no tool %q", tool)
	}
	res, err := tl.Run(context.Background(), raw)
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, raw, err)
	}
	return res
}

type args = map[string]any

// A toolCase is one call and what its result must be: exactly want if want
// is set, and containing each of has.
type toolCase struct {
	name    string
	args    args
	want    string
	has     []string
	wantErr bool
}

func (c toolCase) check(t *testing.T, res ptk.Result) {
	t.Helper()
	if res.IsError != c.wantErr {
		t.Errorf("IsError = %v, want %v; content:\n%s", res.IsError, c.wantErr, res.Content)
	}
	if c.want != "" && res.Content != c.want {
		t.Errorf("content:\n%s\nwant:\n%s", res.Content, c.want)
	}
	for _, h := range c.has {
		if !strings.Contains(res.Content, h) {
			t.Errorf("content does not contain %q:\n%s", h, res.Content)
		}
	}
}

func runCases(t *testing.T, w *Workspace, tool string, cases []toolCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, run(t, w, tool, c.args)) })
	}
}

func TestTools(t *testing.T) {
	w := open(t, t.TempDir())
	var names []string
	for i, tl := range slices.Concat(w.Tools(), w.EditTools()) {
		info := tl.Info()
		names = append(names, info.Name)
		if readOnly := i < len(w.Tools()); info.ReadOnly != readOnly || info.Cacheable != readOnly {
			t.Errorf("%s: ReadOnly %v, Cacheable %v; want both %v", info.Name, info.ReadOnly, info.Cacheable, readOnly)
		}
		if len(info.Description) < 100 {
			t.Errorf("%s: description too short: %q", info.Name, info.Description)
		}
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(info.Parameters, &schema); err != nil {
			t.Fatalf("%s: parameters: %v", info.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema must be an object with additionalProperties false: %s", info.Name, info.Parameters)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(info.Parameters))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(info.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile(info.Name + ".json"); err != nil {
			t.Errorf("%s: schema does not compile: %v", info.Name, err)
		}
		if found, ok := w.Tool(info.Name); !ok || found.Info().Name != info.Name {
			t.Errorf("Tool(%q) did not find it", info.Name)
		}
	}
	if want := []string{"read_file", "list_dir", "glob", "grep", "write_file", "edit_file"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if _, ok := w.Tool("delete_file"); ok {
		t.Error(`Tool("delete_file") found a tool`)
	}
}

func TestBadArguments(t *testing.T) {
	w := open(t, fixture(t))
	for _, tl := range slices.Concat(w.Tools(), w.EditTools()) {
		name := tl.Info().Name
		for raw, empty := range map[string]bool{`not json`: false, `[]`: false, `{"path": 3, "pattern": 4}`: false, `{}`: true, `null`: true, ``: true} {
			res, err := tl.Run(context.Background(), json.RawMessage(raw))
			if err != nil {
				t.Errorf("%s(%s): Go error %v", name, raw, err)
			}
			// Only list_dir can do without arguments.
			wantErr := name != "list_dir" || !empty
			if res.IsError != wantErr {
				t.Errorf("%s(%s): IsError %v, want %v: %s", name, raw, res.IsError, wantErr, res.Content)
			}
		}
	}
}

func TestClosed(t *testing.T) {
	w := open(t, fixture(t))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, tl := range slices.Concat(w.Tools(), w.EditTools()) {
		_, err := tl.Run(context.Background(), json.RawMessage(`{"path": "go.mod", "pattern": "x", "old_string": "go", "new_string": "Go"}`))
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", tl.Info().Name, err)
		}
	}
}

func TestCanceled(t *testing.T) {
	w := open(t, fixture(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range []string{"grep", "read_file"} {
		tl, _ := w.Tool(name)
		_, err := tl.Run(ctx, json.RawMessage(`{"pattern": "line", "path": "big.txt"}`))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", name, err)
		}
	}
	big := t.TempDir()
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(big, fmt.Sprintf("f%03d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tl, _ := open(t, big).Tool("glob")
	if _, err := tl.Run(ctx, json.RawMessage(`{"pattern": "**"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("glob with a canceled context: %v, want context.Canceled", err)
	}
}

// TestConcurrent runs every tool from many goroutines at once on one
// Workspace; run it with -race.
func TestConcurrent(t *testing.T) {
	w := open(t, fixture(t))
	calls := []struct {
		tool string
		args string
	}{
		{"read_file", `{"path": "big.txt", "offset": 100, "limit": 5}`},
		{"list_dir", `{"path": "web"}`},
		{"glob", `{"pattern": "**/*.go"}`},
		{"grep", `{"pattern": "func \\w+", "include": "*.go"}`},
	}
	want := make([]string, len(calls))
	for i, c := range calls {
		want[i] = run(t, w, c.tool, json.RawMessage(c.args)).Content
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				c := calls[(g+i)%len(calls)]
				tl, _ := w.Tool(c.tool)
				res, err := tl.Run(context.Background(), json.RawMessage(c.args))
				if err != nil || res.Content != want[(g+i)%len(calls)] {
					t.Errorf("%s: %v, %q", c.tool, err, res.Content)
				}
			}
		})
	}
	wg.Wait()
}

// TestSubject checks that the writing tools declare the path they change,
// found through the workspace's wrapper, and the read-only tools nothing.
func TestSubject(t *testing.T) {
	w := open(t, t.TempDir())
	raw := json.RawMessage(`{"path": "a/b.go", "content": "x", "old_string": "x", "new_string": "y"}`)
	for _, tl := range slices.Concat(w.Tools(), w.EditTools()) {
		want := tool.Subject{}
		if !tl.Info().ReadOnly {
			want.Path = "a/b.go"
		}
		if got := tool.SubjectOf(tl, raw); got != want {
			t.Errorf("SubjectOf(%s) = %+v, want %+v", tl.Info().Name, got, want)
		}
	}
}
