package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/state"
)

// A log whose last line has no newline (a writer that exited without
// ending its record) gives its map that line's events while the log is
// there; once the log is gone, a map written again (an upgrade's rewrite,
// flush --all --rewrite) keeps them, from the state, rather than losing
// the session's last request.
func TestMapWrittenAgainAfterTheLogIsGoneKeepsItsUnfinishedLastLine(t *testing.T) {
	home := emptyHome(t)
	const id = "5f0c2f7e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
	line := func(kind, uuid, ts, body string) string {
		return `{"type":"` + kind + `","sessionId":"` + id + `","uuid":"` + uuid + `","timestamp":"2026-05-01T10:00:` + ts + `.000Z","cwd":"/w/app",` + body + `}`
	}
	assistant := func(n string) string {
		return `"requestId":"req_` + n + `","message":{"id":"msg_` + n + `","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"zqcanary reply"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}`
	}
	log := strings.Join([]string{
		line("user", "u1", "00", `"message":{"role":"user","content":"zqcanary prompt"}`),
		line("assistant", "a1", "05", `"parentUuid":"u1",`+assistant("1")),
		line("user", "u2", "08", `"parentUuid":"a1","message":{"role":"user","content":"zqcanary again"}`),
		line("assistant", "a2", "10", `"parentUuid":"u2",`+assistant("2")), // no newline after it
	}, "\n")
	dir := filepath.Join(home, ".claude", "projects", "-w-app")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(home, "data")
	if code, _, errOut := runCmd(cmdScan, "--data-dir", data); code != exitOK {
		t.Fatalf("scan: %d %s", code, errOut)
	}
	maps, _ := filepath.Glob(filepath.Join(data, "maps", "claude", "*", "*", id+".json.gz"))
	if len(maps) != 1 {
		t.Fatalf("maps: %v", maps)
	}
	before, _ := os.ReadFile(maps[0])
	_, show, _ := runCmd(cmdShow, "--data-dir", data, "--json", id)
	if !strings.Contains(show, `"requests": 2`) {
		t.Fatalf("the map does not have the last line's request:\n%s", show)
	}
	os.Remove(path)
	if code, _, errOut := runCmd(cmdScan, "--data-dir", data); code != exitOK {
		t.Fatalf("scan after the log went: %d %s", code, errOut)
	}
	if code, out, errOut := runCmd(cmdFlush, "--all", "--rewrite", "--data-dir", data); code != exitOK {
		t.Fatalf("flush --all --rewrite: %d %s %s", code, out, errOut)
	}
	after, _ := os.ReadFile(maps[0])
	if !bytes.Equal(before, after) {
		_, show, _ = runCmd(cmdShow, "--data-dir", data, "--json", id)
		t.Errorf("the map written again without the log differs from the one written with it:\n%s", show)
	}
	// The kept tail is searched as the event batches are: decompressed.
	searchable, err := state.SearchableBytes(filepath.Join(data, "state.db"))
	if err != nil || bytes.Contains(searchable, []byte("zqcanary")) || !bytes.Contains(searchable, []byte("msg_2")) && !bytes.Contains(searchable, []byte("claude-sonnet-4-5")) {
		t.Errorf("the state's searchable bytes: err %v, canary %v", err, bytes.Contains(searchable, []byte("zqcanary")))
	}
}
