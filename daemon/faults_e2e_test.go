//go:build unix

package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/internal/fulldisk"
	"github.com/agentmap/agentmap/internal/scribble"
)

// Faults of the disk under the data directory, injected for real: a small
// tmpfs filled to the last byte (disk full), and the immutable attribute
// on state.db (a file not even root can write). Both need root; without
// it, or where the file system refuses, the tests skip and say why.

// smallDisk mounts a tmpfs of size bytes at a new directory.
func smallDisk(t *testing.T, size string) string { return fulldisk.Mount(t, size) }

// fillDisk writes a file until the disk is full; removing it clears the
// fault.
func fillDisk(t *testing.T, dir string) string { return fulldisk.Fill(t, dir) }

// immutable sets or clears the immutable attribute of a file.
func immutable(t *testing.T, path string, on bool) {
	t.Helper()
	flag := "-i"
	if on {
		flag = "+i"
	}
	if os.Geteuid() != 0 {
		t.Skip("an unwritable state.db for root needs chattr +i: needs root")
	}
	if out, err := exec.Command("chattr", flag, path).CombinedOutput(); err != nil {
		if on {
			t.Skipf("chattr +i refused (%v: %s)", err, strings.TrimSpace(string(out)))
		}
		t.Fatalf("chattr -i: %v: %s", err, out)
	}
}

// daemonStatus asks the running daemon for its status.
func daemonStatus(t *testing.T, bin, home, data string) Status {
	t.Helper()
	return asUser{bin: bin}.status(t, home, data)
}

// settledStatus asks the running daemon for its status until settled
// says it has caught up with what the maps on disk show (a map is written
// a moment before the status that follows its flush is published), or
// 10 s have passed; it returns the last answer either way, for the
// caller's checks to report.
func settledStatus(t *testing.T, bin, home, data string, settled func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := daemonStatus(t, bin, home, data)
		if settled(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// statusOf runs a status --json command and decodes its answer.
func statusOf(t *testing.T, cmd *exec.Cmd) Status {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st Status
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	return st
}

// waitingStatus asks the running daemon for its status until lines wait
// to be committed again (the fault has been met), or 30 s have passed; it
// returns the last answer either way, for the caller's checks to report.
func waitingStatus(t *testing.T, sr *scanRig, data string) Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := daemonStatus(t, sr.bin, sr.home, data)
		if st.Uncommitted > 0 || time.Now().After(deadline) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// faultWhileFollowing runs one daemon: half of every log is mapped; then
// the fault is injected and the rest of every log written; status must
// show the fault (last error, logs waiting, sessions not flushed, bytes
// behind); then the fault is cleared, and with no further change to any
// log the maps must become `agentmap build` of the complete logs.
func faultWhileFollowing(t *testing.T, data string, inject func() (clear func())) {
	sr := newScanRig(t, 2)
	p := startDaemon(t, sr.bin, sr.home, data)
	defer func() {
		if p.cmd.ProcessState == nil {
			p.kill()
		}
	}()
	waitStore(t, data, expected(t, sr.bin, sr.paths), p)
	clear := inject()
	for _, f := range sr.feeds {
		f.write(t, len(f.data))
	}
	st := waitingStatus(t, sr, data)
	var live int
	var behind int64
	for _, a := range st.Agents {
		live += a.Live
		behind += a.Behind
	}
	if st.Uncommitted == 0 || live == 0 || behind == 0 || st.LastError == nil || st.RetryAt.IsZero() {
		clear()
		t.Fatalf("status does not show the fault: %+v\n%s", st, tailOf(p.log.String(), 3000))
	}
	t.Logf("under the fault: %d logs waiting, %d sessions live, %d bytes behind, last error %q",
		st.Uncommitted, live, behind, st.LastError.Message)
	clear()
	want := expected(t, sr.bin, sr.paths)
	waitStore(t, data, want, p)
	// Nothing is then behind: a last line without a newline is read and
	// in the map, though no cursor moves over it, and status must not
	// count it as bytes to read.
	var unfinished int64
	for _, f := range sr.feeds {
		unfinished += int64(len(f.data) - bytes.LastIndexByte(f.data, '\n') - 1)
	}
	st = settledStatus(t, sr.bin, sr.home, data, func(st Status) bool {
		var b int64
		for _, a := range st.Agents {
			if a.Live != 0 {
				return false
			}
			b += a.Behind
		}
		return b == 0 && st.Uncommitted == 0
	})
	behind = 0
	for _, a := range st.Agents {
		behind += a.Behind
		if a.Live != 0 {
			t.Errorf("after recovery %s: %d live", a.Agent, a.Live)
		}
	}
	if behind != 0 {
		t.Errorf("after recovery: %d bytes behind (the logs' unfinished last lines are %d bytes), want 0", behind, unfinished)
	}
	if st.Uncommitted != 0 {
		t.Errorf("after recovery: %d logs still waiting", st.Uncommitted)
	}
	p.stop(t)
	behind = 0 // and so says the state database with no daemon running
	for _, a := range daemonStatus(t, sr.bin, sr.home, data).Agents {
		behind += a.Behind
	}
	if behind != 0 {
		t.Errorf("stopped: %d bytes behind, want 0", behind)
	}
	t.Logf("%d maps identical to agentmap build after the fault cleared; %d bytes of unfinished last lines not counted behind", len(want), unfinished)
}

func TestDiskFullWhileFollowing(t *testing.T) {
	disk := smallDisk(t, "32m")
	data := filepath.Join(disk, "data")
	faultWhileFollowing(t, data, func() func() {
		filler := fillDisk(t, disk)
		return func() { os.Remove(filler) }
	})
}

func TestUnwritableStateWhileFollowing(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	faultWhileFollowing(t, data, func() func() {
		immutable(t, StatePath(data), true)
		return func() { immutable(t, StatePath(data), false) }
	})
}

// A one-shot catch-up on a full disk fails with exit 1 and a message
// saying why, leaves the state as it was (never moved aside), and the next
// run once the disk has room maps everything.
func TestScanOnAFullDisk(t *testing.T) {
	disk := smallDisk(t, "32m")
	data := filepath.Join(disk, "data")
	sr := newScanRig(t, 2)
	if out, err := sr.scan(data); err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	for _, f := range sr.feeds {
		f.write(t, len(f.data))
	}
	filler := fillDisk(t, disk)
	out, err := sr.scan(data)
	if err == nil {
		t.Fatalf("scan on a full disk succeeded:\n%s", out)
	}
	if !strings.Contains(out, "no space") {
		t.Errorf("scan does not say the disk is full:\n%s", tailOf(out, 2000))
	}
	if m, _ := filepath.Glob(StatePath(data) + ".corrupt-*"); len(m) > 0 {
		t.Fatalf("a full disk moved the state aside: %v", m)
	}
	os.Remove(filler)
	if out, err := sr.scan(data); err != nil {
		t.Fatalf("scan after the disk has room: %v\n%s", err, out)
	}
	if diff := diffMaps(readMaps(t, MapsDir(data)), expected(t, sr.bin, sr.paths)); len(diff) > 0 {
		t.Fatalf("maps differ from agentmap build: %v", diff)
	}
}

// restartRefused starts a daemon on a state.db it cannot write: it must
// exit at once with an error naming the file, not run without a memory.
func restartRefused(t *testing.T, bin, home, data string) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--data-dir", data)
	cmd.Env = testEnv(home)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("a daemon on an unwritable state.db kept running:\n%s", tailOf(string(out), 2000))
	}
	if err == nil || !strings.Contains(string(out), StatePath(data)) || !strings.Contains(string(out), "operation not permitted") {
		t.Errorf("a daemon on an unwritable state.db: %v\n%s", err, tailOf(string(out), 2000))
	}
}

// TestCrashEquivalenceUnderFaults is the crash-equivalence test with the
// disk under the data directory failing between the kills: corpus logs
// of all three agents grow in random chunks while the daemon is SIGKILLed
// at random moments, and at some of the kills the disk is full (a small
// tmpfs filled to the last byte) or state.db cannot be written (chattr
// +i), from a random moment before the kill until a random moment after
// the restart. The maps it ends with must be byte-identical to `agentmap
// build` of the complete logs: no event lost, none counted twice. The
// rest of every log is written on a full disk at the end, and the maps
// must come once it has room, with no further change to any log. Needs
// root (tmpfs, chattr); skipped with the reason otherwise.
// AGENTMAP_FAULTS_KEEP=DIR keeps a failed run's logs and the maps that
// differ.
func TestCrashEquivalenceUnderFaults(t *testing.T) {
	disk := smallDisk(t, "16m")
	data := filepath.Join(disk, "data")
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	feeds := layout(t, corpus, home, 200<<10)
	var total int
	for _, f := range feeds {
		total += len(f.data)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 11))
	t.Logf("%d files, %.1f MB, seed %d", len(feeds), float64(total)/1e6, seed)

	var logs strings.Builder
	start := func() *proc { return startDaemon(t, bin, home, data, "--log-level", "debug") }
	// settle waits (at most 2 s) until the daemon has committed or met
	// the fault since the call, so that the kill lands mid-work.
	settle := func(p *proc, marks ...string) {
		from := p.log.Len()
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			out := p.log.String()[from:]
			for _, m := range marks {
				if strings.Contains(out, m) {
					return
				}
			}
		}
	}
	kill := func(p *proc) {
		p.kill()
		logs.WriteString(p.log.String())
	}
	grow := func(chunks int) {
		for range chunks {
			var open []*feed
			for _, f := range feeds {
				if f.written < len(f.data) {
					open = append(open, f)
				}
			}
			if len(open) == 0 {
				return
			}
			open[rng.IntN(len(open))].write(t, 1+rng.IntN(24<<10))
		}
	}
	pause := func() { time.Sleep(time.Duration(50+rng.IntN(350)) * time.Millisecond) }
	const commitFailed, mapFailed = "cannot commit", "cannot write the map"

	p := start()
	defer func() {
		if p.cmd.ProcessState == nil {
			p.kill()
		}
	}()
	grow(4)
	settle(p, "msg=committed")
	var kills, full, unwritable int
	for round := 0; kills < 24 || full < 4 || unwritable < 4; round++ {
		grow(1 + rng.IntN(4))
		switch fault := rng.IntN(3); {
		case fault == 0 && full < 6:
			// Full from before the kill until after the restart.
			filler := fillDisk(t, disk)
			grow(1 + rng.IntN(3))
			settle(p, commitFailed, mapFailed)
			pause()
			kill(p)
			p = start()
			grow(1 + rng.IntN(3))
			settle(p, commitFailed, mapFailed, "msg=committed")
			pause()
			os.Remove(filler)
			full++
		case fault == 1 && unwritable < 6:
			// state.db unwritable until the kill (a daemon cannot start
			// on a state it cannot write: it exits, as it should).
			immutable(t, StatePath(data), true)
			grow(1 + rng.IntN(3))
			settle(p, commitFailed)
			pause()
			kill(p)
			if unwritable == 0 {
				restartRefused(t, bin, home, data)
			}
			immutable(t, StatePath(data), false)
			p = start()
			unwritable++
		default:
			settle(p, "msg=committed")
			pause()
			kill(p)
			p = start()
		}
		kills++
	}
	// The rest of every log is written on a full disk; once it has room
	// again, with no further change to any log, every map must come.
	filler := fillDisk(t, disk)
	var paths []string
	for _, f := range feeds {
		f.write(t, len(f.data))
		paths = append(paths, f.to)
	}
	settle(p, commitFailed, mapFailed)
	pause()
	os.Remove(filler)
	want := expected(t, bin, paths)
	if keep := os.Getenv("AGENTMAP_FAULTS_KEEP"); keep != "" {
		defer func() {
			if !t.Failed() {
				return
			}
			logs.WriteString(p.log.String())
			dir := filepath.Join(keep, fmt.Sprint(seed))
			os.MkdirAll(dir, 0o700)
			os.WriteFile(filepath.Join(dir, "daemon.log"), []byte(logs.String()), 0o600)
			got := readMaps(t, MapsDir(data))
			for k, v := range want {
				if !bytes.Equal(got[k], v) {
					os.WriteFile(filepath.Join(dir, "want-"+k), v, 0o600)
					os.WriteFile(filepath.Join(dir, "got-"+k), got[k], 0o600)
				}
			}
		}()
	}
	waitStore(t, data, want, p)
	p.stop(t)
	logs.WriteString(p.log.String())
	all := logs.String()
	t.Logf("%d kills, %d of them with the disk full, %d with state.db unwritable; %d commits and %d map writes failed on the way",
		kills, full, unwritable, strings.Count(all, commitFailed), strings.Count(all, mapFailed))
	// Neither a kill nor a fault may damage the state: a repair here
	// would hide a lost commit behind a rebuild.
	if strings.Contains(all, "moved it aside") || strings.Contains(all, "had damaged records") {
		t.Error("a kill or a fault damaged the state database")
	}
	if !strings.Contains(all, "no space left") {
		t.Error("the full disk was never met")
	}
	if !strings.Contains(all, "operation not permitted") {
		t.Error("the unwritable state was never met")
	}
	t.Logf("%d maps identical to agentmap build", len(want))
}

// exitsWithFailure waits up to within for p to exit 1, which it should
// after what happened; one still running then is dumped (SIGQUIT) and
// the test fails.
func exitsWithFailure(t *testing.T, p *proc, within time.Duration, what string) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("the daemon stopped with %v, want exit 1\n%s", err, p.log)
		}
	case <-time.After(within):
		p.cmd.Process.Signal(syscall.SIGQUIT)
		<-exited
		t.Fatalf("the daemon still runs %s after %s\n%s", within, what, tailOf(p.log.String(), 6000))
	}
}

// followedRig is a scan rig followed by a daemon (killed at the end of the
// test if still running) that has written every map.
func followedRig(t *testing.T) (*scanRig, string, *proc) {
	t.Helper()
	sr := newScanRig(t, 1)
	data := filepath.Join(t.TempDir(), "data")
	first := startDaemon(t, sr.bin, sr.home, data)
	t.Cleanup(func() {
		if first.cmd.ProcessState == nil {
			first.kill()
		}
	})
	waitStore(t, data, expected(t, sr.bin, sr.paths), first)
	return sr, data, first
}

// A state database removed under a following daemon stops it with the
// reason, within a check's period, instead of its going on writing to a
// file nobody reads; a second daemon started meanwhile on the same data
// directory is refused (the data directory's lock is not the state's), and
// one started after the first stopped rebuilds the maps from the logs.
func TestStateRemovedWhileFollowing(t *testing.T) {
	sr, data, first := followedRig(t)
	if err := os.Remove(StatePath(data)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, sr.bin, "run", "--data-dir", data)
	second.Env = testEnv(sr.home)
	if out, err := second.CombinedOutput(); err == nil || !strings.Contains(string(out), "agentmap is already running ("+filepath.Join(data, LockName)+" is locked, by process "+strconv.Itoa(first.cmd.Process.Pid)+")") {
		t.Fatalf("a second daemon with the state removed: %v\n%s", err, out)
	}
	exitsWithFailure(t, first, 3*stateCheckEvery, "its state database was removed")
	if log := first.log.String(); !strings.Contains(log, "the state database "+StatePath(data)+" was removed while agentmap ran") {
		t.Errorf("the first daemon's log does not say why it stopped:\n%s", tailOf(log, 3000))
	}
	third := startDaemon(t, sr.bin, sr.home, data)
	defer func() {
		if third.cmd.ProcessState == nil {
			third.kill()
		}
	}()
	// It answers once it has caught up again, on a new database, and the
	// maps are still those of the logs.
	st := settledStatus(t, sr.bin, sr.home, data, func(st Status) bool {
		return st.PID == third.cmd.Process.Pid && !st.CatchUp.Finished.IsZero()
	})
	if st.PID != third.cmd.Process.Pid || st.CatchUp.Finished.IsZero() {
		t.Fatalf("the new daemon has not caught up: %+v\n%s", st, third.log)
	}
	waitStore(t, data, expected(t, sr.bin, sr.paths), third)
	third.stop(t)
}

// A state database damaged under a following daemon so that bbolt panics
// (both meta pages overwritten) stops it with the reason, exit 1, instead
// of its next transaction waiting for ever on a lock the panic left held
// (it then ignored SIGTERM, and a scan asked of it never returned); the
// next start moves the file aside and rebuilds the maps from the logs.
func TestStateDamagedWhileFollowing(t *testing.T) {
	sr, data, first := followedRig(t)
	// Both meta pages overwritten, again and again as a failing disk
	// would (a commit under way when they are first overwritten writes
	// one of them back), and a line more in one log every time: a
	// transaction meets the damage.
	from := sr.feeds[0]
	first1 := from.data[:bytes.IndexByte(from.data, '\n')+1]
	stop := make(chan struct{})
	damaged := make(chan struct{})
	go func() {
		defer close(damaged)
		for {
			if err := scribble.Over(StatePath(data), 0, 2*4096); err != nil {
				t.Error(err)
				return
			}
			if lf, err := os.OpenFile(from.to, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				lf.Write(first1)
				lf.Close()
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	exitsWithFailure(t, first, 30*time.Second, "its state database was damaged")
	close(stop)
	<-damaged
	if log := first.log.String(); !strings.Contains(log, "the state database was damaged while in use") {
		t.Errorf("the daemon's log does not say why it stopped:\n%s", tailOf(log, 3000))
	}
	second := startDaemon(t, sr.bin, sr.home, data)
	defer func() {
		if second.cmd.ProcessState == nil {
			second.kill()
		}
	}()
	waitStore(t, data, expected(t, sr.bin, sr.paths), second)
	second.stop(t)
	if log := second.log.String(); !strings.Contains(log, "moved it aside") {
		t.Errorf("the next start did not move the damaged database aside:\n%s", tailOf(log, 3000))
	}
}

// A session that appears while the disk is full (its first lines wait on
// a failed commit, so no source of it is committed) is live in status,
// not missing from the table until the disk has room.
func TestNewSessionWaitingOnAFaultIsLive(t *testing.T) {
	sr := newScanRig(t, 1)
	var from *feed
	for _, f := range sr.feeds {
		if strings.Contains(f.to, "/.claude/projects/") && !strings.Contains(f.to, "/subagents/") {
			from = f
			break
		}
	}
	if from == nil {
		t.Skip("no Claude log in the rig")
	}
	old := strings.TrimSuffix(filepath.Base(from.to), ".jsonl")
	const id = "0e0e0e0e-0000-4000-8000-00000000a11e"
	fresh := &feed{to: filepath.Join(filepath.Dir(from.to), id+".jsonl"), data: bytes.ReplaceAll(from.data, []byte(old), []byte(id))}
	disk := smallDisk(t, "32m")
	data := filepath.Join(disk, "data")
	p := startDaemon(t, sr.bin, sr.home, data)
	defer func() {
		if p.cmd.ProcessState == nil {
			p.kill()
		}
	}()
	waitStore(t, data, expected(t, sr.bin, sr.paths), p)
	filler := fillDisk(t, disk)
	fresh.write(t, len(fresh.data))
	st := waitingStatus(t, sr, data)
	os.Remove(filler)
	live := -1
	for _, a := range st.Agents {
		if a.Agent == "claude" {
			live = a.Live
		}
	}
	if st.Uncommitted == 0 || live != 1 {
		t.Fatalf("a new session waiting on a failed commit: %d logs waiting, claude live %d, want 1\n%s", st.Uncommitted, live, tailOf(p.log.String(), 2000))
	}
	waitStore(t, data, expected(t, sr.bin, append(sr.paths, fresh.to)), p)
	p.stop(t)
}

// A scan or a flush asked of a daemon whose commits fail must not report
// success: the maps it writes do not hold the lines that wait. Each says
// how many logs wait and exits 1; flush ID says its session's map could
// not be written with its latest lines. Once the state can be written,
// the maps come as ever.
func TestRequestsWhileCommitsFail(t *testing.T) {
	sr := newScanRig(t, 2)
	data := filepath.Join(t.TempDir(), "data")
	p := startDaemon(t, sr.bin, sr.home, data)
	defer func() {
		if p.cmd.ProcessState == nil {
			p.kill()
		}
	}()
	waitStore(t, data, expected(t, sr.bin, sr.paths), p)
	immutable(t, StatePath(data), true)
	cleared := false
	clear := func() {
		if !cleared {
			cleared = true
			immutable(t, StatePath(data), false)
		}
	}
	defer clear()
	for _, f := range sr.feeds {
		f.write(t, len(f.data))
	}
	if st := waitingStatus(t, sr, data); st.Uncommitted == 0 {
		t.Fatalf("no lines wait to be committed: %+v\n%s", st, tailOf(p.log.String(), 3000))
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(sr.bin, append(args, "--data-dir", data)...)
		cmd.Env = testEnv(sr.home)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// A Claude session: every log of the rig has more lines now, and a
	// Claude session's own log is one of them.
	list, err := run("list", "--agent", "claude", "--json")
	var entries []Entry
	if err != nil || json.Unmarshal([]byte(list), &entries) != nil || len(entries) == 0 {
		t.Fatalf("list: %v\n%s", err, list)
	}
	id := entries[0].ID
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scan"}, "wait to be committed to the state database"},
		{[]string{"flush", "--all"}, "wait to be committed to the state database"},
		{[]string{"flush", id}, "could not be written with its latest lines"},
	} {
		out, err := run(c.args...)
		t.Logf("agentmap %s: %v\n%s", strings.Join(c.args, " "), err, out)
		if err == nil || !strings.Contains(out, c.want) || strings.Contains(out, "up to date") || strings.Contains(out, "flushed ") {
			t.Errorf("agentmap %s while commits fail: %v, want exit 1 saying %q\n%s", strings.Join(c.args, " "), err, c.want, out)
		}
	}
	clear()
	waitStore(t, data, expected(t, sr.bin, sr.paths), p)
	p.stop(t)
}

// A first scan on a full disk fails as it creates state.db; the file it
// began holds nothing and is removed, so the next scan, with room, starts
// clean: no damage moved aside, and no repair for status to tell.
func TestFirstScanOnAFullDisk(t *testing.T) {
	disk := smallDisk(t, "8m")
	sr := newScanRig(t, 1)
	filler := fillDisk(t, disk)
	if out, err := sr.scan(disk); err == nil || !strings.Contains(out, "no space") {
		t.Fatalf("a first scan on a full disk: %v, want no space\n%s", err, tailOf(out, 2000))
	}
	if fi, err := os.Lstat(StatePath(disk)); err == nil {
		t.Errorf("the failed scan left %s (%d bytes)", StatePath(disk), fi.Size())
	}
	os.Remove(filler)
	out, err := sr.scan(disk)
	if err != nil || strings.Contains(out, "corrupt") || strings.Contains(out, "was empty") {
		t.Fatalf("the scan after the disk has room: %v\n%s", err, tailOf(out, 2000))
	}
	if m, _ := filepath.Glob(StatePath(disk) + ".corrupt-*"); len(m) > 0 {
		t.Errorf("moved aside: %v", m)
	}
	cmd := exec.Command(sr.bin, "status", "--no-service", "--data-dir", disk)
	cmd.Env = testEnv(sr.home)
	if st, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(st), "state:") {
		t.Errorf("status after a clean start: %v\n%s", err, st)
	}
}
