//go:build unix

package watchers

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/internal/regular"
	"github.com/fsnotify/fsnotify"
)

// mkfifo makes a named pipe at path, or skips the test.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// openWithin is OpenLog, failing the test if it does not return within a
// few seconds (an open of a named pipe for reading waits for a writer:
// the pipe is then opened for writing, which lets it return).
func openWithin(t *testing.T, path string) (*os.File, error) {
	t.Helper()
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := OpenLog(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			defer w.Close()
		}
		o := <-done
		if o.f != nil {
			o.f.Close()
		}
		t.Fatalf("OpenLog(%s) blocked", filepath.Base(path))
		return nil, nil
	}
}

// A named pipe, a directory or a device at a log's path is refused at
// once, as a log gone, with the kind of file it is; a regular file opens
// blocking as before (a read of it at its end returns, not EAGAIN).
func TestOpenLogRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	mkfifo(t, fifo)
	sub := filepath.Join(dir, "dir.jsonl")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "named pipe", sub: "directory", os.DevNull: "character device"} {
		f, err := openWithin(t, path)
		if f != nil {
			f.Close()
		}
		var pe *os.PathError
		if !errors.Is(err, regular.ErrNotRegular) || !Missing(err) || regular.KindOf(err) != kind ||
			!errors.As(err, &pe) || pe.Path != path {
			t.Errorf("OpenLog(%s): %v, want not a regular file (a %s)", path, err, kind)
		}
	}
	p := filepath.Join(dir, "log.jsonl")
	os.WriteFile(p, []byte("{}\n"), 0o600)
	f, err := openWithin(t, p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := fcntlFlags(f)
	if err != nil || flags&syscall.O_NONBLOCK != 0 {
		t.Errorf("a log opened non-blocking (flags %#x, %v)", flags, err)
	}
}

func fcntlFlags(f *os.File) (int, error) {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(flags), nil
}

// A known log whose path comes to hold a named pipe or a directory (moved
// away, the other made in its place) is reported gone, as if deleted; a
// regular file put back is a log again.
func TestWatcherReportsALogReplacedByANonRegularFileGone(t *testing.T) {
	home := t.TempDir()
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	fifo := filepath.Join(claude.Dir, "projects", "-w", "s1.jsonl")
	dir := filepath.Join(claude.Dir, "projects", "-w", "s2.jsonl")
	write(t, fifo, "{}\n")
	write(t, dir, "{}\n")
	r := startWatcher(t, []Root{claude}, WatchOptions{})
	r.waitFor("the logs", func(m map[string]FileStat) bool { return m[fifo].Size == 3 && m[dir].Size == 3 })
	os.Rename(fifo, filepath.Join(home, "away1"))
	os.Rename(dir, filepath.Join(home, "away2"))
	mkfifo(t, fifo)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	r.waitFor("both gone", func(m map[string]FileStat) bool { return m[fifo].Gone && m[dir].Gone })
	os.Remove(fifo)
	write(t, fifo, "{}\n{}\n")
	r.waitFor("the log put back", func(m map[string]FileStat) bool { return !m[fifo].Gone && m[fifo].Size == 6 })
}

// With every notification lost, the next rescan reports a log replaced by
// a named pipe gone, whether or not it is its directory's turn: the
// directory's listing changed, though every name in it is still a file.
func TestRescanReportsALogReplacedByAPipeGone(t *testing.T) {
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(t.TempDir(), ".claude")}
	d := filepath.Join(root.Dir, "projects", "-w")
	log := filepath.Join(d, "00000001-0000-4000-8000-000000000000.jsonl")
	write(t, log, "{}\n")
	write(t, filepath.Join(d, "00000002-0000-4000-8000-000000000000.jsonl"), "{}\n")
	w := NewWatcher([]Root{root}, WatchOptions{})
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skipf("no file notifications here: %v", err)
	}
	defer fsw.Close()
	w.fsw = fsw // its events are never read
	nextIsTurn := func() bool {
		w.sweeps++
		defer func() { w.sweeps-- }()
		return w.mustStat(d)
	}
	w.fullScan()
	w.pending = map[string]FileStat{}
	for nextIsTurn() {
		w.fullScan()
		w.pending = map[string]FileStat{}
	}
	os.Remove(log)
	mkfifo(t, log)
	w.fullScan()
	if got := w.collect().Files; len(got) != 1 || got[0].Path != log || !got[0].Gone {
		t.Fatalf("the rescan after a log became a pipe reported %+v", got)
	}
}
