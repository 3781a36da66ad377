package distill

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptkit/ptk/ptool"
)

// TestScreen: each thing distilled code may not do, alone in a file that
// otherwise passes, is named; a file doing none passes.
func TestScreen(t *testing.T) {
	if err := Screen("distilled.go", []byte(goodCode)); err != nil {
		t.Fatalf("the good code: %v", err)
	}
	if err := Screen("distilled_test.go", []byte(testFor([2]string{"I love it", "positive"}))); err != nil {
		t.Fatalf("a table test: %v", err)
	}
	for _, c := range []struct {
		name, src, want string
	}{
		{"distilled.go", "package distilled\n\nimport \"os\"\n\nvar _ = os.Args\n", "imports os: distilled code may import only"},
		{"distilled.go", "package distilled\n\nimport \"os/exec\"\n\nfunc init() { exec.Command(\"sh\").Run() }\n", "imports os/exec"},
		{"distilled.go", "package distilled\n\nfunc init() {}\n", "an init function is not allowed"},
		{"distilled.go", "package distilled\n\nimport \"net\"\n\nvar _ = net.Dial\n", "imports net"},
		{"distilled.go", "package distilled\n\nimport \"syscall\"\n\nvar _ = syscall.Mount\n", "imports syscall"},
		{"distilled.go", "package distilled\n\nimport \"reflect\"\n\nvar _ = reflect.TypeOf\n", "imports reflect"},
		{"distilled.go", "package distilled\n\nimport \"plugin\"\n\nvar _ = plugin.Open\n", "imports plugin"},
		{"distilled.go", "package distilled\n\nimport \"unsafe\"\n\nvar _ = unsafe.Sizeof(0)\n", "imports unsafe"},
		{"distilled.go", "package distilled\n\n// #include <stdlib.h>\nimport \"C\"\n", "cgo (import \"C\") is not allowed"},
		{"distilled.go", "package distilled\n\nimport _ \"embed\"\n\n//go:embed secret\nvar s string\n", "the directive \"//go:embed\""},
		{"distilled.go", "package distilled\n\nimport _ \"unsafe\"\n\n//go:linkname now time.now\nfunc now() int64\n", "the directive \"//go:linkname\""},
		{"distilled.go", "//go:build ignore\n\npackage distilled\n", "the directive \"//go:build\""},
		{"distilled.go", "// +build ignore\n\npackage distilled\n", "a +build line is not allowed"},
		{"distilled.go", "package distilled\n\n//line other.go:1\nfunc f() {}\n", "the directive \"//line\""},
		{"distilled.go", "package distilled\n\nfunc f() { go f() }\n", "a go statement is not allowed"},
		{"distilled.go", "package distilled\n\nvar x = func() int { return 1 }()\n", "may not call a function literal"},
		{"distilled.go", "package distilled\n\nvar x = f()\n\nfunc f() int { return 1 }\n", "may not call f"},
		{"distilled.go", "package distilled\n\nvar ptkWrap = 1\n", "names starting with ptk are the scoring harness's"},
		{"distilled.go", "package distilled\n\nfunc f() { ptkTried[\"x\"] = true }\n", "the name ptkTried is not allowed"},
		{"distilled.go", "package distilled\n\nimport . \"strings\"\n\nvar _ = ToUpper\n", "a dot import of strings"},
		{"distilled.go", "package distilled\n\nimport \"github.com/ptkit/ptk/ptool\"\n\nvar _ = ptool.ReadDefs\n", "ptool.ReadDefs is not allowed"},
		{"distilled.go", "package distilled\n\nimport p \"github.com/ptkit/ptk/ptool\"\n\nvar _ = p.Load\n", "p.Load is not allowed"},
		{"distilled.go", "package distilled\n\nimport \"testing\"\n\nvar _ = testing.Testing\n", "imports testing"},
		{"distilled_test.go", "package distilled\n\nimport \"testing\"\n\nfunc TestMain(m *testing.M) {}\n", "TestMain is not allowed"},
		{"distilled_test.go", "package distilled\n\nimport \"os\"\n\nvar _ = os.Args\n", "imports os"},
		{"distilled.go", "package distilled\n\nfunc f( {\n", "expected"},
		{"distilled.go", "package distilled\n\nimport \"github.com/ptkit/ptk/ptool\"\n\nfunc f() { ptool.ErrFallback = nil }\n", "changing ptool.ErrFallback is not allowed"},
		{"distilled.go", "package distilled\n\nimport \"time\"\n\nfunc f() { time.Local = time.UTC }\n", "changing time.Local is not allowed"},
		{"distilled.go", "package distilled\n\nimport \"unicode\"\n\nfunc f() { unicode.Upper.R16[0].Lo++ }\n", "changing unicode.Upper is not allowed"},
		{"distilled.go", "package distilled\n\nimport \"time\"\n\nfunc f() { p := &time.Local; *p = nil }\n", "changing time.Local is not allowed"},
		{"distilled.go", "package distilled\n\nimport \"time\"\n\nfunc f() { time.AfterFunc(0, f) }\n", "time.AfterFunc is not allowed: it starts a goroutine"},
		{"distilled.go", "package distilled\n\nimport \"context\"\n\nfunc f(ctx context.Context) { context.AfterFunc(ctx, func() {}) }\n", "context.AfterFunc is not allowed"},
	} {
		err := Screen(c.name, []byte(c.src))
		var serr *ScreenError
		if !errors.Is(err, ErrScreened) || !errors.As(err, &serr) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n%s\ngot %v, want %q", c.name, c.src, err, c.want)
		}
	}
	// library calls in package-level variables are fine, and so are a
	// field of the input named ptk_id (PtkId) and local variables
	ok := "package distilled\n\nimport (\n\t\"regexp\"\n\t\"time\"\n)\n\nvar re = regexp.MustCompile(`^a+$`)\nvar n = len(\"abc\")\n\n" +
		"type In struct{ PtkId int }\n\nfunc f(in In) int { loc := time.Local; t := time.Now(); t = t.In(loc); return in.PtkId + t.Day() }\n"
	if err := Screen("distilled.go", []byte(ok)); err != nil {
		t.Errorf("fine code: %v", err)
	}
}

// TestPtoolStub: the ptool the candidates build against declares what
// distilled code may use of the real one, with the same message.
func TestPtoolStub(t *testing.T) {
	for _, name := range allowedPtool {
		if !strings.Contains(ptoolStub, "var "+name+" = ") {
			t.Errorf("the stub lacks %s", name)
		}
	}
	if !strings.Contains(ptoolStub, `errors.New("`+ptoolErrFallback().Error()+`")`) {
		t.Errorf("the stub's ErrFallback differs from ptool's: %s", ptoolStub)
	}
}

func ptoolErrFallback() error { return ptool.ErrFallback }
