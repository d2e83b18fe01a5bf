//go:build linux

package export_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	. "github.com/agentmap/agentmap/export"
)

// manyCalls is a map of n model calls, gzipped: some 22 KB as JSON lines,
// over 64 KiB as AttemptDB events.
func manyCalls(t *testing.T, n int) []byte {
	t.Helper()
	evs := []event.Event{{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: "big-1", AgentTool: "claude-code", Role: "root"}},
		{Kind: event.KindUser, T: t0 + 1, User: &event.User{Chars: 10}}}
	for i := range n {
		evs = append(evs, event.Event{Kind: event.KindLLM, T: t0 + int64(10+i*10), Model: "claude-sonnet-4-5",
			LLM: &event.LLM{In: 5, Out: 7, Stop: "end_turn", TextChars: 3}})
	}
	evs = append(evs, event.Event{Kind: event.KindTurnEnd, T: t0 + int64(20+n*10)})
	m, err := builder.Build(evs, builder.Options{Producer: "agentmap test"})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := m.Gzip()
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

// batchUnderFileLimit is run in a child process whose files may not grow
// past 40 KiB (RLIMIT_FSIZE): the AttemptDB stream fails on its first map,
// the JSON lines one does not. It prints the outcome as JSON.
func TestBatchUnderFileLimitChild(t *testing.T) {
	dir := os.Getenv("AGENTMAP_TEST_FSIZE_DIR")
	if dir == "" {
		t.Skip("run by TestBatchFailsWhenAFormatCannotWrite")
	}
	signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails with EFBIG instead
	lim := syscall.Rlimit{Cur: 40 << 10, Max: 40 << 10}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	var formats []Format
	for _, f := range strings.Split(os.Getenv("AGENTMAP_TEST_FSIZE_FORMATS"), ",") {
		formats = append(formats, Format(f))
	}
	b := Batch{Dir: filepath.Join(dir, "out"), Formats: formats, Options: testOptions(""), Stamp: testNow}
	var bad []string
	res, err := b.Write(Selection{}, []string{filepath.Join(dir, "big-1.json.gz")}, func(_ string, err error) { bad = append(bad, err.Error()) })
	out := struct {
		Files    []string
		Exported int
		Err      string
		Bad      []string
	}{res.Files, len(res.Exported), "", bad}
	if err != nil {
		out.Err = err.Error()
	}
	raw, _ := json.Marshal(out)
	os.WriteFile(filepath.Join(dir, "outcome.json"), raw, 0o600)
}

// A format whose file cannot be written (here past a file size limit, as
// on a full disk) fails the whole batch, even when the failure made its
// writer refuse every map and it is the batch's only format: the other
// formats' files are removed and no map counts as exported, so the batch
// is retried whole.
func TestBatchFailsWhenAFormatCannotWrite(t *testing.T) {
	for _, formats := range []string{"jsonl,attemptdb", "attemptdb"} {
		t.Run(formats, func(t *testing.T) { batchUnderFileLimit(t, formats) })
	}
}

func batchUnderFileLimit(t *testing.T, formats string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big-1.json.gz"), manyCalls(t, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBatchUnderFileLimitChild$")
	cmd.Env = append(os.Environ(), "AGENTMAP_TEST_FSIZE_DIR="+dir, "AGENTMAP_TEST_FSIZE_FORMATS="+formats)
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, o)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "outcome.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Files    []string
		Exported int
		Err      string
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out.Err == "" || len(out.Files) != 0 || out.Exported != 0 {
		t.Fatalf("a batch whose AttemptDB file could not be written: %s", raw)
	}
	if left := names(t, filepath.Join(dir, "out")); len(left) != 0 {
		t.Fatalf("files left by the failed batch: %v", left)
	}
}
