package copilot

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/agentmap/agentmap/builder"
)

// goneHome is a home directory that no machine running the tests has: the
// logs below were written there, and it is gone.
const goneHome = "/home/agentmap-gone-8d1f"

// goneLog returns the recorded log of a session in the repository acme/demo
// as if it had been written in goneHome: the repository at
// goneHome/work/proj, the session started in its src directory. edit
// changes each line further.
func goneLog(t *testing.T, edit func([]byte) []byte) (string, [][]byte) {
	t.Helper()
	if _, err := os.Stat(goneHome); err == nil {
		t.Skipf("%s exists on this machine", goneHome)
	}
	path := filepath.Join("testdata", "1.0.102", "2bfc00c1-a71e-4603-89e1-5ea6aba82599", "events.jsonl")
	const home = "/var/tmp/agentmap-e2e-459867909/home"
	root, moved := []byte(home+"/src/copilot-demo"), []byte(goneHome+"/work/proj")
	var out [][]byte
	for _, l := range lines(t, path) {
		l = bytes.ReplaceAll(l, []byte(`"cwd":"`+string(root)+`"`), []byte(`"cwd":"`+string(root)+`/src"`))
		l = bytes.ReplaceAll(l, root, moved)
		l = bytes.ReplaceAll(l, []byte(home), []byte(goneHome))
		if edit != nil {
			l = edit(l)
		}
		out = append(out, l)
	}
	return path, out
}

// repoFiles lists a map's repos as name=remote and its files as
// repo-name:path.
func repoFiles(t *testing.T, path string, ls [][]byte) (repos, files []string) {
	t.Helper()
	evs, _ := parse(t, path, ls, true)
	m, err := builder.Build(evs, builder.Options{})
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

// TestGoneRepoKeepsRecordedRoot: session.start records the repository's
// root (context.gitRoot) and owner/name (context.repository); with the
// directory gone they still give the map its repo, named and with its
// remote as Codex's declared repos are, and every file's repo-relative
// path, not paths relative to the cwd taken for a repository.
func TestGoneRepoKeepsRecordedRoot(t *testing.T) {
	path, ls := goneLog(t, nil)
	repos, files := repoFiles(t, path, ls)
	if want := []string{"demo=acme/demo"}; !slices.Equal(repos, want) {
		t.Errorf("repos %q, want %q", repos, want)
	}
	want := []string{"demo:README.md", "demo:lib/part01.txt", "demo:notes.txt", "demo:src/app.js"}
	if !slices.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
}

// TestGoneRepoWithoutRemote: a root with no repository (no remote on
// GitHub) is named after the root's directory.
func TestGoneRepoWithoutRemote(t *testing.T) {
	noRemote := regexp.MustCompile(`"repository":"[^"]*",`)
	path, ls := goneLog(t, func(l []byte) []byte { return noRemote.ReplaceAll(l, nil) })
	repos, files := repoFiles(t, path, ls)
	if want := []string{"proj="}; !slices.Equal(repos, want) {
		t.Errorf("repos %q, want %q", repos, want)
	}
	if len(files) != 4 || files[0] != "proj:README.md" {
		t.Errorf("files %q, want proj:README.md and three more", files)
	}
}

// TestGoneDirNotRepo: a context without gitRoot, branch or repository (as
// Copilot writes it outside git) says the cwd was in no repository, so a
// cwd that is gone is not made one after its base name.
func TestGoneDirNotRepo(t *testing.T) {
	noGit := regexp.MustCompile(`,"(gitRoot|branch|repository|repositoryHost|headCommit)":"[^"]*"`)
	path, ls := goneLog(t, func(l []byte) []byte {
		l = noGit.ReplaceAll(l, nil)
		return bytes.ReplaceAll(l, []byte(goneHome+"/work/proj"), []byte("/zqcanary9"))
	})
	repos, files := repoFiles(t, path, ls)
	if len(repos) != 0 || len(files) != 0 {
		t.Errorf("repos %q, files %q; want none (the files are outside repos)", repos, files)
	}
}
