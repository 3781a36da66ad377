// Package checkpoint keeps checkpoints of a workspace, so that what an
// assistant changed can be undone: before a turn changes anything, the
// workspace's files are saved in a shadow git repository outside the
// workspace (as Gemini CLI's /restore does), and Restore puts them back.
//
// The shadow repository is a folder of its own per workspace, under
// DefaultDir; the workspace's own .git is never read or written, and
// neither the user's nor the system's git configuration applies (no hooks,
// no signing, no filters). A checkpoint holds every file of the workspace
// that its .gitignore files do not ignore, as git would commit it: contents,
// symbolic links and the executable bit. What a turn did through bash is
// covered as well as what the file tools did, since a checkpoint is the
// whole workspace, not a list of edits.
//
// Restore first saves the workspace as it is (a checkpoint of kind
// KindRestore), so that restoring never loses a file: restoring that
// checkpoint undoes the restore. Then it makes the workspace what the
// checkpoint holds: files changed since are put back, files made since are
// removed. Ignored files are left alone, and so is everything outside the
// workspace.
//
// What a checkpoint does not cover: ignored files (build output,
// node_modules, .env when ignored), the contents of nested git
// repositories (kept as the commit they are at, like a submodule), empty
// folders, owners, times and permissions other than the executable bit,
// and anything outside the workspace: other folders, databases, processes,
// the network. The home folder and / are refused: a checkpoint would copy
// all of them.
//
// A Guard is the tool middleware that takes a checkpoint at the right time:
// Begin marks the start of a turn, and the first call of the turn to a tool
// that is not read-only saves the checkpoint before it runs; a turn that
// changes nothing takes none.
package checkpoint
