// Package version says which ptk a binary holds, from the build
// information the Go toolchain writes into every binary
// ([debug.ReadBuildInfo]): the module version `go install …@v1.2.3` gives,
// or the pseudo-version (commit and time) `go build` gives in a clone, or
// "(devel)" for `go run` and builds without version control.
//
// One answer for every place that names ptk's version: `ptk --version`,
// `ptk version`, and the serverInfo of ptk's MCP server. It is ptk's
// module that is looked up, not the main module, so that a program that
// embeds ptk as a library reports the ptk it was built with.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Module is ptk's module path.
const Module = "github.com/ptkit/ptk"

// Devel is the version of a build that carries none.
const Devel = "(devel)"

// Info is what a binary says about the ptk in it.
type Info struct {
	// Version is the module's version: "v1.2.3", a pseudo-version
	// ("v0.0.0-20260131120000-abcdef123456", "+dirty" when the tree had
	// changes), or Devel.
	Version string `json:"version"`
	// Revision, Time and Modified come from version control when the
	// binary was built in a clone: the commit, its time (RFC 3339) and
	// whether the tree had uncommitted changes.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Go is the toolchain that built the binary; Platform is GOOS/GOARCH.
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Get returns the build information of the running binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return From(bi)
}

// From reads bi (nil: a binary without build information).
func From(bi *debug.BuildInfo) Info {
	info := Info{Version: Devel, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return info
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	mod := &bi.Main
	if mod.Path != Module {
		// ptk inside someone else's program: its version is the
		// dependency's (or its replacement's).
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == Module {
				mod = d
				if d.Replace != nil && d.Replace.Version != "" {
					mod = d.Replace
				}
				break
			}
		}
		if mod == nil {
			return info
		}
	}
	if mod.Version != "" {
		info.Version = mod.Version
	}
	if mod == &bi.Main {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	return info
}

// String is the version alone, with the commit when the version does not
// name one: "v1.2.3", "v0.0.0-20260131120000-abcdef123456+dirty",
// "(devel) abcdef123456, modified".
func (i Info) String() string {
	v := i.Version
	if v == Devel && i.Revision != "" {
		v += " " + shortRev(i.Revision)
		if i.Modified {
			v += ", modified"
		}
	}
	return v
}

// Long is the version and how the binary was built, one fact a line.
func (i Info) Long() string {
	var b strings.Builder
	b.WriteString("ptk " + i.String() + "\n")
	b.WriteString(i.Go + " " + i.Platform + "\n")
	if i.Revision != "" {
		b.WriteString("commit " + i.Revision)
		if i.Time != "" {
			b.WriteString(" (" + i.Time + ")")
		}
		if i.Modified {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
