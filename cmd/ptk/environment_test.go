package main

import (
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
