package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPathNamesTheCopyBesideTheBinary: a message names the document where
// this binary's package or archive put it, and docs/ of the source for a
// binary with no copy beside it.
func TestPathNamesTheCopyBesideTheBinary(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(p string) string {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deb := put("deb/usr/bin/agentmap")
	debDoc := put("deb/usr/share/doc/agentmap/" + TeamDatabase)
	// Homebrew links bin/agentmap into the keg, whose share/doc holds the
	// copy; the link's own prefix has none here.
	keg := put("brew/Cellar/agentmap/1.2.0/bin/agentmap")
	kegDoc := put("brew/Cellar/agentmap/1.2.0/share/doc/agentmap/" + TeamDatabase)
	os.MkdirAll(filepath.Join(root, "brew/bin"), 0o755)
	link := filepath.Join(root, "brew/bin/agentmap")
	if err := os.Symlink(keg, link); err != nil {
		t.Fatal(err)
	}
	archive := put("agentmap_1.2.0_linux_amd64/agentmap")
	archiveDoc := put("agentmap_1.2.0_linux_amd64/docs/" + TeamDatabase)
	built := put("go/bin/agentmap")

	old := executable
	defer func() { executable = old }()
	for _, tc := range []struct{ exe, want string }{
		{deb, debDoc},
		{link, kegDoc},
		{archive, archiveDoc},
		{built, "docs/" + TeamDatabase + " in agentmap's source"},
	} {
		executable = func() (string, error) { return filepath.EvalSymlinks(tc.exe) }
		if got := Path(TeamDatabase); got != tc.want {
			t.Errorf("binary %s: %q, want %q", tc.exe, got, tc.want)
		}
	}
	executable = func() (string, error) { return deb, nil }
	if got := Path("not-shipped.md"); got != "docs/not-shipped.md in agentmap's source" {
		t.Errorf("a document the package lacks: %q", got)
	}
}

// TestShippedDocumentsAreInEveryPackage: each document the messages name
// is installed by the .deb under /usr/share/doc/agentmap, put in the docs/
// folder of every release archive, and installed by the Homebrew formula
// into its doc folder, so that Path finds it beside a packaged binary.
func TestShippedDocumentsAreInEveryPackage(t *testing.T) {
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	nfpm := read("packaging/deb/nfpm.yaml")
	release := read("scripts/release.sh")
	formula := read("packaging/homebrew/agentmap.rb.tmpl")
	for _, name := range Shipped {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !regexp.MustCompile(`(?m)^  - src: docs/` + regexp.QuoteMeta(name) + `\n    dst: /usr/share/doc/agentmap/` + regexp.QuoteMeta(name) + `\n`).MatchString(nfpm) {
			t.Errorf("packaging/deb/nfpm.yaml does not install docs/%s as /usr/share/doc/agentmap/%s", name, name)
		}
		if !strings.Contains(release, "docs/"+name) {
			t.Errorf("scripts/release.sh does not put docs/%s in the archives", name)
		}
		if !regexp.MustCompile(`doc\.install [^\n]*"docs/` + regexp.QuoteMeta(name) + `"`).MatchString(formula) {
			t.Errorf("the Homebrew formula does not install docs/%s into its doc folder", name)
		}
	}
}

// TestMessagesNameDocumentsThroughPath: no string of the product's code
// names a file of docs/ itself ("see docs/team-database.md"), which a user
// of a package does not have: it goes through Path (or, for the grants,
// `agentmap sink grants`).
func TestMessagesNameDocumentsThroughPath(t *testing.T) {
	literal := regexp.MustCompile("(\"|`)[^\"`\n]*docs/[A-Za-z0-9_.-]+\\.(md|sql)")
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "dist", "e2e", "scripts":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if m := literal.FindString(line); m != "" {
				t.Errorf("%s:%d names a file of docs/ in a string: %s (use docs.Path)", p, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
