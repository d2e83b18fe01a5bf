package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: its master, and its slave as a file.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	// Non-blocking, so that reads of it take a deadline.
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	m := os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open the slave: %v", err)
	}
	// Raw: the terminal passes bytes as they are written, no newline
	// translation, so that what is read is what agentmap wrote.
	if tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS); err == nil {
		tio.Oflag &^= unix.OPOST
		unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// What the commands print on a terminal names repositories and files,
// whose names may hold control sequences: on a terminal they are escaped
// (a name cannot clear the screen or set the window's title), and the
// terminal is still seen behind the writer; a file gets the bytes as
// they are.
func TestTerminalOutputEscapesControls(t *testing.T) {
	master, slave := openPTY(t)
	w := wrapStdout(slave)
	if _, ok := w.(*terminalSafe); !ok {
		t.Fatalf("a terminal's stdout is a %T", w)
	}
	if !isTerminal(w) {
		t.Error("the terminal is not seen behind the writer")
	}
	const name = "repo\x1b]0;title\x07\x1b[2Jname"
	io.WriteString(w, "proj  "+name+"  src/app.go\n")
	got := readFor(t, master, 200*time.Millisecond)
	if bytes.ContainsAny(got, "\x1b\x07") || !bytes.Contains(got, []byte(`repo\x1b]0;title\x07\x1b[2Jname`)) {
		t.Errorf("on the terminal: %q", got)
	}
	// runCLI wraps a terminal so, once.
	if code := runCLI(context.Background(), []string{"version"}, slave, io.Discard); code != exitOK {
		t.Errorf("version on a terminal: exit %d", code)
	}
	if got := readFor(t, master, 200*time.Millisecond); !bytes.Contains(got, []byte("agentmap")) {
		t.Errorf("version on a terminal printed %q", got)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := wrapStdout(f).(*outWriter); !ok {
		t.Error("a file's stdout is not an outWriter")
	}
}

// readFor reads what the terminal has for a while.
func readFor(t *testing.T, f *os.File, d time.Duration) []byte {
	t.Helper()
	f.SetReadDeadline(time.Now().Add(d))
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out
		}
	}
}
