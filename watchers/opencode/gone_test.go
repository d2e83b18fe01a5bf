package opencode

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/watchers/opencode/storagetest"
)

// goneHome is a home directory that no machine running the tests has: the
// store below was written there, and it is gone.
const goneHome = "/home/agentmap-gone-8d1f"

// goneStore lays the recorded e2e store out as JSON storage as if it had
// been written in goneHome: the repository at goneHome/work/proj, the
// sessions in its src directory, and each message's path.root set to root
// (the repository, or "/" as OpenCode records outside git). It returns the
// root session's file.
func goneStore(t *testing.T, root string) string {
	t.Helper()
	if _, err := os.Stat(goneHome); err == nil {
		t.Skipf("%s exists on this machine", goneHome)
	}
	const home = "/var/tmp/agentmap-e2e-223376629/home"
	const demo = home + "/src/opencode-demo"
	proj := goneHome + "/work/proj"
	writes, err := storagetest.Writes(context.Background(), filepath.Join("testdata", "opencode-1.18.33-e2e.db"))
	if err != nil {
		t.Fatal(err)
	}
	dir, file := t.TempDir(), ""
	for _, w := range writes {
		b := w.Data
		for _, k := range []string{"directory", "cwd"} {
			b = bytes.ReplaceAll(b, []byte(`"`+k+`": "`+demo+`"`), []byte(`"`+k+`": "`+proj+`/src"`))
		}
		b = bytes.ReplaceAll(b, []byte(`"root": "`+demo+`"`), []byte(`"root": "`+root+`"`))
		b = bytes.ReplaceAll(b, []byte(demo), []byte(proj))
		b = bytes.ReplaceAll(b, []byte(home), []byte(goneHome))
		p := filepath.Join(dir, filepath.FromSlash(w.Path))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if w.Session == "ses_dcd797847ffeET5eTQ4jgU7ru6" {
			file = p
		}
	}
	if file == "" {
		t.Fatal("no root session file")
	}
	return file
}

// repoFiles lists the map of the store's root session: its repos as
// name=remote and its files as repo-name:path.
func repoFiles(t *testing.T, file string) (repos, files []string) {
	t.Helper()
	convs, err := ReadStore(context.Background(), file)
	if err != nil || len(convs) != 1 {
		t.Fatalf("%d conversations, %v", len(convs), err)
	}
	m, err := builder.Build(convs[0].Events, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, r := range m.Repos {
		names[r.ID] = r.Name
		repos = append(repos, r.Name+"="+r.Remote)
	}
	for _, f := range m.Files {
		files = append(files, names[f.Repo]+":"+f.Path)
	}
	slices.Sort(files)
	return repos, files
}

// TestGoneRepoKeepsRecordedRoot: the messages' path.root (the project's
// worktree) gives the map its repo when the directory is gone, named after
// the root (OpenCode records no remote), and every file its repo-relative
// path, rather than the session's directory being taken for the repo and
// the rest of the repository falling outside it.
func TestGoneRepoKeepsRecordedRoot(t *testing.T) {
	repos, files := repoFiles(t, goneStore(t, goneHome+"/work/proj"))
	if want := []string{"proj="}; !slices.Equal(repos, want) {
		t.Errorf("repos %q, want %q", repos, want)
	}
	want := []string{"proj:README.md", "proj:lib/part01.txt", "proj:notes.txt", "proj:src/app.js"}
	if !slices.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
}

// TestGoneDirNotRepo: root "/" is OpenCode's project for a directory
// outside git, so a session directory that is gone is not made a
// repository after its base name.
func TestGoneDirNotRepo(t *testing.T) {
	repos, files := repoFiles(t, goneStore(t, "/"))
	if len(repos) != 0 || len(files) != 0 {
		t.Errorf("repos %q, files %q; want none (the files are outside repos)", repos, files)
	}
}
