package redact

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
)

// Paths resolves the paths seen in one session into redacted targets. It is
// per session, remembers the cwds and repos it has seen (its carry-state is
// serialisable with MarshalState / RestorePaths), and never keeps an absolute
// path in any value it returns.
//
// How a path finds its repo:
//   - A cwd that exists on this machine is looked up on disk: the nearest
//     ancestor with a .git directory or .git file (worktree, submodule) is
//     the root. An existing cwd outside any repo has no repo.
//   - A cwd that does not exist here (logs recorded elsewhere) joins the
//     longest known root that holds it; otherwise it becomes a new root
//     itself, unless it is too general to be a project (a home directory,
//     ~/Documents, ~/.claude…, a top-level system directory), lies in
//     scratch space (anything under a temp root stays "/tmp (scratch)"),
//     or the log says it was in no repository (SetCWDNoRepo).
//   - A target path is looked up on disk too; failing that it joins the
//     longest known root that holds it; failing that it collapses to a
//     bucket label (see Bucket).
//   - A path that does not exist here (a deleted file, a removed directory)
//     is looked up from its nearest existing ancestor, unless that ancestor
//     is too general (a home directory, /, a temp root): a log from another
//     machine must not land in a repo that happens to enclose the local
//     home (a dotfiles repo).
//   - Relative paths resolve against the current cwd; ".." is resolved
//     lexically, so a path that climbs out of its repo lands wherever it
//     points (another repo, a bucket). A relative path with no cwd known is
//     outside-repo. "~" expands to the home of the current cwd when the cwd
//     is under a home directory.
//   - The repo root itself as a target has the path ".".
//
// The carry-state holds the current cwd and the known roots (normalised
// absolute paths). It stays in the local state database and
// never reaches a map.
type Paths struct {
	st      pathsState
	targets map[string]resolved
	// declared is the last DeclareRepo call, to make repeats free (it is
	// idempotent, so it needs no place in the carry-state).
	declared string
}

type pathsState struct {
	V       int         `json:"v"`
	RawCWD  string      `json:"raw,omitempty"` // the cwd as last passed: a repeat is a no-op
	CWD     string      `json:"cwd,omitempty"`
	CWDRoot int         `json:"cr"` // index into Roots, -1 outside repos
	Roots   []rootState `json:"roots,omitempty"`
}

type rootState struct {
	Path   string `json:"p"`
	Key    string `json:"k"`
	Name   string `json:"n"`
	Remote string `json:"r,omitempty"`
	OnDisk bool   `json:"d,omitempty"` // found on disk rather than inferred from cwds
	Told   bool   `json:"t,omitempty"` // returned by NewRepos
}

// resolved is a cached resolution of one absolute path.
type resolved struct {
	root  int
	rel   string
	label string
}

const (
	pathsStateVersion = 1
	targetCacheMax    = 8192
)

// NewPaths returns a resolver with no history.
func NewPaths() *Paths {
	return &Paths{st: pathsState{V: pathsStateVersion, CWDRoot: -1}}
}

// RestorePaths restores a resolver from MarshalState's output. Empty state
// gives a fresh resolver.
func RestorePaths(state []byte) (*Paths, error) {
	p := NewPaths()
	if len(state) == 0 {
		return p, nil
	}
	var st pathsState
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, fmt.Errorf("restore paths: state is not valid JSON (%d bytes)", len(state))
	}
	if st.V != pathsStateVersion {
		return nil, fmt.Errorf("restore paths: unknown state version %d", st.V)
	}
	if st.CWDRoot < -1 || st.CWDRoot >= len(st.Roots) {
		return nil, fmt.Errorf("restore paths: cwd root %d out of range", st.CWDRoot)
	}
	for i, r := range st.Roots {
		if r.Path == "" || r.Key != repoKey(r.Path) {
			return nil, fmt.Errorf("restore paths: root %d is inconsistent", i)
		}
	}
	p.st = st
	return p, nil
}

// MarshalState serialises the resolver's carry-state.
func (p *Paths) MarshalState() ([]byte, error) {
	return json.Marshal(p.st)
}

// SetCWD records the working directory of the current record. Relative paths
// passed to Target are resolved against it. An empty cwd is ignored; a
// relative one (a tool's workdir) resolves against the current cwd, and
// passing the same cwd again is a no-op.
func (p *Paths) SetCWD(cwd string) {
	p.setCWD(cwd, true)
}

// SetCWDNoRepo is SetCWD for a working directory the log says was in no
// repository (Copilot CLI's context without a gitRoot, OpenCode's root
// "/"). It differs only when the directory is gone from this machine and
// no known root holds it: the cwd stays outside repos instead of becoming
// a root named after its base name, so a vanished plain directory is not
// passed off as a project. A directory that exists here is looked up on
// disk as always. Repeating the cwd last passed to either is a no-op.
func (p *Paths) SetCWDNoRepo(cwd string) {
	p.setCWD(cwd, false)
}

func (p *Paths) setCWD(cwd string, infer bool) {
	if cwd == "" || cwd == p.st.RawCWD {
		return
	}
	abs := p.absolute(cwd)
	if abs == "" {
		return
	}
	p.st.RawCWD = cwd
	if abs == p.st.CWD {
		return
	}
	p.st.CWD = abs
	p.st.CWDRoot = p.cwdRoot(abs, infer)
}

// cwdRoot finds the root of a cwd, or creates one for a cwd that is gone
// when infer is set.
func (p *Paths) cwdRoot(abs string, infer bool) int {
	root, exists := repoOnDisk(abs)
	if root != "" {
		return p.addRoot(root, true)
	}
	if exists {
		return -1
	}
	if i := p.longestRoot(abs); i >= 0 {
		return i
	}
	// Scratch space is scratch even when the directory is gone: a vanished
	// /tmp/x is not taken for a project named x.
	if !infer || isBucketBase(abs) || isScratch(abs) {
		return -1
	}
	return p.addRoot(abs, false)
}

// Target resolves a path (absolute, or relative to the current cwd; POSIX or
// Windows form; file:// URIs) into a target with the given touch (hit, read,
// edit) and op.
func (p *Paths) Target(raw, touch, op string) event.Target {
	t := event.Target{Touch: touch, Op: op}
	r := p.resolve(raw)
	if r.root < 0 {
		t.Label = r.label
		return t
	}
	t.Repo = p.st.Roots[r.root].Key
	t.Path = r.rel
	return t
}

func (p *Paths) resolve(raw string) resolved {
	abs := p.absolute(raw)
	if abs == "" {
		return resolved{root: -1, label: LabelOutside}
	}
	if r, ok := p.targets[abs]; ok {
		return r
	}
	r := resolved{root: -1}
	if root, _ := repoOnDisk(abs); root != "" {
		r.root = p.addRoot(root, true)
	}
	if r.root < 0 {
		r.root = p.longestRoot(abs)
	}
	if r.root < 0 {
		r.label = Bucket(abs)
	} else {
		rel, _ := underDir(abs, p.st.Roots[r.root].Path)
		if rel == "" {
			rel = "."
		}
		r.rel = rel
	}
	if p.targets == nil || len(p.targets) >= targetCacheMax {
		p.targets = make(map[string]resolved)
	}
	p.targets[abs] = r
	return r
}

// absolute normalises a raw path from a log into an absolute path, or ""
// when it cannot be placed.
func (p *Paths) absolute(raw string) string {
	// Invalid UTF-8 would not survive the JSON carry-state unchanged.
	raw = stripFileURI(strings.ToValidUTF8(strings.TrimSpace(raw), "\uFFFD"))
	if raw == "" || strings.IndexByte(raw, 0) >= 0 {
		return ""
	}
	if raw == "~" || strings.HasPrefix(raw, "~/") || strings.HasPrefix(raw, `~\`) {
		home := p.home()
		if len(raw) == 1 {
			return home
		}
		return joinPath(home, raw[2:])
	}
	if abs := normAbs(raw, isWindowsForm(p.st.CWD)); abs != "" {
		return abs
	}
	if looksWindows(raw) {
		return "" // a bare drive or share ("C:", \\server) names no file
	}
	return joinPath(p.st.CWD, raw)
}

// home is the home directory of the current cwd, or a synthetic one that
// only serves to pick a bucket label.
func (p *Paths) home() string {
	if h, _, ok := splitHome(p.st.CWD); ok {
		return h
	}
	return "/home/~"
}

// longestRoot returns the index of the longest known root that holds abs.
func (p *Paths) longestRoot(abs string) int {
	best, bestLen := -1, -1
	for i, r := range p.st.Roots {
		if _, ok := underDir(abs, r.Path); ok && len(r.Path) > bestLen {
			best, bestLen = i, len(r.Path)
		}
	}
	return best
}

// addRoot returns the index of root, registering it on first sight.
func (p *Paths) addRoot(root string, onDisk bool) int {
	key := repoKey(root)
	for i, r := range p.st.Roots {
		if r.Key == key {
			return i
		}
	}
	rs := rootState{Path: root, Key: key, Name: baseName(root), OnDisk: onDisk}
	if onDisk {
		rs.Name, rs.Remote = factsOf(root)
	}
	if rs.Name == "" {
		rs.Name = "repo" // a repo at a file-system root has no base name
	}
	p.st.Roots = append(p.st.Roots, rs)
	// A new root can be a longer prefix than the one a cached path used.
	p.targets = nil
	return len(p.st.Roots) - 1
}

// NewRepos returns the repos first seen since the previous call, so that the
// parser can emit a KindRepo event for each before the events that use them.
// A repo is registered the first time a cwd or a target uses it, so each
// comes back exactly once.
func (p *Paths) NewRepos() []event.Repo {
	var out []event.Repo
	for i := range p.st.Roots {
		r := &p.st.Roots[i]
		if r.Told {
			continue
		}
		r.Told = true
		out = append(out, event.Repo{Key: r.Key, Name: r.Name, Remote: r.Remote})
	}
	return out
}

// CWDRepo returns the key of the repo of the current cwd, or "" outside repos.
func (p *Paths) CWDRepo() string {
	if p.st.CWDRoot < 0 {
		return ""
	}
	return p.st.Roots[p.st.CWDRoot].Key
}

// DeclareRepo records what a log says about the repository of a working
// directory: that it was one (Claude's gitBranch), and where its origin is
// (Codex's session_meta.git.repository_url, "" when unknown). It matters
// only when the directory is gone from this machine (a deleted worktree,
// logs copied from elsewhere): the directory becomes the root of its
// paths, named after the remote's repository when the log gives one, with
// the owner/name remote; even in scratch space, since the log says it was a
// repository. A directory that exists here is looked up on disk as always.
// Call it before SetCWD for the same directory. Nothing absolute is kept
// beyond the carry-state: the root's key is a hash, its name a base name.
func (p *Paths) DeclareRepo(cwd, remoteURL string) {
	if key := cwd + "\x00" + remoteURL; key == p.declared {
		return
	} else {
		p.declared = key
	}
	abs := p.absolute(cwd)
	if abs == "" || parentDir(abs) == "" {
		return // no directory, or a file-system root
	}
	if _, exists := lookupFS(abs); exists {
		return // the disk knows better
	}
	if root, _ := repoOnDisk(abs); root != "" {
		return // it lies in a repository that is still here
	}
	remote := NormalizeRemote(remoteURL)
	if remote == "" && isBucketBase(abs) {
		// A home directory (or ~/Documents…) a log calls a repository,
		// gone from this disk: named after its directory, the repository
		// would carry the login name into the map. Without a remote to
		// name it, it stays the bucket its paths fall in.
		return
	}
	i := p.addRoot(abs, false)
	r := &p.st.Roots[i]
	if r.OnDisk {
		return
	}
	if remote != "" && r.Remote != remote {
		r.Remote = remote
		if n := baseName(remote); n != "" {
			r.Name = n
		}
		r.Told = false // declare it again with its name and remote
	}
	if p.st.CWD == abs {
		p.st.CWDRoot = i // SetCWD ran first: the cwd now has its root
	}
}
