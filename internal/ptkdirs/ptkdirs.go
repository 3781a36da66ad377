// Package ptkdirs names ptk's own folders, which the tools a model drives
// never write even when the workspace holds them: the config folder
// (policy.json, mcp.json, models.json: a model must not write its own
// permissions or the servers ptk starts), the state folder (the
// checkpoints' shadow repositories, whose config ptk's git reads) and the
// data folder (the trace store). Both binaries that run tools, ptk and
// ptk-temporal, protect the same list.
package ptkdirs

import (
	"os"
	"path/filepath"

	"github.com/ptkit/ptk/checkpoint"
	"github.com/ptkit/ptk/trace"
)

// Folders returns ptk's own folders for this user's environment (XDG
// variables and the home directory), those that can be named.
func Folders() []string {
	var dirs []string
	if d, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "ptk"))
	}
	if d, err := checkpoint.DefaultDir(); err == nil {
		dirs = append(dirs, filepath.Dir(d))
	}
	if p, err := trace.DefaultPath(); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	return dirs
}
