package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/daemon"
)

// status without a daemon says when the maps were written with other map
// options than the config's (an earlier version, another path mode, a
// rewrite that could not write them all): their sessions read as
// flushed, and the next scan or start of the service writes them again.
// It makes no hash key to tell: a key not made yet is a rewrite of every
// map.
func TestStatusWithoutADaemonShowsAPendingRewrite(t *testing.T) {
	home := emptyHome(t)
	dir := filepath.Join(home, ".claude", "projects", "-w-app")
	os.MkdirAll(dir, 0o700)
	for _, id := range []string{"0a1b2c3d-0000-4000-8000-000000000001", "0a1b2c3d-0000-4000-8000-000000000002"} {
		b, err := os.ReadFile(fixture)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, id+".jsonl"), b, 0o600)
	}
	data := filepath.Join(home, "data")
	if code, _, errOut := runCmd(cmdScan, "--data-dir", data); code != exitOK {
		t.Fatalf("scan: %d %s", code, errOut)
	}
	status := func(config string) (string, daemon.Status) {
		t.Helper()
		args := []string{"--no-service", "--data-dir", data}
		if config != "" {
			path := filepath.Join(home, "agentmap.toml")
			os.WriteFile(path, []byte(config), 0o600)
			args = append(args, "--config", path)
		}
		code, out, errOut := runCmd(cmdStatus, args...)
		if code != exitOK {
			t.Fatalf("status: %d %s", code, errOut)
		}
		_, js, _ := runCmd(cmdStatus, append(args, "--json")...)
		var st daemon.Status
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, js)
		}
		return out, st
	}
	if out, st := status(""); strings.Contains(out, "rewrite:") || st.Rewrite != nil {
		t.Fatalf("a rewrite after a scan with the same options:\n%s", out)
	}
	out, st := status("[maps]\npath_mode = \"dirs_only\"\n")
	if want := "rewrite:    maps written by an earlier version or with other map options: 2 maps, written again by the next scan or start of the service\n"; !strings.Contains(out, want) {
		t.Errorf("status with another path mode lacks %q:\n%s", want, out)
	}
	if r := st.Rewrite; r == nil || !r.Pending || r.Left != 2 {
		t.Errorf("status --json with another path mode: rewrite %+v", r)
	}
	out, st = status("[maps]\npath_mode = \"hashed\"\n")
	if !strings.Contains(out, "2 maps, written again") || st.Rewrite == nil {
		t.Errorf("status with hashed paths and no key yet:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(data, "hash.key")); !os.IsNotExist(err) {
		t.Errorf("status made a hash key: %v", err)
	}
	// The scan with those options writes them, and status says no more.
	if code, _, errOut := runCmd(cmdScan, "--data-dir", data, "--config", filepath.Join(home, "agentmap.toml")); code != exitOK {
		t.Fatalf("scan with hashed paths: %d %s", code, errOut)
	}
	if out, _ := status("[maps]\npath_mode = \"hashed\"\n"); strings.Contains(out, "rewrite:") {
		t.Errorf("a rewrite left after the scan that made it:\n%s", out)
	}
}
