package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A data directory named by --data-dir gets the check a config's data_dir
// gets: never the home directory or the config's, and nothing is written
// there.
func TestUnsafeDataDirRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("AGENTMAP_CONFIG", "")
	cfgDir := filepath.Join(home, ".config", "agentmap")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{home, cfgDir} {
		if err := SafeDataDir(dir); err == nil {
			t.Errorf("%s accepted", dir)
		}
		d := New(Options{DataDir: dir, Once: true})
		if err := d.Run(context.Background()); err == nil {
			t.Errorf("a daemon ran on %s", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "state.db")); err == nil {
			t.Errorf("state.db written in %s", dir)
		}
	}
	if err := SafeDataDir(filepath.Join(home, ".local", "share", "agentmap")); err != nil {
		t.Error(err)
	}
}
