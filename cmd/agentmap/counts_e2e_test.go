package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmap/agentmap/daemon"
)

// scan, status and list count the same sessions, with and without a
// daemon: those with a map. A Codex parent known only through its child
// rollout and a file that yields no session are counted by none of them.
func TestSessionCountsAgree(t *testing.T) {
	bin := opsBinary(t, t.TempDir())
	h := newOpsHome(t, bin)
	repo := h.path("work/proj")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o700)
	appendFile(t, h.path(".claude/projects/-proj/0a1b2c3d-0000-4000-8000-00000000c0a1.jsonl"),
		claudeTurn("0a1b2c3d-0000-4000-8000-00000000c0a1", repo, 0))
	appendFile(t, h.path(".claude/projects/-proj/0a1b2c3d-0000-4000-8000-00000000c0a2.jsonl"),
		claudeTurn("0a1b2c3d-0000-4000-8000-00000000c0a2", repo, 1))
	// Not a log of any agent: no session.
	appendFile(t, h.path(".claude/projects/-proj/0a1b2c3d-0000-4000-8000-00000000c0a3.jsonl"), "not json\nnor this\n")
	// A Codex child rollout whose parent's rollout is not here.
	child, err := os.ReadFile("../../testdata/codex/rollout-2026-11-02T10-00-01-01a19bb3-9adc-7000-8000-0000000f0002.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, h.path(".codex/sessions/2026/11/02/rollout-2026-11-02T10-00-01-01a19bb3-9adc-7000-8000-0000000f0002.jsonl"), string(child))
	cfg := h.path(".config/agentmap/config.toml")
	appendFile(t, cfg, "version = 1\n[watch]\ndebounce = \"20ms\"\n[flush]\nidle = \"1h\"\n[agents.cursor]\nenabled = false\n")
	data := h.path(".local/share/agentmap")
	const want = 3 // two Claude sessions and the Codex child

	scanSessions := regexp.MustCompile(`scan: done.*?(\d+) sessions?(?: \(\d+ more had nothing to map\))?\n`)
	counts := func(scanErr string) (scan, status, list, maps int) {
		t.Helper()
		m := scanSessions.FindStringSubmatch(scanErr)
		if m == nil {
			t.Fatalf("no session count in scan's output:\n%s", scanErr)
		}
		scan, _ = strconv.Atoi(m[1])
		var st struct{ daemon.Status }
		if err := json.Unmarshal([]byte(h.must("status", "--json", "--no-service")), &st); err != nil {
			t.Fatal(err)
		}
		for _, a := range st.Agents {
			status += a.Live + a.Flushed
		}
		var es []daemon.Entry
		if err := json.Unmarshal([]byte(h.must("list", "--json")), &es); err != nil {
			t.Fatal(err)
		}
		list = len(es)
		filepath.WalkDir(daemon.MapsDir(data), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json.gz") {
				maps++
			}
			return nil
		})
		return
	}
	check := func(how, scanErr string) {
		t.Helper()
		scan, status, list, maps := counts(scanErr)
		if scan != want || status != want || list != want || maps != want {
			t.Errorf("%s: scan %d, status %d, list %d, maps on disk %d; want %d each\n%s", how, scan, status, list, maps, want, scanErr)
		}
	}

	code, _, errb := h.run("scan")
	if code != exitOK {
		t.Fatalf("scan: exit %d\n%s", code, errb)
	}
	check("scan without a daemon", errb)

	d := exec.Command(bin, "run")
	d.Env = h.env
	var dlog lockedBuffer
	d.Stdout, d.Stderr = &dlog, &dlog
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		d.Process.Signal(syscall.SIGTERM)
		d.Wait()
	}()
	waitFor(t, "the daemon's control socket", &dlog, func() bool {
		_, err := os.Stat(daemon.ControlPath(data))
		return err == nil
	})
	code, _, errb = h.run("scan")
	if code != exitOK || !strings.Contains(errb, "scan: done by the daemon: 4 logs checked") {
		t.Fatalf("scan with a daemon: exit %d\n%s\ndaemon log:\n%s", code, errb, &dlog)
	}
	check("scan through the daemon", errb)
}
