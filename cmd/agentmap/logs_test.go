package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/packaging"
	"github.com/agentmap/agentmap/packaging/logfile"
)

func TestLogsReadsRotatedFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "agentmap.log")
	w, err := logfile.Open(path, 64, logfile.DefaultKeep)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		fmt.Fprintf(w, "line %d of the log\n", i) // 18 bytes: 3 per file
	}
	if len(logfile.Files(path, logfile.DefaultKeep)) < 3 {
		t.Fatal("the log did not rotate")
	}
	code, out, errOut := run(t, "logs", "--log-file", path, "-n", "4")
	if want := "line 4 of the log\nline 5 of the log\nline 6 of the log\nline 7 of the log\n"; code != exitOK || out != want {
		t.Fatalf("logs -n 4: exit %d %q %q", code, out, errOut)
	}

	// -f prints what comes next, across a rotation, until cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	var got lockedBuffer
	done := make(chan int)
	go func() { done <- cmdLogs(ctx, []string{"--log-file", path, "-n", "1", "-f"}, &got, &bytes.Buffer{}) }()
	time.Sleep(300 * time.Millisecond)
	// At the pace of a log, not faster than the poll: a file rotated
	// twice between two polls would be missed, as with tail -F.
	for i := 8; i < 14; i++ {
		fmt.Fprintf(w, "line %d of the log\n", i)
		time.Sleep(150 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(got.String(), "line 13 of the log") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("logs -f: exit %d", code)
	}
	for i := 7; i < 14; i++ {
		if !strings.Contains(got.String(), fmt.Sprintf("line %d of the log\n", i)) {
			t.Errorf("logs -f lacks line %d:\n%s", i, got.String())
		}
	}
	w.Close()
}

func TestLogsErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.log")
	if code, _, errOut := run(t, "logs", "--log-file", missing); code != exitFailure ||
		!strings.Contains(errOut, "agentmap logs: no log at "+missing+" yet (the service writes it once it runs)") {
		t.Errorf("no log: exit %d %q", code, errOut)
	}
	if got := strings.Join(journalArgs(50, true), " "); got != "journalctl --user -u agentmap.service --no-pager -o short-iso -n 50 -f" {
		t.Errorf("journal: %s", got)
	}
}

// On Linux without the service, logs says where a hand-run daemon's log
// goes instead of leaving the user with an empty journal.
func TestLogsWithoutTheService(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the journal is Linux's")
	}
	if _, err := os.Stat(packaging.PackagedUnitPath); err == nil {
		t.Skip("the package's unit is installed on this machine")
	}
	t.Setenv("HOME", t.TempDir())
	_, _, errOut := run(t, "logs", "-n", "1")
	if !strings.Contains(errOut, "agentmap logs: the service is not installed, so the journal has no new log of it to show; a daemon you run yourself (agentmap run) logs to its stderr") {
		t.Errorf("logs without the service: %q", errOut)
	}
	// Following it would wait for good: it says so and stops.
	done := make(chan int, 1)
	go func() {
		code, _, _ := run(t, "logs", "-f")
		done <- code
	}()
	select {
	case code := <-done:
		if code != exitFailure {
			t.Errorf("logs -f without the service: exit %d, want %d", code, exitFailure)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("logs -f without the service still waits after 10 s")
	}
}

// failingWriter fails every write, as stdout on a full disk does.
type failingWriter struct{ writes int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	return 0, errors.New("no space left on device")
}

// Following a log stops at the first write that fails, instead of reading
// on for nobody until interrupted.
func TestFollowStopsWhenTheOutputFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentmap.log")
	if err := os.WriteFile(path, []byte("before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := &failingWriter{}
	done := make(chan error, 1)
	go func() { done <- followFile(ctx, path, w) }()
	time.Sleep(300 * time.Millisecond)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("appended\n")
	f.Close()
	select {
	case err := <-done:
		if err == nil || w.writes != 1 {
			t.Errorf("followFile returned %v after %d writes; want the write's error after 1", err, w.writes)
		}
	case <-ctx.Done():
		t.Fatal("followFile went on after its output failed")
	}
}
