package logfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "agentmap.log")
	w, err := Open(path, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 39) + "\n") // 40 bytes: two fit in 100
	for i := 0; i < 9; i++ {
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	files := Files(path, 2)
	want := []string{path + ".2", path + ".1", path}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v, want %v", files, want)
	}
	total := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if len(b) > 100 || !bytes.HasSuffix(b, []byte("\n")) {
			t.Errorf("%s: %d bytes, lines cut: %q", f, len(b), b)
		}
		total += len(b)
		fi, _ := os.Stat(f)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", f, fi.Mode())
		}
	}
	// 9 lines written, 2 per file, 3 files kept: the oldest 4 are gone.
	if total != 5*40 {
		t.Errorf("%d bytes kept, want %d", total, 5*40)
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Error("more files kept than asked")
	}
	// Reopening appends to the current file and counts what it holds.
	w, _ = Open(path, 100, 2)
	w.Write(line)
	w.Close()
	if b, _ := os.ReadFile(path); len(b) != 80 {
		t.Errorf("after reopening: %d bytes", len(b))
	}
}

func TestLineLongerThanTheCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.log")
	w, _ := Open(path, 10, 1)
	w.Write([]byte("short\n"))
	w.Write([]byte(strings.Repeat("y", 30) + "\n"))
	w.Close()
	if b, _ := os.ReadFile(path); len(b) != 31 {
		t.Errorf("a long line is kept whole in its own file: %d bytes", len(b))
	}
	if b, _ := os.ReadFile(path + ".1"); string(b) != "short\n" {
		t.Errorf("previous: %q", b)
	}
}
