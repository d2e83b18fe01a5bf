//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/state/datadir"
)

func purgeHome(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("AGENTMAP_CONFIG", "")
	return home
}

// The config file in use, in the data directory it names, stays through
// uninstall --purge, and the output says why.
func TestPurgeKeepsTheConfigFileInUse(t *testing.T) {
	home := purgeHome(t)
	data := filepath.Join(home, "data")
	if err := datadir.Claim(data); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(data, "config.toml")
	if err := os.WriteFile(conf, []byte("data_dir = \""+data+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "state.db"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"uninstall", "--purge", "--config", conf}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(conf); err != nil {
		t.Fatalf("the config file was removed: %s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "config.toml is your config file") {
		t.Errorf("stdout %q", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(data, "state.db")); err == nil {
		t.Error("state.db stays")
	}
}

// --data-dir gets the check data_dir gets: never the home directory.
func TestDataDirFlagRefusesHome(t *testing.T) {
	home := purgeHome(t)
	for _, args := range [][]string{{"status", "--data-dir", home}, {"export", "--format", "jsonl", "--data-dir", home, "--out", filepath.Join(t.TempDir(), "x")}} {
		var stdout, stderr bytes.Buffer
		code := dispatch(context.Background(), args, &stdout, &stderr)
		if code == exitOK || !strings.Contains(stderr.String(), "cannot be the data directory") {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, stderr.String())
		}
	}
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		if e.Name() != ".config" && e.Name() != ".local" {
			t.Errorf("%s written in the home directory", e.Name())
		}
	}
}
