package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --config given beside --data-dir is read all the same: one that is
// not there is an error, as without --data-dir (a mistyped name passed in
// silence), and one with problems a warning before the command's output.
func TestConfigBesideDataDirIsRead(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o700)
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[flush]\nidle = \"bogus\"\n"), 0o600)
	// A data_dir of its own that is a problem (relative) is a warning
	// too: --data-dir decides where to read.
	relDir := filepath.Join(dir, "rel.toml")
	os.WriteFile(relDir, []byte("data_dir = \"rel\"\n"), 0o600)
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte("[flush]\nidle = \"10m\"\n"), 0o600)
	for _, cmd := range []string{"list", "usage", "status"} {
		code, _, stderr := run(t, cmd, "--config", filepath.Join(dir, "missing.toml"), "--data-dir", data)
		if code != exitFailure || !strings.Contains(stderr, "no config file at "+filepath.Join(dir, "missing.toml")) {
			t.Errorf("%s with a missing --config: exit %d, %q", cmd, code, stderr)
		}
		code, _, stderr = run(t, cmd, "--config", bad, "--data-dir", data)
		if code != exitOK || !strings.Contains(stderr, "bad.toml:2: flush.idle") || !strings.Contains(stderr, "warning: "+bad+" has 1 problem(s)") {
			t.Errorf("%s with a --config with problems: exit %d, %q", cmd, code, stderr)
		}
		code, _, stderr = run(t, cmd, "--config", relDir, "--data-dir", data)
		if code != exitOK || !strings.Contains(stderr, "warning: "+relDir+" has 1 problem(s)") {
			t.Errorf("%s with a --config whose data_dir is a problem: exit %d, %q", cmd, code, stderr)
		}
		code, _, stderr = run(t, cmd, "--config", good, "--data-dir", data)
		if code != exitOK || strings.Contains(stderr, "config") {
			t.Errorf("%s with a good --config: exit %d, %q", cmd, code, stderr)
		}
	}
}

// flush with no daemon running catches up in this process, which loads the
// config and fails on its problems: they are said once, as that error,
// not first as the warning of the data directory read despite them.
func TestFlushSaysTheConfigsProblemsOnce(t *testing.T) {
	emptyHome(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o700)
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte(fmt.Sprintf("data_dir = %q\n[flush]\nidle = \"bogus\"\n", filepath.ToSlash(data))), 0o600)
	for _, args := range [][]string{
		{"flush", "--all", "--config", bad, "--data-dir", data},
		{"flush", "abc", "--config", bad, "--data-dir", data},
		{"flush", "--all", "--config", bad},
		{"flush", "abc", "--config", bad},
	} {
		code, _, stderr := run(t, args...)
		// flush --all catches up as agentmap scan, and its error says so.
		if code != exitFailure || strings.Count(stderr, "bad.toml:3: flush.idle") != 1 || strings.Contains(stderr, "warning") ||
			!strings.Contains(stderr, bad+" has 1 problem(s)") || strings.Contains(stderr, "agentmap run:") {
			t.Errorf("%q: exit %d, %q; want the problem once, as the error", args, code, stderr)
		}
	}
}
