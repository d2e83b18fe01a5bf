package main

import (
	"strings"
	"testing"
)

// A log whose file name is not the session id it holds (a copied log, a
// tool's own naming) has a key of the one (claude/NAME) and a map of the
// other (ID.json.gz): list shows the map's id, the daemon's log the key.
// show and flush take either, whole or as a prefix, with or without the
// agent, and the same ones with a daemon running as without: what show
// tells the user to run works where it is told.
func TestACopiedLogIsNamedByEitherID(t *testing.T) {
	bin := opsBinary(t, t.TempDir())
	h := newOpsHome(t, bin)
	repo := h.path("work/proj")
	appendFile(t, repo+"/.git/HEAD", "ref: refs/heads/main\n")
	const sid = "7c0ffee0-0000-4000-8000-00000000c0c0"
	// Its first line names no session, so the file's name keys it (as
	// Claude Code's checkpoint copies that start with a snapshot).
	appendFile(t, h.path(".claude/projects/-proj/copied-log-1.jsonl"),
		`{"type":"file-history-snapshot","messageId":"m1","snapshot":{"messageId":"m1","trackedFileBackups":{},"timestamp":"2026-05-01T10:00:00.000Z"},"isSnapshotUpdate":false}`+"\n"+claudeTurn(sid, repo, 0))
	appendFile(t, h.path(".config/agentmap/config.toml"),
		"version = 1\n[flush]\nidle = \"1h\"\n[watch]\ndebounce = \"20ms\"\nrescan = \"1s\"\n[agents.codex]\nenabled = false\n[agents.cursor]\nenabled = false\n")
	names := []string{sid, sid[:8], "claude/" + sid, "claude-code/" + sid[:8], "copied-log-1", "copied", "claude/copied-log-1", "claude-code/copied"}
	check := func(how string) {
		t.Helper()
		for _, id := range names {
			if code, out, errb := h.run("show", id); code != exitOK || !strings.Contains(out, "session   "+sid) {
				t.Errorf("%s: show %s: exit %d\n%s%s", how, id, code, out, errb)
			}
			if code, out, errb := h.run("flush", id); code != exitOK || !strings.Contains(out, "flushed claude/copied-log-1") {
				t.Errorf("%s: flush %s: exit %d\n%s%s", how, id, code, out, errb)
			}
		}
		if code, _, errb := h.run("show", "claude/"+sid[:8]+"x"); code != exitFailure || !strings.Contains(errb, "no session in the store matches") {
			t.Errorf("%s: an id that names nothing: exit %d\n%s", how, code, errb)
		}
		// An agent's name is no id: "cla" names no session, flushed or shown.
		for _, cmd := range []string{"show", "flush"} {
			if code, out, errb := h.run(cmd, "cla"); code != exitFailure || strings.Contains(out, "flushed") {
				t.Errorf("%s: %s cla: exit %d\n%s%s", how, cmd, code, out, errb)
			}
		}
	}
	h.must("scan")
	check("without a daemon")

	dlog := h.daemon()
	waitFor(t, "the daemon to catch up", dlog, func() bool {
		st := h.status()
		return st.Running && !st.CatchUp.Running && !st.CatchUp.Finished.IsZero()
	})
	check("with a daemon")
}
