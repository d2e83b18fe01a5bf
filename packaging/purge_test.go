package packaging

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/state/datadir"
)

// A purge removes agentmap's entries only: the dry run and the purge name
// what stays, the user's files and the config file in use, and the
// directory stays with them.
func TestPurgeKeepsWhatIsNotAgentmaps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work")
	if err := datadir.Claim(dir); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	for _, name := range []string{"state.db", "maps/a.json.gz", "thesis.tex", "photos/1.jpg", "config.toml"} {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := &Plan{Steps: []Step{{Op: Purge, Path: dir, Keep: cfg}}}
	var out bytes.Buffer
	p.Print(&out)
	want := "would keep in " + dir + ": config.toml, photos/, thesis.tex (not agentmap's; config.toml is your config file); the directory stays"
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "would remove from "+dir+": maps/, state.db, "+datadir.Marker) {
		t.Errorf("dry run:\n%s", out.String())
	}
	out.Reset()
	if err := p.Apply(context.Background(), nil, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kept in "+dir+": config.toml, photos/, thesis.tex") {
		t.Errorf("purge:\n%s", out.String())
	}
	for _, name := range []string{"thesis.tex", "photos/1.jpg", "config.toml"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"state.db", "maps"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s stays", name)
		}
	}
}

// A data directory reached through a symbolic link is purged where it
// is, and the output says so.
func TestPurgeFollowsALink(t *testing.T) {
	base := t.TempDir()
	real, link := filepath.Join(base, "realdata"), filepath.Join(base, "linkdata")
	os.Mkdir(real, 0o700)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := datadir.Claim(link); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(real, "state.db"), []byte("x"), 0o600)
	p := &Plan{Steps: []Step{{Op: Purge, Path: link}}}
	var out bytes.Buffer
	if err := p.Apply(context.Background(), nil, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(real); err == nil {
		t.Error("the data stays where the link led")
	}
	if !strings.Contains(out.String(), "removed "+real+"\n") || !strings.Contains(out.String(), "removed the symbolic link "+link) {
		t.Errorf("purge:\n%s", out.String())
	}
}
