package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnsafe(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "agentmap", "config.toml")
	for dir, unsafe := range map[string]bool{
		"/":                            true,
		home:                           true,
		filepath.Dir(home):             true,
		home + "/":                     true,
		filepath.Join(home, ".config"): true,
		filepath.Join(home, ".config", "agentmap"):         true,
		filepath.Join(home, "x", ".."):                     true,
		filepath.Join(home, ".local", "share", "agentmap"): false,
		filepath.Join(home, ".config", "agentmap", "data"): false,
	} {
		if got := Unsafe(dir, home, cfg) != ""; got != unsafe {
			t.Errorf("Unsafe(%s) = %v, want %v", dir, got, unsafe)
		}
	}
	// A symbolic link to the home directory is the home directory.
	link := filepath.Join(t.TempDir(), "h")
	os.Symlink(home, link)
	if Unsafe(link, home, "") == "" {
		t.Error("a link to home is accepted")
	}
}

func TestClaimAndPurgeable(t *testing.T) {
	home := t.TempDir()
	fresh := filepath.Join(home, "data")
	if err := Claim(fresh); err != nil {
		t.Fatal(err)
	}
	if err := Purgeable(fresh, home, ""); err != nil {
		t.Fatalf("a directory agentmap made: %v", err)
	}
	// One made before markers, holding only agentmap's entries, is
	// adopted; one holding anything else is used but never purged.
	old := filepath.Join(home, "old")
	os.MkdirAll(filepath.Join(old, "maps"), 0o700)
	os.WriteFile(filepath.Join(old, "state.db"), nil, 0o600)
	os.WriteFile(filepath.Join(old, "state.db.corrupt-20260101T000000Z"), nil, 0o600)
	Claim(old)
	if err := Purgeable(old, home, ""); err != nil {
		t.Fatalf("an old store: %v", err)
	}
	mixed := filepath.Join(home, "mixed")
	os.MkdirAll(mixed, 0o700)
	os.WriteFile(filepath.Join(mixed, "thesis.tex"), nil, 0o600)
	Claim(mixed)
	if err := Purgeable(mixed, home, ""); err == nil || !strings.Contains(err.Error(), "did not make it") {
		t.Fatalf("a directory with other files: %v", err)
	}
	// Even with a marker, home is never removed.
	os.WriteFile(filepath.Join(home, Marker), nil, 0o600)
	if err := Purgeable(home, home, ""); err == nil {
		t.Fatal("home is purgeable")
	}
}

func TestCheck(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Log("as root, ownership by another user is tested with chown")
	}
	dir := filepath.Join(t.TempDir(), "data")
	Claim(dir)
	if err := Check(dir); err != nil {
		t.Fatalf("a fresh directory: %v", err)
	}
	other := t.TempDir()
	for name, plant := range map[string]func() string{
		"maps symlink": func() string {
			os.Symlink(other, filepath.Join(dir, "maps"))
			return filepath.Join(dir, "maps")
		},
		"state.db symlink": func() string {
			os.WriteFile(filepath.Join(other, "s"), nil, 0o600)
			os.Symlink(filepath.Join(other, "s"), filepath.Join(dir, "state.db"))
			return filepath.Join(dir, "state.db")
		},
		"hash.key readable": func() string {
			os.WriteFile(filepath.Join(dir, "hash.key"), make([]byte, 32), 0o644)
			os.Chmod(filepath.Join(dir, "hash.key"), 0o644)
			return filepath.Join(dir, "hash.key")
		},
		"dir writable by others": func() string {
			os.Chmod(dir, 0o777)
			return dir
		},
		"state.db of another user": func() string {
			p := filepath.Join(dir, "state.db")
			os.WriteFile(p, nil, 0o600)
			if os.Geteuid() == 0 {
				os.Chown(p, 4242, 4242)
			} else {
				return ""
			}
			return p
		},
	} {
		t.Run(name, func(t *testing.T) {
			os.RemoveAll(dir)
			Claim(dir)
			path := plant()
			if path == "" {
				t.Skip("changing a file's owner needs root")
			}
			err := Check(dir)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("Check = %v, want an error naming %s", err, path)
			}
		})
	}
}
