package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeclareRepo: a directory the log says was a repository roots its
// paths when it is gone, even in scratch space, named after its remote;
// a directory that exists is looked up on disk as always.
func TestDeclareRepo(t *testing.T) {
	p := NewPaths()
	p.DeclareRepo("/tmp/agentmap-gone-worktree-1/app", "https://user:secret@github.com/acme/shop.git")
	p.SetCWD("/tmp/agentmap-gone-worktree-1/app")
	tg := p.Target("src/a.go", "read", "")
	repos := p.NewRepos()
	if tg.Repo == "" || tg.Path != "src/a.go" || len(repos) != 1 || repos[0].Name != "shop" || repos[0].Remote != "acme/shop" {
		t.Fatalf("target %+v, repos %+v", tg, repos)
	}
	st, _ := p.MarshalState()
	for _, leak := range []string{"secret", "user:"} {
		if strings.Contains(string(st), leak) {
			t.Errorf("carry-state keeps %q", leak)
		}
	}

	// Without the declaration the same scratch path is a bucket.
	q := NewPaths()
	q.SetCWD("/tmp/agentmap-gone-worktree-1/app")
	if tg := q.Target("src/a.go", "read", ""); tg.Repo != "" || tg.Label == "" {
		t.Errorf("undeclared scratch target %+v", tg)
	}

	// An existing directory outside any repo stays outside, whatever the log says.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "plain"), 0o700)
	r := NewPaths()
	r.DeclareRepo(filepath.Join(dir, "plain"), "git@github.com:acme/other.git")
	r.SetCWD(filepath.Join(dir, "plain"))
	if tg := r.Target("x.go", "read", ""); tg.Repo != "" {
		t.Errorf("an existing non-repo directory became a repo: %+v", tg)
	}
}

// A home directory a log calls a repository, gone from this disk, is not
// named after itself (the login name) without a remote: its paths stay in
// the home bucket. With a remote, the remote names it.
func TestDeclareRepoOfAGoneHome(t *testing.T) {
	p := NewPaths()
	p.DeclareRepo("/home/agentmap-gone-alice", "")
	p.SetCWDNoRepo("/home/agentmap-gone-alice/notes")
	tg := p.Target("/home/agentmap-gone-alice/README.md", "read", "")
	for _, r := range p.NewRepos() {
		if strings.Contains(r.Name, "alice") {
			t.Errorf("a gone home directory named a repository %q", r.Name)
		}
	}
	if tg.Repo != "" || tg.Label == "" {
		t.Errorf("a file of a gone home directory: %+v, want its bucket", tg)
	}
	q := NewPaths()
	q.DeclareRepo("/home/agentmap-gone-alice", "git@github.com:alice/dotfiles.git")
	q.SetCWD("/home/agentmap-gone-alice")
	if tg := q.Target("README.md", "read", ""); tg.Repo == "" || tg.Path != "README.md" {
		t.Errorf("a gone home directory with a remote: %+v, want its repository's", tg)
	}
	if repos := q.NewRepos(); len(repos) != 1 || repos[0].Name != "dotfiles" {
		t.Errorf("repos %+v, want dotfiles", repos)
	}
}
