//go:build unix

package daemon

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Claude Code log whose first line is longer than what is read to route
// it (its first prompt with a pasted image) is mapped by a running daemon
// as `agentmap build` maps it: found at the catch-up, and found while it
// is written, its first line cut over several writes. A log whose lines
// name no session id that passes the gate is mapped under its file name,
// as build names it; one whose name is no id either is mapped by neither,
// and status counts it.
func TestEdgeRoutedLogsMapAsBuildMapsThem(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	src, err := os.ReadFile(filepath.Join(corpus, "claude", "spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	proj := filepath.Join(home, ".claude", "projects", "-w-x")
	os.MkdirAll(proj, 0o700)
	long := longFirstLine(t, src, 6<<20)
	atStart := filepath.Join(proj, "cccccccc-0000-4000-8000-000000000003.jsonl")
	os.WriteFile(atStart, long, 0o600)
	badID := bytes.ReplaceAll(src, []byte("ae4a77f8-aedd-4bc1-888f-c94edc91af04"), []byte("x y z secret"))
	notUUID := filepath.Join(proj, "notauuid.jsonl")
	os.WriteFile(notUUID, badID, 0o600)
	os.WriteFile(filepath.Join(proj, "x y.jsonl"), badID, 0o600)

	p := startDaemon(t, bin, home, data)
	defer p.kill()
	want := expected(t, bin, []string{atStart, notUUID})
	mustHold(t, want, "cccccccc-0000-4000-8000-000000000003.json.gz", "notauuid.json.gz")
	waitStore(t, data, want, p)

	// Written while the daemon runs, the first line in three writes: its
	// first 5 MiB (past what routing reads), then more, then its end.
	later := filepath.Join(proj, "cccccccc-0000-4000-8000-000000000004.jsonl")
	f, err := os.Create(later)
	if err != nil {
		t.Fatal(err)
	}
	written := 0
	for _, cut := range []int{5 << 20, 11 << 19, len(long)} {
		f.Write(long[written:cut])
		written = cut
		time.Sleep(600 * time.Millisecond)
	}
	f.Close()
	want = expected(t, bin, []string{atStart, notUUID, later})
	mustHold(t, want, "cccccccc-0000-4000-8000-000000000004.json.gz")
	waitStore(t, data, want, p)

	cmd := exec.Command(bin, "status", "--json", "--no-service", "--data-dir", data)
	cmd.Env = testEnv(home)
	st := statusOf(t, cmd)
	if st.Unrecognised != 1 {
		t.Errorf("status counts %d logs routed to no session, want 1", st.Unrecognised)
	}
	p.stop(t)
	log := p.log.String()
	if !strings.Contains(log, "log not recognised") || !strings.Contains(log, "no session id in file name or first line") {
		t.Errorf("the log routed by nothing is not said:\n%s", tailOf(log, 4000))
	}
	if strings.Contains(log, "secret") {
		t.Errorf("the daemon's log holds text of a log:\n%s", tailOf(log, 4000))
	}
}

// longFirstLine is a Claude Code log from its first typed prompt on, the
// prompt's text made n bytes long, its keys in the order Claude Code
// writes them.
func longFirstLine(t *testing.T, log []byte, n int) []byte {
	t.Helper()
	key := []byte(`"message":{"role":"user","content":"`)
	at := bytes.Index(log, key)
	if at < 0 {
		t.Skip("no typed prompt in the log")
	}
	log = log[bytes.LastIndexByte(log[:at], '\n')+1:]
	start := bytes.Index(log, key) + len(key)
	end := start
	for log[end] != '"' {
		if log[end] == '\\' {
			end++
		}
		end++
	}
	var b bytes.Buffer
	b.Write(log[:start])
	b.Write(bytes.Repeat([]byte("A"), n))
	b.Write(log[end:])
	return b.Bytes()
}

// mustHold fails unless `agentmap build` made the maps named.
func mustHold(t *testing.T, maps map[string][]byte, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, ok := maps[n]; !ok {
			t.Fatalf("agentmap build made no %s", n)
		}
	}
}
