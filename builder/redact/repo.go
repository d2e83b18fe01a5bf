package redact

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"
)

// repoKey is the opaque id of a repo: the first 12 hex chars of the SHA-256
// of its normalised root path. The root itself never leaves the resolver.
func repoKey(root string) string {
	sum := sha256.Sum256([]byte(keyForm(root)))
	return hex.EncodeToString(sum[:6])
}

// fsEntry is what the file system said about one path.
type fsEntry struct {
	exists bool
	root   string // enclosing repo root, "" outside repos
	at     time.Time
}

// repoFacts are the name and remote of a repo found on disk.
type repoFacts struct {
	name, remote string
	at           time.Time
}

// fsCache is a small process-wide cache of file-system answers so that a
// hot parser does not stat the same directories on every line. Entries
// expire so that a long-running daemon sees repos created later.
type fsCache struct {
	mu    sync.Mutex
	paths map[string]fsEntry
	repos map[string]repoFacts
}

const (
	fsCacheMax = 4096
	fsCacheTTL = time.Minute
)

var fsc = &fsCache{paths: map[string]fsEntry{}, repos: map[string]repoFacts{}}

func (c *fsCache) get(p string) (fsEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.paths[p]
	if ok && time.Since(e.at) > fsCacheTTL {
		delete(c.paths, p)
		return fsEntry{}, false
	}
	return e, ok
}

func (c *fsCache) put(p string, e fsEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.paths) >= fsCacheMax {
		clear(c.paths)
	}
	c.paths[p] = e
}

// lookupFS says whether p exists on this machine and, if so, the root of the
// git repo that holds it ("" when none). It walks up to a .git directory or
// .git file.
func lookupFS(p string) (root string, exists bool) {
	if !localForm(p) {
		return "", false
	}
	if e, ok := fsc.get(p); ok {
		return e.root, e.exists
	}
	now := time.Now()
	if _, err := os.Stat(p); err != nil {
		fsc.put(p, fsEntry{at: now})
		return "", false
	}
	var walked []string
	for d := p; d != ""; d = parentDir(d) {
		if e, ok := fsc.get(d); ok && e.exists && d != p {
			root = e.root
			break
		}
		walked = append(walked, d)
		if gitDirOf(d) != "" {
			root = d
			break
		}
	}
	for _, d := range walked {
		fsc.put(d, fsEntry{exists: true, root: root, at: now})
	}
	return root, true
}

// repoOnDisk returns the root of the repo that holds abs on this machine
// ("" when none) and whether abs exists here. A missing path is looked up
// from its nearest existing ancestor, unless that ancestor is too general
// to say anything (see isBucketBase).
func repoOnDisk(abs string) (root string, exists bool) {
	if root, exists = lookupFS(abs); exists {
		return root, true
	}
	if !localForm(abs) {
		return "", false
	}
	for d := parentDir(abs); d != ""; d = parentDir(d) {
		r, ok := lookupFS(d)
		if !ok {
			continue
		}
		if isBucketBase(d) {
			return "", false
		}
		return r, false
	}
	return "", false
}

// gitDirOf returns the git directory of a repo rooted at d: d/.git when it
// is a directory, or the target of the "gitdir:" line when .git is a file
// (worktrees, submodules). It returns "" when d is not a repo root.
func gitDirOf(d string) string {
	dotgit := path.Join(d, ".git")
	fi, err := os.Stat(dotgit)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		return dotgit
	}
	if !fi.Mode().IsRegular() {
		return ""
	}
	line := firstLine(dotgit, 4096)
	target, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return ""
	}
	target = strings.TrimSpace(target)
	if target == "" {
		return ""
	}
	if abs := normAbs(target, false); abs != "" {
		return abs
	}
	return path.Join(d, target)
}

func firstLine(name string, limit int64) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, limit))
	line, _ := r.ReadString('\n')
	return strings.TrimRight(line, "\r\n")
}

// factsOf returns the name and remote of a repo found on disk at root. For
// a linked worktree (its git dir has a commondir) the name is the base name
// of the main checkout, so that worktrees of one project (Claude Code puts
// them under .claude/worktrees/<branch>) keep the project's name.
func factsOf(root string) (name, remote string) {
	fsc.mu.Lock()
	f, ok := fsc.repos[root]
	fsc.mu.Unlock()
	if ok && time.Since(f.at) <= fsCacheTTL {
		return f.name, f.remote
	}
	name = baseName(root)
	common := gitDirOf(root)
	if common != "" {
		if c := firstLine(path.Join(common, "commondir"), 4096); c != "" {
			c = strings.TrimSpace(c)
			if !strings.HasPrefix(c, "/") && !isDrivePath(c) {
				c = path.Join(common, c)
			}
			common = path.Clean(strings.ReplaceAll(c, `\`, "/"))
			if baseName(common) == ".git" {
				if n := baseName(parentDir(common)); n != "" {
					name = n
				}
			}
		}
		remote = NormalizeRemote(originURL(path.Join(common, "config")))
	}
	fsc.mu.Lock()
	if len(fsc.repos) >= fsCacheMax {
		clear(fsc.repos)
	}
	fsc.repos[root] = repoFacts{name: name, remote: remote, at: time.Now()}
	fsc.mu.Unlock()
	return name, remote
}

// originURL reads the url of [remote "origin"] from a git config file.
func originURL(config string) string {
	f, err := os.Open(config)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			sec := strings.Join(strings.Fields(strings.Trim(line, "[]")), " ")
			in = strings.EqualFold(sec, `remote "origin"`)
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "url") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// NormalizeRemote reduces a git remote URL to "owner/name": no scheme, no
// host, no credentials, no trailing .git. ssh (git@host:o/n.git,
// ssh://git@host:22/o/n), https (with or without user:token@) and git://
// forms are understood; for deeper paths (GitLab subgroups) the last two
// segments are kept, and Azure DevOps' "_git" and "v3" markers are dropped.
// Local paths and anything unrecognised give "".
func NormalizeRemote(u string) string {
	u = strings.TrimSpace(u)
	var p string
	if _, rest, ok := strings.Cut(u, "://"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			p = rest[i+1:]
		}
		if strings.HasPrefix(strings.ToLower(u), "file:") {
			return ""
		}
	} else {
		host, rest, ok := strings.Cut(u, ":")
		if !ok || host == "" || strings.ContainsAny(host, `/\`) || len(host) == 1 {
			return "" // a local path or a Windows drive
		}
		p = rest
	}
	p = strings.Trim(p, "/")
	p = strings.TrimSuffix(p, ".git")
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "_git" || s == "v3" || strings.HasPrefix(s, "~") {
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) < 2 {
		return ""
	}
	owner, name := segs[len(segs)-2], segs[len(segs)-1]
	if !isPlainName(owner) || !isPlainName(name) {
		return ""
	}
	return owner + "/" + name
}
