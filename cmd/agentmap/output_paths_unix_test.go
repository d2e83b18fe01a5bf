//go:build unix

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// charDevice makes a character device like /dev/null (minor 3) or
// /dev/full (minor 7) in a temporary directory: only root may.
func charDevice(t *testing.T, name string, minor int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
		t.Skipf("mknod: %v", err)
	}
	return p
}

// stillA fails unless p is still of the kind of file mode says.
func stillA(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode().Type() != mode {
		t.Errorf("%s was replaced: %v, %v", p, fi.Mode(), err)
	}
}

// An export to a FIFO reaches its reader, as `> fifo` would.
func TestOutputToAFIFO(t *testing.T) {
	data, _ := smallStore(t)
	code, want, stderr := run(t, "export", "--format", "jsonl", "--data-dir", data)
	if code != exitOK {
		t.Fatalf("export to stdout: exit %d %s", code, stderr)
	}
	fifo, got := readFIFO(t)
	if code, _, stderr := run(t, "export", "--format", "jsonl", "--data-dir", data, "--out", fifo); code != exitOK {
		t.Fatalf("export to a FIFO: exit %d %s", code, stderr)
	}
	if s := received(t, got); s != want {
		t.Errorf("the reader got %.100q, want %.100q", s, want)
	}
	stillA(t, fifo, os.ModeNamedPipe)
}

// readFIFO makes a FIFO and a reader that reads it whole once a writer
// has opened it: what it read comes on the channel ("open: …" when it
// could not open it).
func readFIFO(t *testing.T) (string, <-chan string) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		r, err := os.Open(fifo)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer r.Close()
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	return fifo, got
}

// received is what the reader of readFIFO got.
func received(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case s := <-got:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("the reader of the FIFO got nothing")
		return ""
	}
}

// An output that is a link is followed: the file it leads to gets the
// export, the report or the map, and the link stays a link.
func TestOutputThroughALink(t *testing.T) {
	data, _ := smallStore(t)
	maps, _ := fixtureMaps(t)
	dir, elsewhere := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string // a substring of the file the link leads to
	}{
		{"out.jsonl", []string{"export", "--format", "jsonl", "--data-dir", data, "--out"}, `small-1`},
		{"report.html", []string{"report", "--maps", maps, "-o"}, "<html"},
		{"one.json.gz", []string{"build", "-o"}, "\x1f\x8b"},
	} {
		target := filepath.Join(elsewhere, c.name)
		if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, c.name)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		args := append(c.args, link)
		if c.args[0] == "build" {
			args = append(args, fixture)
		}
		if code, _, stderr := run(t, args...); code != exitOK {
			t.Fatalf("%s to a link: exit %d %s", c.args[0], code, stderr)
		}
		stillA(t, link, os.ModeSymlink)
		if got, _ := os.ReadFile(target); !strings.Contains(string(got), c.want) {
			t.Errorf("%s: the link's file holds %.60q", c.args[0], got)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the links' directory holds %v", entries)
	}
}

// A device like /dev/null is written, not replaced by a file.
func TestOutputToANullDevice(t *testing.T) {
	null := charDevice(t, "null", 3)
	data, _ := smallStore(t)
	maps, _ := fixtureMaps(t)
	for _, args := range [][]string{
		{"export", "--format", "bundle", "--data-dir", data, "--out", null},
		{"report", "--maps", maps, "-o", null},
	} {
		if code, _, stderr := run(t, args...); code != exitOK {
			t.Errorf("%s to a null device: exit %d %s", args[0], code, stderr)
		}
		stillA(t, null, os.ModeDevice|os.ModeCharDevice)
	}
	null2 := charDevice(t, "null.json.gz", 3)
	if code, _, stderr := run(t, "build", "-o", null2, fixture); code != exitOK {
		t.Errorf("build to a null device: exit %d %s", code, stderr)
	}
	stillA(t, null2, os.ModeDevice|os.ModeCharDevice)
}

// A write to a full device (like /dev/full) fails: exit 1, and a message
// that names the output and why.
func TestOutputToAFullDevice(t *testing.T) {
	full := charDevice(t, "full.json.gz", 7)
	data, _ := smallStore(t)
	maps, _ := fixtureMaps(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "--format", "jsonl", "--data-dir", data, "--out", full}, "agentmap export: export to " + full + ": write " + full + ": no space left on device"},
		{[]string{"export", "--format", "attemptdb", "--data-dir", data, "--out", full}, "agentmap export: export to " + full + ": write " + full + ": no space left on device"},
		{[]string{"report", "--maps", maps, "-o", full}, "agentmap report: write " + full + ": no space left on device"},
		{[]string{"build", "-o", full, fixture}, "agentmap build: write " + full + ": no space left on device"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != exitFailure || !strings.Contains(stderr, c.want) {
			t.Errorf("%s to a full device: exit %d %q", c.args[0], code, stderr)
		}
		stillA(t, full, os.ModeDevice|os.ModeCharDevice)
	}
	// The failed attemptdb export did not use up its source_seq.
	if _, err := os.Stat(filepath.Join(data, nextSeqFile)); err == nil {
		t.Error("a failed export kept its next source_seq")
	}
}

// An output FIFO no one reads holds the command in its open, which no
// signal handler can end: the first Ctrl-C asks the command to stop, a
// second one ends the process, as in the tools users know.
func TestASecondInterruptEndsAWaitForAFIFOReader(t *testing.T) {
	dir := t.TempDir()
	bin := opsBinary(t, dir)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "report", "--maps", t.TempDir(), "-o", fifo)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(500 * time.Millisecond) // at the open by now
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("two interrupts did not end a command waiting for a FIFO's reader")
	}
}

// build -o takes a device, a FIFO or a name of one of its descriptors for
// one map file, whatever the name: /dev/null, the /dev/fd/63 of the
// shell's >(...), /dev/stdout, as report -o and export --out take them.
func TestBuildToADeviceOrFIFO(t *testing.T) {
	if code, _, stderr := run(t, "build", "-o", "/dev/null", fixture); code != exitOK {
		t.Errorf("build -o /dev/null: exit %d %q", code, stderr)
	}
	stillA(t, "/dev/null", os.ModeDevice|os.ModeCharDevice)

	fifo, got := readFIFO(t)
	if code, _, stderr := run(t, "build", "-o", fifo, fixture); code != exitOK {
		t.Fatalf("build -o FIFO: exit %d %q", code, stderr)
	}
	if s := received(t, got); !strings.HasPrefix(s, "\x1f\x8b") {
		t.Errorf("the FIFO's reader got %.20q, want a gzipped map", s)
	}
	stillA(t, fifo, os.ModeNamedPipe)

	// A descriptor's name writes through it, at its offset: what the
	// file held stays.
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("before\n")
	name := "/dev/fd/" + strconv.Itoa(int(f.Fd()))
	if code, _, stderr := run(t, "build", "-o", name, fixture); code != exitOK {
		t.Fatalf("build -o %s: exit %d %q", name, code, stderr)
	}
	if b, _ := os.ReadFile(f.Name()); !strings.HasPrefix(string(b), "before\n\x1f\x8b") {
		t.Errorf("build -o %s: the file holds %.20q", name, b)
	}

	// Several sessions to one file are refused as for a FILE.json.gz.
	code, _, stderr := run(t, "build", "-o", "/dev/null", fixture, "../../testdata/claude/coststate.jsonl")
	if code != exitUsage || !strings.Contains(stderr, "agentmap build: 2 sessions in the inputs; give a directory to -o, or pick one with --session") {
		t.Errorf("two sessions to /dev/null: exit %d %q", code, stderr)
	}
}
