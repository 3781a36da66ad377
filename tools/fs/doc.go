// Package fs holds the read-only file tools a coding assistant gives a model:
// read_file, list_dir, glob and grep, confined to one workspace directory.
//
// [New] opens the workspace as an [os.Root]: every file the tools touch is
// opened through it, so a path with "..", an absolute path elsewhere or a
// symbolic link that leads out of the workspace fails by construction, not
// by checking strings. Paths from the model are relative to the workspace
// root; an absolute path inside the workspace is accepted too. Symbolic links
// must be relative to be followed, and walks never follow links to
// directories.
//
// Listings and searches (list_dir, glob, grep) leave out what git would
// ignore: .gitignore files at every level, each applying below its own
// directory, and .git/info/exclude; .ptkignore files, with the same syntax,
// add rules of their own and take precedence over .gitignore. Entries named
// .git or node_modules are always left out. A path the model names is never
// hidden: read_file reads an ignored file, and a listing or search that starts
// inside an ignored directory shows everything below it.
//
// What the model can correct (a missing file, a path outside the workspace,
// an invalid pattern) comes back as a [ptk.Result] with IsError set; a tool
// returns a Go error only when the workspace is closed ([ErrClosed]) or the
// context ends.
package fs
