package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-01-31T12:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tc := range []struct {
		name   string
		bi     *debug.BuildInfo
		want   string // String()
		wantGo string
	}{
		{"no build information", nil, Devel, ""},
		{"go install @version", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: Module, Version: "v1.2.3"}}, "v1.2.3", "go1.26.1"},
		{"go build in a clone", &debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v0.0.0-20260131120000-0123456789ab+dirty"}, Settings: vcs},
			"v0.0.0-20260131120000-0123456789ab+dirty", ""},
		{"go run in a clone", &debug.BuildInfo{Main: debug.Module{Path: Module, Version: Devel}, Settings: vcs}, "(devel) 0123456789ab, modified", ""},
		{"go run without version control", &debug.BuildInfo{Main: debug.Module{Path: Module, Version: Devel}}, Devel, ""},
		{"a program that embeds ptk", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"}, Settings: vcs,
			Deps: []*debug.Module{{Path: "golang.org/x/text", Version: "v0.1.0"}, {Path: Module, Version: "v1.4.0"}}}, "v1.4.0", ""},
		{"a program that embeds a replaced ptk", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: Module, Version: "v1.4.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.4.1-fork"}}}}, "v1.4.1-fork", ""},
		{"a program that embeds ptk replaced by a folder", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: Module, Version: "v1.4.0", Replace: &debug.Module{Path: "../ptk"}}}}, "v1.4.0", ""},
		{"a program without ptk", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"}}, Devel, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := From(tc.bi)
			if got.String() != tc.want {
				t.Errorf("String() = %q, want %q", got.String(), tc.want)
			}
			if tc.wantGo != "" && got.Go != tc.wantGo {
				t.Errorf("Go = %q, want %q", got.Go, tc.wantGo)
			}
			if got.Go == "" || !strings.Contains(got.Platform, "/") {
				t.Errorf("Go %q, Platform %q", got.Go, got.Platform)
			}
			if tc.bi != nil && tc.bi.Main.Path != Module && got.Revision != "" {
				t.Errorf("the main module's commit %q reported as ptk's", got.Revision)
			}
		})
	}
}

func TestLong(t *testing.T) {
	i := Info{Version: "v0.0.0-20260131120000-0123456789ab+dirty", Revision: "0123456789abcdef", Time: "2026-01-31T12:00:00Z", Modified: true, Go: "go1.26.1", Platform: "linux/amd64"}
	want := "ptk v0.0.0-20260131120000-0123456789ab+dirty\ngo1.26.1 linux/amd64\ncommit 0123456789abcdef (2026-01-31T12:00:00Z), with uncommitted changes\n"
	if got := i.Long(); got != want {
		t.Errorf("Long() = %q, want %q", got, want)
	}
	plain := Info{Version: "v1.2.3", Go: "go1.26.1", Platform: "darwin/arm64"}
	if got := plain.Long(); got != "ptk v1.2.3\ngo1.26.1 darwin/arm64\n" {
		t.Errorf("Long() = %q", got)
	}
}
