// Package fs holds the file tools a coding assistant gives a model, confined
// to one workspace directory: the read-only read_file, list_dir, glob and
// grep ([Workspace.Tools]), and write_file and edit_file, which change files
// ([Workspace.EditTools]).
//
// [New] opens the workspace as an [os.Root]: every file the tools touch is
// opened through it, so a path with "..", an absolute path elsewhere or a
// symbolic link that leads out of the workspace fails by construction, not
// by checking strings. Paths from the model are relative to the workspace
// root; an absolute path inside the workspace is accepted too. Symbolic links
// must be relative to be followed, and walks never follow links to
// directories.
//
// The tools read and write regular files and list directories, nothing
// else: every file is opened without blocking (O_NONBLOCK, directories with
// O_DIRECTORY) and its type checked on the opened descriptor, so a FIFO, a
// socket or a device, even one swapped in for a regular file between a
// check and the open, is refused with an error result that says what it
// is, and never blocks a call; an ignore file that is not a regular file
// counts as absent.
//
// Listings and searches (list_dir, glob, grep) leave out what git would
// ignore: .gitignore files at every level, each applying below its own
// directory, and .git/info/exclude; .ptkignore files, with the same syntax,
// add rules of their own and take precedence over .gitignore. Entries named
// .git or node_modules are always left out. A path the model names is never
// hidden: read_file reads an ignored file, and a listing or search that starts
// inside an ignored directory shows everything below it.
//
// write_file creates a file, with its parent directories, or replaces one
// whole; edit_file replaces an exact string in a text file, once or
// everywhere, and returns a unified diff of the change. Both write a
// temporary file next to the target and rename it over the target, so a file
// is never left half-written, an existing file keeps its permission bits,
// and a file that has become a symbolic link is replaced rather than written
// through. They refuse to write through a symbolic link at the end of the
// path, to write inside a directory named .git (whose hooks and config run
// code), and to write more than 10 MB. They resolve the target's directory
// once, one component at a time through directory handles, reading
// symbolic links themselves and checking each handle against the name it
// was opened by, and then do everything through that one handle: the
// directory checked is the directory written, so swapping a directory on
// the way for a link cannot lead a write into .git or out of the
// workspace. edit_file keeps a file's CRLF line endings when old_string and
// new_string are written with plain newlines, and when old_string is not
// found says where it is if only whitespace differs. A Workspace runs its
// writes one at a time; a write waiting for its turn gives up when its
// context ends.
//
// The temporary files are named .NAME.ptk-tmp-XXXXXXXX (eight hex digits).
// Listings and searches never show them, and a write removes those in its
// folder older than 15 minutes, which a process killed mid-write left.
//
// A file with a NUL byte anywhere is binary: read_file refuses it, whatever
// part of it is asked for, grep skips it and edit_file does not edit it.
// read_file looks at its context every MiB it reads, however long the lines.
//
// What the model can correct (a missing file, a path outside the workspace,
// an invalid pattern, an old_string that is not unique) comes back as a
// [ptk.Result] with IsError set; a tool returns a Go error only when the
// workspace is closed ([ErrClosed]) or the context ends.
package fs
