package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/catalog"
)

// envUse is where an environment variable is read.
type envUse struct {
	name, where string
	test        bool // by a test, or a package that only tests use
}

var ptkVar = regexp.MustCompile(`^PTK_[A-Z0-9_]+$`)

// protocolTags are PTK_ names that are the text protocol's tags, not
// variables.
var protocolTags = []string{"PTK_CALL", "PTK_BATCH", "PTK_RESULT", "PTK_ERROR"}

// stdlibEnv are the variables Go's standard library reads for a function
// ptk calls.
var stdlibEnv = map[string][]string{
	"os.UserConfigDir":      {"XDG_CONFIG_HOME", "HOME"},
	"os.UserHomeDir":        {"HOME"},
	"os.MkdirTemp":          {"TMPDIR"},
	"os.TempDir":            {"TMPDIR"},
	"http.DefaultTransport": {"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"},
	"exec.LookPath":         {"PATH"},
	"exec.Command":          {"PATH"},
	"exec.CommandContext":   {"PATH"},
}

// envReads finds every environment variable the module's Go code reads:
// the arguments of os.Getenv and os.LookupEnv (string literals, or the
// constants that hold them), the variables of cmd/ptk's setting, every
// PTK_ string, and the variables the standard library reads for the
// functions above. Other modules in the tree (bench/) are left out.
func envReads(t *testing.T) []envUse {
	t.Helper()
	root := filepath.Join("..", "..")
	var uses []envUse
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			uses = append(uses, envInDir(t, path)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return uses
}

func envInDir(t *testing.T, dir string) []envUse {
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var parsed []*ast.File
	consts := map[string]string{}
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, af)
		ast.Inspect(af, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						if s, ok := stringLit(vs.Values[i]); ok {
							consts[id.Name] = s
						}
					}
				}
			}
			return true
		})
	}
	testPkg := strings.HasSuffix(filepath.Base(dir), "test")
	var uses []envUse
	for i, af := range parsed {
		test := testPkg || strings.HasSuffix(files[i], "_test.go")
		add := func(name string, pos token.Pos) {
			uses = append(uses, envUse{name: name, where: fset.Position(pos).String(), test: test})
		}
		value := func(e ast.Expr) (string, bool) {
			if s, ok := stringLit(e); ok {
				return s, true
			}
			if id, ok := e.(*ast.Ident); ok {
				s, ok := consts[id.Name]
				return s, ok
			}
			return "", false
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				switch fn := callName(n.Fun); fn {
				case "os.Getenv", "os.LookupEnv":
					if s, ok := value(n.Args[0]); ok {
						add(s, n.Pos())
					}
				case "setting": // cmd/ptk: setting(cmd, flag, val, def, env...)
					for _, a := range n.Args[min(4, len(n.Args)):] {
						if s, ok := value(a); ok {
							add(s, a.Pos())
						}
					}
				}
			case *ast.SelectorExpr:
				if vars, ok := stdlibEnv[callName(n)]; ok {
					for _, v := range vars {
						add(v, n.Pos())
					}
				}
			case *ast.BasicLit:
				if s, ok := stringLit(n); ok && ptkVar.MatchString(s) && !slices.Contains(protocolTags, s) {
					add(s, n.Pos())
				}
			}
			return true
		})
	}
	return uses
}

func callName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	}
	return ""
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// TestEnvironmentListed keeps 'ptk help environment' true: every variable
// ptk's code reads is listed (or is one ptk sets for itself), and every
// variable listed is read.
func TestEnvironmentListed(t *testing.T) {
	listed := map[string]bool{}
	for _, g := range environment {
		for _, v := range g.vars {
			if listed[v.name] {
				t.Errorf("%s listed twice", v.name)
			}
			listed[v.name] = true
		}
	}
	internal := map[string]bool{}
	for _, v := range internalEnv {
		internal[v.name] = true
	}
	read := map[string]string{}
	for _, u := range envReads(t) {
		if !u.test {
			read[u.name] = u.where
		}
	}
	// The catalog's providers name their key variables.
	for name, p := range catalog.Default().Providers {
		if p.APIKeyEnv != "" {
			read[p.APIKeyEnv] = "llm/catalog/default.json, provider " + name
		}
	}
	for name, where := range read {
		if !listed[name] && !internal[name] {
			t.Errorf("%s is read (%s) but 'ptk help environment' does not list it: add it to environment in cmd/ptk/environment.go", name, where)
		}
	}
	for name := range listed {
		if _, ok := read[name]; !ok {
			t.Errorf("%s is listed in 'ptk help environment' but nothing in ptk reads it", name)
		}
	}
	for name := range internal {
		if _, ok := read[name]; !ok {
			t.Errorf("%s is listed as internal but nothing in ptk reads it", name)
		}
	}
}

const (
	envDocBegin = "<!-- BEGIN environment: generated by go test ./cmd/ptk -run TestEnvironmentDoc -update-docs; do not edit -->"
	envDocEnd   = "<!-- END environment -->"
)

// environmentDoc is the Markdown of 'ptk help environment”s table.
func environmentDoc() string {
	var b strings.Builder
	for _, g := range environment {
		fmt.Fprintf(&b, "\n%s:\n\n| variable | what for |\n| --- | --- |\n", g.title)
		for _, v := range g.vars {
			fmt.Fprintf(&b, "| `%s` | %s |\n", v.name, strings.ReplaceAll(v.what, "|", `\|`))
		}
	}
	b.WriteString("\n" + strings.ReplaceAll(environmentFooter, "\n", " ") + "\n")
	return b.String()
}

// TestEnvironmentDoc keeps the list of docs/cli.md the table ptk help
// environment prints.
func TestEnvironmentDoc(t *testing.T) {
	file := filepath.Join(repoRoot, "docs", "cli.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, envDocBegin), strings.Index(doc, envDocEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q block", file, envDocBegin, envDocEnd)
	}
	want := environmentDoc()
	if got := doc[i+len(envDocBegin) : j]; got == want {
		return
	} else if !*updateDocs {
		t.Errorf("the environment variables in %s are not ptk help environment's: run go test ./cmd/ptk -run TestEnvironmentDoc -update-docs\n--- in the page\n%s--- in the table\n%s", file, got, want)
		return
	}
	if err := os.WriteFile(file, []byte(doc[:i+len(envDocBegin)]+want+doc[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTestEnvironmentDocumented keeps docs/testing.md's list of the
// variables the tests read true.
func TestTestEnvironmentDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	user := map[string]bool{}
	for _, g := range environment {
		for _, v := range g.vars {
			user[v.name] = true
		}
	}
	seen := map[string]bool{}
	for _, u := range envReads(t) {
		if !u.test || user[u.name] || seen[u.name] || !ptkVar.MatchString(u.name) && u.name != "CI" {
			continue
		}
		seen[u.name] = true
		if !strings.Contains(string(doc), "`"+u.name+"`") {
			t.Errorf("the tests read %s (%s), which docs/testing.md does not describe", u.name, u.where)
		}
	}
	if len(seen) < 5 {
		t.Errorf("found only %d variables the tests read: is the scan broken?", len(seen))
	}
}
