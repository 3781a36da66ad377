package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Errors of Open and Restore.
var (
	// ErrNoGit is the error of Open when git is not installed.
	ErrNoGit = errors.New("checkpoint: git is not installed (checkpoints need it)")
	// ErrRefused is the error of Open for a workspace too wide to copy:
	// the home folder, or /.
	ErrRefused = errors.New("checkpoint: not for this folder")
	// ErrNotFound is the error for a checkpoint that does not exist.
	ErrNotFound = errors.New("checkpoint: no such checkpoint")
)

// Kind says why a checkpoint was taken.
type Kind string

const (
	// KindTurn is the workspace before a turn that changed it.
	KindTurn Kind = "turn"
	// KindRestore is the workspace before a restore: restoring it undoes
	// the restore.
	KindRestore Kind = "restore"
)

// Meta is what a checkpoint says about itself besides the files.
type Meta struct {
	// Conversation is the conversation the turn belongs to, if any;
	// Messages is how many messages it had before the turn: restoring the
	// checkpoint restores the conversation to that many.
	Conversation string `json:"conversation,omitempty"`
	Messages     int    `json:"messages,omitempty"`
	// Prompt is what the user asked in the turn, for a person to tell the
	// checkpoints apart.
	Prompt string `json:"prompt,omitempty"`
	// History, when set, is kept with the checkpoint (as a git blob) and
	// returned by Store.History: a restore keeps the conversation it cut
	// here, so that undoing the restore brings it back.
	History []byte `json:"-"`
}

// A Checkpoint is the workspace's files at one moment.
type Checkpoint struct {
	// ID is the checkpoint's commit in the shadow repository.
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`
	Meta
	// Restored is, for a checkpoint of KindRestore, the checkpoint that
	// was then restored.
	Restored string `json:"restored,omitempty"`
	// HasHistory reports whether the checkpoint keeps a conversation
	// (Meta.History).
	HasHistory bool `json:"has_history,omitempty"`

	tree, history string
}

// Short is the checkpoint's ID cut to 8 characters, which Get takes.
func (c Checkpoint) Short() string { return c.ID[:min(8, len(c.ID))] }

// A Change is a file that a restore changes.
type Change struct {
	// Action is what the restore does to the file: "restored" (it was
	// changed since), "brought back" (it was removed since), "removed" (it
	// was made since).
	Action string
	// Path is the file's path in the workspace, with slashes.
	Path string
}

// Store is the checkpoints of one workspace. It is safe for concurrent
// use, and several processes can use one workspace's checkpoints at once.
type Store struct {
	git       string // the git program
	workspace string // the workspace's real, absolute path
	dir       string // the shadow repository
	mu        sync.Mutex
}

// DefaultDir is the folder that holds the shadow repositories:
// $XDG_STATE_HOME/ptk/checkpoints, else ~/.local/state/ptk/checkpoints.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "ptk", "checkpoints"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("checkpoint: no folder for checkpoints: %w", err)
	}
	return filepath.Join(home, ".local", "state", "ptk", "checkpoints"), nil
}

// maxPrompt is how much of a turn's prompt a checkpoint keeps.
const maxPrompt = 500

// ref is the shadow repository's branch of checkpoints, the latest first.
const ref = "refs/ptk/checkpoints"

// Open opens the checkpoints of workspace, kept under dir (DefaultDir when
// dir is ""), making its shadow repository when there is none. It fails
// with ErrNoGit without git, and ErrRefused for the home folder or /.
func Open(ctx context.Context, workspace, dir string) (*Store, error) {
	gitPath, err := findGit()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("checkpoint: %s is not a folder", abs)
	}
	if real == filepath.Dir(real) {
		return nil, fmt.Errorf("%w: %s is the root of the file system; checkpoints would copy all of it", ErrRefused, real)
	}
	if home, err := os.UserHomeDir(); err == nil {
		if h, err := filepath.EvalSymlinks(home); err == nil && h == real {
			return nil, fmt.Errorf("%w: %s is your home folder; checkpoints would copy all of it: start ptk in a project's folder", ErrRefused, real)
		}
	}
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256([]byte(real))
	s := &Store{git: gitPath, workspace: real, dir: filepath.Join(dir, hex.EncodeToString(sum[:8]))}
	if err := s.init(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Workspace is the workspace's real, absolute path.
func (s *Store) Workspace() string { return s.workspace }

// Dir is the shadow repository's folder.
func (s *Store) Dir() string { return s.dir }

// init makes the shadow repository when it is missing, and checks that it
// is this workspace's.
func (s *Store) init(ctx context.Context) error {
	mark := filepath.Join(s.dir, "ptk-workspace")
	if b, err := os.ReadFile(mark); err == nil {
		if string(b) != s.workspace {
			return fmt.Errorf("checkpoint: %s keeps the checkpoints of %s, not of %s", s.dir, b, s.workspace)
		}
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	unlock, err := lock(s.dir)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(mark); err == nil {
		return s.init(ctx) // another process made it meanwhile
	}
	if _, err := s.run(ctx, nil, "init", "--quiet", "--template="); err != nil {
		return err
	}
	// The shadow repository's own settings: nothing from the user's or the
	// system's configuration applies (see gitEnv).
	for _, kv := range [][2]string{
		{"core.autocrlf", "false"}, {"core.safecrlf", "false"}, {"core.symlinks", "true"},
		{"core.fsmonitor", "false"}, {"core.hooksPath", os.DevNull}, {"core.quotePath", "false"},
		{"commit.gpgSign", "false"}, {"gc.auto", "0"}, {"advice.addEmbeddedRepo", "false"},
		{"user.name", "ptk"}, {"user.email", "ptk@localhost"},
	} {
		if _, err := s.run(ctx, nil, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	// The shadow repository inside the workspace (a workspace that holds
	// the state folder) must not copy itself.
	if rel, err := filepath.Rel(s.workspace, s.dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		exclude := "/" + filepath.ToSlash(rel) + "/\n"
		if err := os.MkdirAll(filepath.Join(s.dir, "info"), 0o700); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if err := os.WriteFile(filepath.Join(s.dir, "info", "exclude"), []byte(exclude), 0o600); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if err := os.WriteFile(mark, []byte(s.workspace), 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// message is what a checkpoint's commit message holds after its title.
type message struct {
	Kind Kind `json:"kind"`
	Meta
	Restored string `json:"restored,omitempty"`
	History  string `json:"history,omitempty"`
}

// Save takes a checkpoint of the workspace as it is now.
func (s *Store) Save(ctx context.Context, m Meta) (Checkpoint, error) {
	unlock, err := s.lock()
	if err != nil {
		return Checkpoint{}, err
	}
	defer unlock()
	return s.save(ctx, message{Kind: KindTurn, Meta: m})
}

// save takes a checkpoint; the caller holds the lock.
func (s *Store) save(ctx context.Context, msg message) (Checkpoint, error) {
	tree, err := s.snapshot(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	if len(msg.Prompt) > maxPrompt {
		msg.Prompt = cut(msg.Prompt, maxPrompt)
	}
	if msg.Meta.History != nil {
		if msg.History, err = s.run(ctx, msg.Meta.History, "hash-object", "-w", "--stdin"); err != nil {
			return Checkpoint{}, err
		}
	}
	meta, err := json.Marshal(msg)
	if err != nil {
		return Checkpoint{}, err
	}
	title := string(msg.Kind)
	if msg.Kind == KindRestore {
		title += ": before restoring " + msg.Restored[:min(8, len(msg.Restored))]
	} else if msg.Prompt != "" {
		first, _, _ := strings.Cut(msg.Prompt, "\n")
		title += ": " + cut(first, 72)
	}
	args := []string{"commit-tree", tree, "-F", "-"}
	parent, _ := s.run(ctx, nil, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if parent != "" {
		args = append(args, "-p", parent)
	}
	id, err := s.run(ctx, []byte(title+"\n\n"+string(meta)+"\n"), args...)
	if err != nil {
		return Checkpoint{}, err
	}
	// Only from the parent read: a checkpoint is never lost to another
	// process's at the same moment (the lock prevents it; this checks it).
	update := []string{"update-ref", "-m", "checkpoint", ref, id}
	if parent != "" {
		update = append(update, parent)
	}
	if _, err := s.run(ctx, nil, update...); err != nil {
		return Checkpoint{}, err
	}
	return s.Get(ctx, id)
}

// snapshot stages the workspace as it is in the shadow index and returns
// its tree. A file that cannot be read is left out (--ignore-errors), not
// a reason to take no checkpoint.
//
// Nested repositories are taken out of the shadow index first, so that git
// adds each as new (reading only its HEAD) and never compares it with what
// the index holds: that comparison runs git status inside the nested
// repository, where its own configuration (core.fsmonitor, a clean filter)
// would run whatever programs a model's command wrote into it, as the
// user and outside any sandbox.
func (s *Store) snapshot(ctx context.Context) (string, error) {
	if err := s.dropGitlinks(ctx); err != nil {
		return "", err
	}
	if _, err := s.run(ctx, nil, "add", "--all", "--ignore-errors", "--", "."); err != nil && !isIgnoredErrors(err) {
		return "", err
	}
	return s.run(ctx, nil, "write-tree")
}

// dropGitlinks removes the nested repositories (gitlinks) from the shadow
// index, touching nothing in the workspace.
func (s *Store) dropGitlinks(ctx context.Context) error {
	out, err := s.runBytes(ctx, nil, "ls-files", "-z", "--stage")
	if err != nil {
		return err
	}
	var links []byte
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		// mode SP object SP stage TAB path
		if meta, path, ok := bytes.Cut(rec, []byte{'\t'}); ok && bytes.HasPrefix(meta, []byte("160000 ")) {
			links = append(append(links, path...), 0)
		}
	}
	if links == nil {
		return nil
	}
	_, err = s.run(ctx, links, "update-index", "-z", "--force-remove", "--stdin")
	return err
}

// isIgnoredErrors reports the failure of git add --ignore-errors that
// still staged everything it could read.
func isIgnoredErrors(err error) bool {
	var ge *gitError
	return errors.As(err, &ge) && strings.Contains(ge.stderr, "unable to index file")
}

// maxList is the most checkpoints List returns.
const maxList = 1000

// List returns the workspace's checkpoints, the latest first (at most a
// thousand).
func (s *Store) List(ctx context.Context) ([]Checkpoint, error) {
	out, err := s.run(ctx, nil, "log", "-z", "-n", strconv.Itoa(maxList), "--format=%H%x1f%T%x1f%ct%x1f%B", ref, "--")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && (strings.Contains(ge.stderr, "unknown revision") || strings.Contains(ge.stderr, "bad revision")) {
			return nil, nil // no checkpoint yet
		}
		return nil, err
	}
	var cps []Checkpoint
	for rec := range strings.SplitSeq(out, "\x00") {
		if strings.TrimSpace(rec) == "" {
			continue
		}
		if c, ok := parse(rec); ok {
			cps = append(cps, c)
		}
	}
	return cps, nil
}

// parse reads one record of List's git log.
func parse(rec string) (Checkpoint, bool) {
	f := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x1f", 4)
	if len(f) != 4 {
		return Checkpoint{}, false
	}
	secs, _ := strconv.ParseInt(f[2], 10, 64)
	c := Checkpoint{ID: f[0], tree: f[1], Time: time.Unix(secs, 0)}
	body := strings.TrimSpace(f[3])
	if i := strings.LastIndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	}
	var msg message
	if json.Unmarshal([]byte(body), &msg) != nil {
		return Checkpoint{}, false
	}
	c.Kind, c.Meta, c.Restored, c.history, c.HasHistory = msg.Kind, msg.Meta, msg.Restored, msg.History, msg.History != ""
	return c, true
}

// Get returns the checkpoint whose ID starts with id (at least 4
// characters); ErrNotFound when none does, an error when several do.
func (s *Store) Get(ctx context.Context, id string) (Checkpoint, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) < 4 || strings.Trim(id, "0123456789abcdef") != "" {
		return Checkpoint{}, fmt.Errorf("%w: %q is not a checkpoint's ID (at least 4 of its hex digits)", ErrNotFound, id)
	}
	cps, err := s.List(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	var found []Checkpoint
	for _, c := range cps {
		if strings.HasPrefix(c.ID, id) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return Checkpoint{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	case 1:
		return found[0], nil
	}
	return Checkpoint{}, fmt.Errorf("checkpoint: %s names %d checkpoints; give more of its digits", id, len(found))
}

// History returns the conversation a checkpoint keeps (Meta.History), or
// nil.
func (s *Store) History(ctx context.Context, c Checkpoint) ([]byte, error) {
	if c.history == "" {
		return nil, nil
	}
	out, err := s.runBytes(ctx, nil, "cat-file", "blob", c.history)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Undoable returns, of cps (as List returns them, the latest first), the
// checkpoints of turns not undone yet, the latest first: a restore undoes
// the checkpoint it restored and every later one; restoring a restore's
// checkpoint makes them undoable again.
func Undoable(cps []Checkpoint) []Checkpoint {
	var out []Checkpoint
	skipTo := ""
	for _, c := range cps {
		if skipTo != "" {
			if c.ID == skipTo {
				skipTo = ""
			}
			continue
		}
		switch c.Kind {
		case KindRestore:
			skipTo = c.Restored
		case KindTurn:
			out = append(out, c)
		}
	}
	return out
}

// Changes returns what restoring c would change in the workspace as it is
// now.
func (s *Store) Changes(ctx context.Context, c Checkpoint) ([]Change, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	now, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return s.diff(ctx, now, c.tree)
}

// diff lists what going from the tree from to the tree to changes.
func (s *Store) diff(ctx context.Context, from, to string) ([]Change, error) {
	out, err := s.run(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-status", from, to)
	if err != nil {
		return nil, err
	}
	var changes []Change
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		action := "restored"
		switch f[i] {
		case "A":
			action = "brought back"
		case "D":
			action = "removed"
		}
		changes = append(changes, Change{Action: action, Path: f[i+1]})
	}
	return changes, nil
}

// A Restored is what Restore did.
type Restored struct {
	// Saved is the checkpoint of the workspace as it was before: restore
	// it to undo the restore.
	Saved Checkpoint
	// Changes are the files the restore changed.
	Changes []Change
}

// Restore makes the workspace's files what checkpoint c holds, after
// saving them as they are (Restored.Saved, with m as its Meta): files
// changed since c are put back, files made since are removed; ignored
// files and everything outside the workspace are left alone.
func (s *Store) Restore(ctx context.Context, c Checkpoint, m Meta) (Restored, error) {
	unlock, err := s.lock()
	if err != nil {
		return Restored{}, err
	}
	defer unlock()
	if c.tree == "" {
		return Restored{}, fmt.Errorf("%w: %s", ErrNotFound, c.ID)
	}
	saved, err := s.save(ctx, message{Kind: KindRestore, Meta: m, Restored: c.ID})
	if err != nil {
		return Restored{}, fmt.Errorf("checkpoint: saving the workspace before restoring: %w", err)
	}
	changes, err := s.diff(ctx, saved.tree, c.tree)
	if err != nil {
		return Restored{}, err
	}
	// The index holds the workspace as saved: a one-tree read-tree with
	// -u makes the files what c holds, removes those c does not have, and
	// replaces a symbolic link on the way by the folder it should be, never
	// writing through it.
	if _, err := s.run(context.WithoutCancel(ctx), nil, "read-tree", "-u", "--reset", c.tree); err != nil {
		return Restored{Saved: saved}, fmt.Errorf("checkpoint: restoring %s (the workspace as it was is checkpoint %s): %w", c.Short(), saved.Short(), err)
	}
	return Restored{Saved: saved, Changes: changes}, nil
}

// lock holds the shadow repository for one operation, against this
// process's goroutines and other processes. A git lock file left by a git
// that was killed is stale while the lock is held, and is removed.
func (s *Store) lock() (func(), error) {
	s.mu.Lock()
	unlock, err := lock(s.dir)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if exclusive {
		os.Remove(filepath.Join(s.dir, "index.lock"))
	}
	return func() { unlock(); s.mu.Unlock() }, nil
}

// cut cuts s to at most n bytes, on a rune boundary, with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// trimNL trims the newline git ends its output with.
func trimNL(b []byte) string { return string(bytes.TrimRight(b, "\n")) }
