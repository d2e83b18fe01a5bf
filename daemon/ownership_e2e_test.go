package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/watchers"
)

// runBin runs the binary in a temporary HOME and returns its output and
// exit code.
func runBin(t *testing.T, bin, home string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = testEnv(home)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// Files planted in a data directory are refused before anything is read
// or written, with the path named; nothing lands where they lead.
func TestPlantedDataDirRefused(t *testing.T) {
	sr := newScanRig(t, 1)
	elsewhere := t.TempDir()
	for name, plant := range map[string]func(data string) string{
		"maps is a symlink": func(data string) string {
			os.Symlink(elsewhere, filepath.Join(data, "maps"))
			return filepath.Join(data, "maps")
		},
		"hash.key of someone else": func(data string) string {
			p := filepath.Join(data, "hash.key")
			os.WriteFile(p, make([]byte, 32), 0o600)
			if os.Geteuid() != 0 || os.Chown(p, 4242, 4242) != nil {
				os.Chmod(p, 0o644) // without root: readable by others instead
			}
			return p
		},
		"data dir writable by all": func(data string) string {
			os.Chmod(data, 0o777)
			return data
		},
	} {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			os.MkdirAll(data, 0o700)
			path := plant(data)
			out, code := runBin(t, sr.bin, sr.home, "scan", "--data-dir", data, "--path-mode", "hashed")
			if code != 1 || !strings.Contains(out, path) {
				t.Fatalf("exit %d, want 1 with a message naming %s:\n%s", code, path, out)
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
				t.Fatalf("wrote through the planted link: %v", entries)
			}
			if _, err := os.Stat(StatePath(data)); err == nil {
				t.Fatal("state.db created in a refused data dir")
			}
		})
	}
}

// With --data-dir X and hashed paths the key is X's, not the default data
// directory's; temporary files of interrupted map writes are removed at
// start; and the data directory carries agentmap's marker.
func TestDataDirInEffect(t *testing.T) {
	sr := newScanRig(t, 1)
	data := filepath.Join(t.TempDir(), "x")
	orphan := filepath.Join(MapsDir(data), "claude", "2026", "01", ".s.json.gz.tmp-12345")
	os.MkdirAll(filepath.Dir(orphan), 0o700)
	os.WriteFile(orphan, []byte("half a map"), 0o600)
	if out, code := runBin(t, sr.bin, sr.home, "scan", "--data-dir", data, "--path-mode", "hashed"); code != 0 {
		t.Fatalf("scan: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "hash.key")); err != nil {
		t.Errorf("no key in the data dir in effect: %v", err)
	}
	def := DefaultDataDir(watchers.Env{GOOS: runtime.GOOS, Home: sr.home})
	if _, err := os.Stat(filepath.Join(def, "hash.key")); err == nil {
		t.Errorf("a key was created in the default data dir %s", def)
	}
	if _, err := os.Stat(orphan); err == nil {
		t.Error("the temporary file of an interrupted write is still there")
	}
	if _, err := os.Stat(filepath.Join(data, ".agentmap-data-dir")); err != nil {
		t.Errorf("no marker: %v", err)
	}
}

// uninstall --purge never removes the home directory: a config naming it
// (or /) as data_dir is refused, and so is a directory agentmap did not
// make.
func TestPurgeTakesOnlyOurs(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "precious"), []byte("x"), 0o600)
	cfg := filepath.Join(home, ".config", "agentmap", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	for _, dir := range []string{"~", "/", "~/.config"} {
		os.WriteFile(cfg, []byte("version = 1\ndata_dir = \""+dir+"\"\n"), 0o600)
		out, code := runBin(t, bin, home, "uninstall", "--purge", "--config", cfg)
		if code == 0 || !strings.Contains(out, "data_dir") {
			t.Errorf("data_dir = %q: exit %d\n%s", dir, code, out)
		}
		if _, err := os.Stat(filepath.Join(home, "precious")); err != nil {
			t.Fatalf("data_dir = %q: the home directory lost a file", dir)
		}
	}
	mine := filepath.Join(home, "papers")
	os.MkdirAll(mine, 0o700)
	os.WriteFile(filepath.Join(mine, "thesis.tex"), []byte("x"), 0o600)
	os.WriteFile(cfg, []byte("version = 1\ndata_dir = \"~/papers\"\n"), 0o600)
	out, code := runBin(t, bin, home, "uninstall", "--purge", "--config", cfg)
	if code == 0 || !strings.Contains(out, "did not make it") {
		t.Errorf("a directory agentmap did not make: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(mine, "thesis.tex")); err != nil {
		t.Fatal("purge removed a directory agentmap did not make")
	}
}
