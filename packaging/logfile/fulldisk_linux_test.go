package logfile

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/internal/fulldisk"
)

// A disk that fills up loses the lines written meanwhile, but never in
// silence: the first line written once there is room again is preceded by
// one that says how many were lost and why; and a rotation that could not
// open the new file (the disk full at that moment) does not close the log
// for good.
func TestLinesLostOnAFullDiskAreSaid(t *testing.T) {
	dir := fulldisk.Mount(t, "1m")
	path := filepath.Join(dir, "agentmap.log")
	w, err := Open(path, 4096, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte("before\n")); err != nil {
		t.Fatal(err)
	}
	filler := fulldisk.Fill(t, dir)
	line := []byte(strings.Repeat("x", 1000) + "\n")
	failed := 0
	for range 8 { // past the 4096-byte cap: a rotation meets the full disk too
		if _, err := w.Write(line); err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no write failed on a full disk")
	}
	os.Remove(filler)
	if _, err := w.Write([]byte("after\n")); err != nil {
		t.Fatalf("a write once there is room again: %v", err)
	}
	w.Close()
	got, _ := os.ReadFile(path)
	note := regexp.MustCompile(`(?m)^agentmap: (\d+) log line\(s\) lost while the log file could not be written \(.*no space left on device.*\)\n`)
	m := note.FindSubmatch(got)
	if m == nil || !strings.HasSuffix(string(got), "after\n") {
		t.Fatalf("the log after the disk filled and emptied:\n%s", got)
	}
	if string(m[1]) != strconv.Itoa(failed) {
		t.Errorf("the note counts %s lost lines, %d writes failed", m[1], failed)
	}
}
