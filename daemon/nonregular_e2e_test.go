//go:build unix

package daemon

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nonRegularRig is a home with three Claude logs: one to be replaced by a
// named pipe, one by a directory, one kept.
type nonRegularRig struct {
	bin, home, data string
	fifo, dir, kept string
}

func newNonRegularRig(t *testing.T) nonRegularRig {
	t.Helper()
	corpus := corpusDir(t)
	r := nonRegularRig{bin: buildBinary(t), home: t.TempDir()}
	r.data = filepath.Join(r.home, "data")
	projects := filepath.Join(r.home, ".claude", "projects", "-w")
	r.fifo = filepath.Join(projects, "1f1f1f1f-0000-4000-8000-000000000001.jsonl")
	r.dir = filepath.Join(projects, "d1d1d1d1-0000-4000-8000-000000000002.jsonl")
	r.kept = filepath.Join(projects, "ee000000-0000-4000-8000-000000000003.jsonl")
	place(t, corpus, toolHeavy, r.fifo)
	place(t, corpus, "claude/spotter__"+spotter+".jsonl", r.dir)
	place(t, corpus, "claude/agent-tail__042ea65c0abd-1__full.jsonl", r.kept)
	return r
}

// replace moves the two logs out of the roots (as a user's mv does) and
// puts a named pipe and a directory at their paths.
func (r nonRegularRig) replace(t *testing.T) {
	t.Helper()
	for i, p := range []string{r.fifo, r.dir} {
		if err := os.Rename(p, filepath.Join(r.home, "away"+string(rune('0'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(r.fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Mkdir(r.dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

// files is what status counts of the logs followed.
func files(st Status) int {
	n := 0
	for _, a := range st.Agents {
		n += a.Files
	}
	return n
}

// startRun starts `agentmap run`, killed at the end of the test if it
// still runs (a daemon blocked opening a named pipe ignores SIGTERM).
func (r nonRegularRig) startRun(t *testing.T) *proc {
	t.Helper()
	d := startDaemon(t, r.bin, r.home, r.data)
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Signal(syscall.SIGQUIT) // its stacks, for the log
			d.cmd.Wait()
		}
	})
	return d
}

// stopWithin stops a daemon, which must exit cleanly within limit; one
// that does not is dumped (SIGQUIT) and the test fails.
func stopWithin(t *testing.T, d *proc, limit time.Duration) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- d.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("daemon exit: %v\n%s", err, tailOf(d.log.String(), 4000))
		}
	case <-time.After(limit):
		d.cmd.Process.Signal(syscall.SIGQUIT)
		<-exited
		t.Fatalf("the daemon did not stop within %v\n%s", limit, tailOf(d.log.String(), 8000))
	}
}

// scanWithin runs `agentmap scan`, which must finish within limit.
func (r nonRegularRig) scanWithin(t *testing.T, limit time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, "scan", "--data-dir", r.data, "--log-level", "info")
	cmd.Env = testEnv(r.home)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) } // its stacks, for the log
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("scan still ran after %v:\n%s", limit, tailOf(string(out), 8000))
	}
	if err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	return string(out)
}

// keptMapped checks that the kept log's map is the one agentmap build
// makes of it.
func (r nonRegularRig) keptMapped(t *testing.T, what string) {
	t.Helper()
	store := readMaps(t, filepath.Join(r.data, "maps"))
	for name, b := range expected(t, r.bin, []string{r.kept}) {
		if got, ok := store[name]; !ok || string(got) != string(b) {
			t.Fatalf("%s: the map of the kept log is missing or differs (%s)", what, name)
		}
	}
}

// goneAs checks that a log names the two paths as no longer regular files,
// each with its kind.
func (r nonRegularRig) goneAs(t *testing.T, log string) {
	t.Helper()
	for p, kind := range map[string]string{r.fifo: "named pipe", r.dir: "directory"} {
		found := false
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "not a regular file now") && strings.Contains(l, p) && strings.Contains(l, kind) {
				found = true
			}
		}
		if !found {
			t.Errorf("no line reports %s gone as a %s:\n%s", filepath.Base(p), kind, tailOf(log, 4000))
		}
	}
}

// A followed log replaced by a named pipe or a directory while the daemon
// runs is a log gone: logged once with the kind of file, no longer counted
// by status, and neither stop nor the next start (run or scan) waits on
// the pipe; a regular file put back is followed again.
func TestLogReplacedByANonRegularFileWhileFollowing(t *testing.T) {
	r := newNonRegularRig(t)
	u := asUser{bin: r.bin}
	d := r.startRun(t)
	waitStore(t, r.data, expected(t, r.bin, []string{r.fifo, r.dir, r.kept}), d)
	u.waitStatus(t, r.home, r.data, d, 30*time.Second, "three logs followed", func(st Status) bool { return files(st) == 3 })
	r.replace(t)
	u.waitStatus(t, r.home, r.data, d, 30*time.Second, "the two replaced logs gone", func(st Status) bool { return files(st) == 1 })
	r.goneAs(t, d.log.String())
	stopWithin(t, d, 30*time.Second)

	d = r.startRun(t)
	u.waitStatus(t, r.home, r.data, d, 60*time.Second, "a restarted daemon answers, with one log", func(st Status) bool {
		return !st.CatchUp.Finished.IsZero() && files(st) == 1
	})
	stopWithin(t, d, 30*time.Second)
	r.scanWithin(t, 60*time.Second)
	r.keptMapped(t, "after a restart")

	// A regular file back at the pipe's path is a log again.
	if err := os.Remove(r.fifo); err != nil {
		t.Fatal(err)
	}
	place(t, corpusDir(t), toolHeavy, r.fifo)
	d = r.startRun(t)
	u.waitStatus(t, r.home, r.data, d, 60*time.Second, "the log put back followed", func(st Status) bool { return files(st) == 2 })
	stopWithin(t, d, 30*time.Second)
}

// Logs replaced by a named pipe and a directory while no daemon runs:
// `scan` and `run` start, finish their catch-up and map the other logs,
// and report the two gone, instead of blocking on the pipe before they
// start (holding the state database's lock, with no control socket).
func TestLogReplacedByANonRegularFileWhileStopped(t *testing.T) {
	r := newNonRegularRig(t)
	r.scanWithin(t, 60*time.Second)
	r.keptMapped(t, "first scan")
	r.replace(t)
	out := r.scanWithin(t, 60*time.Second)
	r.goneAs(t, out)
	r.keptMapped(t, "scan with a pipe and a directory in the logs' places")

	d := r.startRun(t)
	u := asUser{bin: r.bin}
	u.waitStatus(t, r.home, r.data, d, 60*time.Second, "a daemon answers, with one log", func(st Status) bool {
		return !st.CatchUp.Finished.IsZero() && files(st) == 1
	})
	stopWithin(t, d, 30*time.Second)
}
