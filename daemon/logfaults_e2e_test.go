//go:build unix

package daemon

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests here put logs in the awkward places and states users leave
// them in, and check that `scan` and `run` end with the maps `agentmap
// build` makes of the final files.

const (
	toolHeavy  = "claude/spotter__tool_heavy.jsonl"
	spotter    = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
	codexSmall = "codex/ocodex__rollout-2025-08-24T14-59-18-ab5bf9fa-f843-4f56-a109-0fc78f090893.jsonl"
)

// place copies a corpus file to path (creating its directories).
func place(t *testing.T, corpus, name, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpus, name))
	if err != nil {
		t.Skipf("corpus file %s: %v", name, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// claudeHome is a temporary home holding one real Claude transcript under
// the given session id, and the binary to run over it.
func claudeHome(t *testing.T, id string) (bin, home, path string, content []byte) {
	t.Helper()
	corpus := corpusDir(t)
	bin = buildBinary(t)
	home = t.TempDir()
	path = filepath.Join(home, ".claude", "projects", "-w", id+".jsonl")
	return bin, home, path, place(t, corpus, toolHeavy, path)
}

func linkDir(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

// runScan runs `agentmap scan` once over home.
func runScan(t *testing.T, bin, home, data string) string {
	t.Helper()
	cmd := exec.Command(bin, "scan", "--data-dir", data)
	cmd.Env = testEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	return string(out)
}

func sameAsBuild(t *testing.T, bin, data string, paths []string, what string) {
	t.Helper()
	want := expected(t, bin, paths)
	if diff := diffMaps(readMaps(t, filepath.Join(data, "maps")), want); len(diff) > 0 {
		t.Fatalf("%s: store differs from agentmap build: %v", what, diff)
	}
}

// ~/.claude a link to another disk, projects/ a link inside it, a project
// directory a link, Codex's sessions/ a link, and a loop: `scan` and `run`
// both map every session, each once.
func TestSymlinkedRootsMapped(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home, disk := t.TempDir(), t.TempDir()
	linkDir(t, filepath.Join(disk, "claude"), filepath.Join(home, ".claude"))
	linkDir(t, filepath.Join(disk, "projects"), filepath.Join(disk, "claude", "projects"))
	linkDir(t, filepath.Join(disk, "elsewhere", "w-b"), filepath.Join(disk, "projects", "-w-b"))
	linkDir(t, filepath.Join(disk, "projects"), filepath.Join(disk, "projects", "-loop"))
	linkDir(t, filepath.Join(disk, "codex-sessions"), filepath.Join(home, ".codex", "sessions"))
	const u1 = "11111111-2222-4333-8444-555555555555"
	a := filepath.Join(home, ".claude", "projects", "-w-a", u1+".jsonl")
	b := filepath.Join(home, ".claude", "projects", "-w-b", spotter+".jsonl")
	bSub := filepath.Join(home, ".claude", "projects", "-w-b", spotter, "subagents", "agent-aac57f5.jsonl")
	roll := filepath.Join(home, ".codex", "sessions", "2025", "08", "24", "rollout-2025-08-24T14-59-18-ab5bf9fa-f843-4f56-a109-0fc78f090893.jsonl")
	place(t, corpus, toolHeavy, a)
	place(t, corpus, "claude/spotter__"+spotter+".jsonl", b)
	place(t, corpus, "claude/spotter__"+spotter+"__subagents__agent-aac57f5.jsonl", bSub)
	rest := place(t, corpus, codexSmall, roll)
	half := len(rest) / 2
	for rest[half-1] != '\n' {
		half--
	}
	os.WriteFile(roll, rest[:half], 0o600)

	data := filepath.Join(t.TempDir(), "data")
	runScan(t, bin, home, data)
	sameAsBuild(t, bin, data, []string{a, b, roll}, "scan")

	data2 := filepath.Join(t.TempDir(), "data")
	p := startDaemon(t, bin, home, data2)
	defer p.stop(t)
	waitStore(t, data2, expected(t, bin, []string{a, b, roll}), p)
	wantFiles := map[string]int{"claude": 3, "codex": 1}
	st := settledStatus(t, bin, home, data2, func(st Status) bool {
		for _, as := range st.Agents {
			if as.Files != wantFiles[as.Agent] {
				return false
			}
		}
		return true
	})
	for _, as := range st.Agents {
		if want := wantFiles[as.Agent]; as.Files != want {
			t.Errorf("status: %s follows %d files, want %d", as.Agent, as.Files, want)
		}
	}
	// The rollout grows behind the link: the watch on the resolved
	// directory sees it.
	f, _ := os.OpenFile(roll, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(rest[half:])
	f.Close()
	waitStore(t, data2, expected(t, bin, []string{a, b, roll}), p)
}

// A log whose first line is garbage (a torn write at the top, a stray
// byte): `scan` and `build` both map its valid lines and count the bad
// one as skipped.
func TestGarbageFirstLine(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	const u1 = "22222222-3333-4444-8555-666666666666"
	claude := filepath.Join(home, ".claude", "projects", "-w", u1+".jsonl")
	roll := filepath.Join(home, ".codex", "sessions", "2025", "08", "24", "rollout-2025-08-24T14-59-18-ab5bf9fa-f843-4f56-a109-0fc78f090893.jsonl")
	for path, name := range map[string]string{claude: toolHeavy, roll: codexSmall} {
		b := place(t, corpus, name, path)
		os.WriteFile(path, append([]byte("\x00\x00garbage{\n"), b...), 0o600)
	}
	data := filepath.Join(t.TempDir(), "data")
	runScan(t, bin, home, data)
	out := t.TempDir()
	cmd := exec.Command(bin, "build", "-o", out, claude, roll)
	cmd.Env = testEnv(t.TempDir())
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build refuses a log with a garbage first line: %v\n%s", err, msg)
	}
	for _, p := range []string{claude, roll} {
		if !strings.Contains(string(msg), p+": 1 of ") {
			t.Errorf("build does not count the garbage line of %s as skipped:\n%s", p, msg)
		}
	}
	if diff := diffMaps(readMaps(t, filepath.Join(data, "maps")), readMaps(t, out)); len(diff) > 0 || len(readMaps(t, out)) != 2 {
		t.Fatalf("scan and build differ: %v", diff)
	}
	st := daemonStatus(t, bin, home, data) // no daemon: the offline status
	for _, as := range st.Agents {
		if as.Skipped != 1 {
			t.Errorf("status: %s skipped %d lines, want 1", as.Agent, as.Skipped)
		}
	}
}

// A log dated in the future (clock skew, a copy that kept its times) goes
// quiet like any other and is mapped, not held live until that date.
func TestFutureModTime(t *testing.T) {
	bin, home, p, _ := claudeHome(t, "33333333-4444-4555-8666-777777777777")
	future := time.Now().Add(72 * time.Hour)
	if err := os.Chtimes(p, future, future); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, bin, home, data)
	defer d.stop(t)
	waitStore(t, data, expected(t, bin, []string{p}), d)
	// The session must leave LIVE soon after its map, not in 72 h.
	st := settledStatus(t, bin, home, data, func(st Status) bool { return st.Agents[0].Live == 0 })
	if st.Agents[0].Live != 0 {
		t.Fatalf("status: %d sessions still live 10 s after the map was written", st.Agents[0].Live)
	}
}

// rewriteMiddle changes, in place and keeping the size, the token count
// nearest the middle of a log (well away from its head and its last
// bytes), so that its map changes.
func rewriteMiddle(t *testing.T, path string, digit byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte(`"output_tokens":`)
	best := -1
	for i := 0; ; {
		j := bytes.Index(b[i:], key)
		if j < 0 {
			break
		}
		at := i + j + len(key)
		if best < 0 || abs(at-len(b)/2) < abs(best-len(b)/2) {
			best = at
		}
		i = at
	}
	if best < 0 || best < 2048 || best > len(b)-2048 {
		t.Skip("no token count in the middle of the log")
	}
	for k := best; k < len(b) && b[k] >= '0' && b[k] <= '9'; k++ {
		b[k] = digit
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // a new file time, to the millisecond
	if _, err := f.WriteAt(b[best-64:best+64], int64(best-64)); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func abs(n int) int { return max(n, -n) }

// A rewrite in the middle of a log that keeps its size is noticed by a
// running daemon, and by a scan after one happened while nothing ran.
func TestSameSizeRewriteInTheMiddle(t *testing.T) {
	bin, home, p, _ := claudeHome(t, "44444444-5555-4666-8777-888888888888")
	data := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, bin, home, data)
	first := expected(t, bin, []string{p})
	waitStore(t, data, first, d)
	rewriteMiddle(t, p, '7')
	second := expected(t, bin, []string{p})
	if diffMaps(second, first) == nil {
		t.Fatal("the rewrite does not change the map")
	}
	waitStore(t, data, second, d)
	d.stop(t)

	rewriteMiddle(t, p, '3')
	runScan(t, bin, home, data)
	sameAsBuild(t, bin, data, []string{p}, "scan after a rewrite while stopped")
}

// A Claude transcript renamed to another uuid: the session follows the
// file name, as `agentmap build` routes it, in a running daemon and in a
// scan after a rename while nothing ran; the map of the old name goes.
func TestTranscriptRenamedToAnotherSession(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	const u1, u2, u3 = "55555555-6666-4777-8888-999999999991", "55555555-6666-4777-8888-999999999992",
		"55555555-6666-4777-8888-999999999993"
	dir := filepath.Join(home, ".claude", "projects", "-w")
	place(t, corpus, toolHeavy, filepath.Join(dir, u1+".jsonl"))
	data := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, bin, home, data)
	waitStore(t, data, expected(t, bin, []string{filepath.Join(dir, u1+".jsonl")}), d)
	if err := os.Rename(filepath.Join(dir, u1+".jsonl"), filepath.Join(dir, u2+".jsonl")); err != nil {
		t.Fatal(err)
	}
	want := expected(t, bin, []string{filepath.Join(dir, u2+".jsonl")})
	if _, ok := want[u2+".json.gz"]; !ok {
		t.Fatalf("build does not name the session after the file: %v", keys(want))
	}
	waitStore(t, data, want, d)
	d.stop(t)

	os.Rename(filepath.Join(dir, u2+".jsonl"), filepath.Join(dir, u3+".jsonl"))
	runScan(t, bin, home, data)
	sameAsBuild(t, bin, data, []string{filepath.Join(dir, u3+".jsonl")}, "scan after a rename while stopped")
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// asUser runs commands as a user that mode 000 stops: as root (who reads
// any file) the commands run as nobody (uid 65534) over a home it owns.
type asUser struct {
	cred *syscall.Credential
	bin  string
}

func newAsUser(t *testing.T, bin, base string) asUser {
	t.Helper()
	if os.Geteuid() != 0 {
		return asUser{bin: bin}
	}
	if runtime.GOOS != "linux" {
		t.Skip("running as root: a mode-000 log is readable, and no other user is set up here")
	}
	// The temporary directories are root's and closed: open the way down
	// to base, and give nobody its own copy of the binary.
	for d := base; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	own := filepath.Join(base, "bin", "agentmap")
	os.MkdirAll(filepath.Dir(own), 0o755)
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return asUser{cred: &syscall.Credential{Uid: 65534, Gid: 65534}, bin: own}
}

func (u asUser) command(home string, args ...string) *exec.Cmd {
	cmd := exec.Command(u.bin, args...)
	cmd.Env = testEnv(home)
	if u.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	}
	return cmd
}

// own gives the tree under dir to the user.
func (u asUser) own(t *testing.T, dir string) {
	t.Helper()
	if u.cred == nil {
		return
	}
	filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = os.Lchown(p, int(u.cred.Uid), int(u.cred.Gid))
		}
		if err != nil {
			t.Fatal(err)
		}
		return nil
	})
}

// waitStatus asks the daemon for its status, as the user, until ok says
// it shows what is awaited, and returns that status.
func (u asUser) waitStatus(t *testing.T, home, data string, d *proc, limit time.Duration, what string, ok func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		st := u.status(t, home, data)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for this: %s; status %+v\ndaemon log:\n%s", limit, what, st, tailOf(d.log.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startDaemon starts `agentmap run` as the user over home, with the
// short waits of the tests and the given rescan period.
func (u asUser) startDaemon(t *testing.T, home, data, rescan string) *proc {
	t.Helper()
	cmd := u.command(home, "run", "--data-dir", data, "--idle", "400ms", "--debounce", "20ms", "--rescan", rescan)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &proc{cmd, log}
}

func (u asUser) status(t *testing.T, home, data string) Status {
	t.Helper()
	// A daemon just started makes its data directory a moment later, and
	// status refuses a --data-dir that is not there: asked before, it
	// would fail rather than say what the daemon is doing.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(data); err == nil {
			break
		}
	}
	return statusOf(t, u.command(home, "status", "--json", "--no-service", "--data-dir", data))
}

// A log that cannot be read when it is found (mode 000) is tried again on
// a schedule, `status` says so (count, reason, next try), and once it can
// be read its map is the one `agentmap build` makes; a `scan` meanwhile
// says it could not read it.
func TestUnreadableLogRetried(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	base := t.TempDir()
	u := newAsUser(t, bin, base)
	home := filepath.Join(base, "home")
	const u1 = "66666666-7777-4888-8999-aaaaaaaaaaaa"
	p := filepath.Join(home, ".claude", "projects", "-w", u1+".jsonl")
	place(t, corpus, toolHeavy, p)
	u.own(t, home)
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(home, "data")

	out, err := u.command(home, "scan", "--data-dir", data).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "1 log could not be read") {
		t.Fatalf("scan over an unreadable log: %v\n%s", err, out)
	}

	d := u.startDaemon(t, home, data, "1s")
	defer d.stop(t)
	st := u.waitStatus(t, home, data, d, 30*time.Second, "status shows the unreadable log",
		func(st Status) bool { return st.Unreadable != nil })
	if st.Unreadable.Count != 1 || st.Unreadable.Reason != "permission denied" || st.Unreadable.RetryAt.IsZero() {
		t.Fatalf("status of the unreadable log: %+v", *st.Unreadable)
	}
	text, _ := u.command(home, "status", "--no-service", "--data-dir", data).CombinedOutput()
	if !strings.Contains(string(text), "retrying:   1 log cannot be read (permission denied; next try ") {
		t.Fatalf("status text lacks the unreadable log:\n%s", text)
	}
	time.Sleep(3 * time.Second) // a retry or two fail first
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	waitStore(t, data, expected(t, bin, []string{p}), d)
	if st := u.status(t, home, data); st.Unreadable != nil {
		t.Fatalf("status still shows an unreadable log: %+v", *st.Unreadable)
	}
}

// A directory under a root that cannot be listed (mode 000) is not passed
// over in silence: a `scan` ends with an error saying so and maps the rest;
// a following daemon counts it in `status`, keeps the records of the logs
// it knew there (not taken for deleted), and once the directory can be
// listed again reads what they gained, ending with the maps `agentmap
// build` makes of the final files.
func TestUnlistedDirectoryReported(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	base := t.TempDir()
	u := newAsUser(t, bin, base)
	home := filepath.Join(base, "home")
	const u1, u2 = "12121212-3434-4565-8787-909090909090", "23232323-4545-4676-8989-a0a0a0a0a0a0"
	open := filepath.Join(home, ".claude", "projects", "-w", u1+".jsonl")
	place(t, corpus, toolHeavy, open)
	closedDir := filepath.Join(home, ".claude", "projects", "-x")
	closed := filepath.Join(closedDir, u2+".jsonl")
	whole := place(t, corpus, toolHeavy, closed)
	parts := cuts(whole, 2)
	if err := os.WriteFile(closed, parts[0], 0o600); err != nil {
		t.Fatal(err)
	}
	u.own(t, home)
	data := filepath.Join(home, "data")

	// A scan meets the closed directory: an error, the rest mapped.
	if err := os.Chmod(closedDir, 0); err != nil {
		t.Fatal(err)
	}
	out, err := u.command(home, "scan", "--data-dir", data).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "1 log directory could not be listed") {
		t.Fatalf("scan over a directory it cannot list: %v\n%s", err, out)
	}
	if got := readMaps(t, filepath.Join(data, "maps")); len(got) != 1 {
		t.Fatalf("scan wrote %d maps, want the open directory's one", len(got))
	}
	os.Chmod(closedDir, 0o700)
	if out, err := u.command(home, "scan", "--data-dir", data).CombinedOutput(); err != nil {
		t.Fatalf("scan once the directory can be listed: %v\n%s", err, out)
	}

	// A following daemon: the directory closes while its log grows.
	d := u.startDaemon(t, home, data, "1s")
	defer d.stop(t)
	log := d.log
	waitStore(t, data, expected(t, bin, []string{open, closed}), d)
	// Opened before the directory closes: a user who is not root could
	// not open it after.
	f, err := os.OpenFile(closed, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closedDir, 0); err != nil {
		t.Fatal(err)
	}
	f.Write(parts[1])
	f.Close()
	st := u.waitStatus(t, home, data, d, 30*time.Second, "status shows the directory and its log",
		func(st Status) bool { return st.Unlisted != nil && st.Unreadable != nil })
	if st.Unlisted.Count != 1 || st.Unlisted.Reason != "permission denied" || st.Unreadable.Count != 1 {
		t.Fatalf("status: %+v, %+v", *st.Unlisted, *st.Unreadable)
	}
	text, _ := u.command(home, "status", "--no-service", "--data-dir", data).CombinedOutput()
	if !strings.Contains(string(text), "retrying:   1 log directory cannot be listed (permission denied") {
		t.Fatalf("status text lacks the directory:\n%s", text)
	}
	// A scan the daemon does for the command says so too, and the
	// directory stays counted after it.
	out, err = u.command(home, "scan", "--data-dir", data).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "scan: done by the daemon, with errors") ||
		!strings.Contains(string(out), "1 log directory could not be listed (see the daemon's log)") {
		t.Fatalf("scan through the daemon: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "agentmap scan: 1 log could not be read") {
		t.Fatalf("scan through the daemon does not name the log it could not read:\n%s", out)
	}
	if st := u.status(t, home, data); st.Unlisted == nil || st.Unlisted.Count != 1 {
		t.Fatalf("the daemon's scan forgot the directory: %+v", st.Unlisted)
	}
	if strings.Contains(log.String(), "file gone") {
		t.Fatalf("a log in the closed directory was taken for deleted:\n%s", tailOf(log.String(), 3000))
	}
	time.Sleep(2 * time.Second) // a rescan or two meet it closed
	os.Chmod(closedDir, 0o700)
	waitStore(t, data, expected(t, bin, []string{open, closed}), d)
	u.waitStatus(t, home, data, d, 30*time.Second, "the next rescan lists the directory again",
		func(st Status) bool { return st.Unlisted == nil && st.Unreadable == nil })
}

// A following daemon's first catch-up of more logs than a piece holds
// (4,096) is read in pieces; a directory it could not list, met in an
// early piece, stays counted after the last one: the pieces are cut from
// the walk after its directories were taken out (with a rescan a minute
// away, a directory forgotten there would not be reported again before).
func TestUnlistedDirectoryInAFirstCatchUpInPieces(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	base := t.TempDir()
	u := newAsUser(t, bin, base)
	home := filepath.Join(base, "home")
	projects := filepath.Join(home, ".claude", "projects")
	closedDir := filepath.Join(projects, "-a") // walked before the many logs
	place(t, corpus, toolHeavy, filepath.Join(closedDir, "34343434-5656-4787-8a8a-b0b0b0b0b0b0.jsonl"))
	many := filepath.Join(projects, "-z")
	if err := os.MkdirAll(many, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 4200 {
		sid := fmt.Sprintf("5e55aaaa-%04x-4000-8000-%012x", i, i)
		line := fmt.Sprintf(`{"type":"user","sessionId":%q,"uuid":"u%d","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/w","version":"2.1.0","message":{"role":"user","content":"hi"}}`+"\n", sid, i)
		if err := os.WriteFile(filepath.Join(many, sid+".jsonl"), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u.own(t, home)
	if err := os.Chmod(closedDir, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(closedDir, 0o700)
	data := filepath.Join(home, "data")
	d := u.startDaemon(t, home, data, "60s")
	defer d.stop(t)
	log := d.log
	st := u.waitStatus(t, home, data, d, 60*time.Second, "the first catch-up finishes",
		func(st Status) bool { return !st.CatchUp.Finished.IsZero() })
	if st.Unlisted == nil || st.Unlisted.Count != 1 {
		t.Fatalf("after a catch-up in pieces, status counts %+v directories that cannot be listed, want 1:\n%s",
			st.Unlisted, tailOf(log.String(), 3000))
	}
	if strings.Contains(log.String(), "can be listed again") {
		t.Fatalf("the closed directory was taken for listed again:\n%s", tailOf(log.String(), 3000))
	}
}

// cuts splits a log into n pieces at line ends.
func cuts(b []byte, n int) [][]byte {
	var out [][]byte
	for i := n; i > 1; i-- {
		at := len(b) / i
		for at < len(b) && b[at-1] != '\n' {
			at++
		}
		out, b = append(out, b[:at]), b[at:]
	}
	return append(out, b)
}

// copyTruncate rotates a log as logrotate's copytruncate does: the log is
// copied to log.1 (older copies moved up first), then cut to nothing, and
// the agent writes on.
func copyTruncate(t *testing.T, log string, rotated int, next []byte) {
	t.Helper()
	for n := rotated; n >= 1; n-- {
		if err := os.Rename(fmt.Sprintf("%s.%d", log, n), fmt.Sprintf("%s.%d", log, n+1)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log+".1", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(next)
	f.Close()
}

// After copy-truncate rotation the map keeps the whole session: it is
// `agentmap build` of the rotated copies and the log (in whatever order
// they are given), in a running daemon and in a scan after a rotation
// while nothing ran.
func TestCopyTruncateRotation(t *testing.T) {
	bin, home, log, content := claudeHome(t, "77777777-8888-4999-8aaa-bbbbbbbbbbbb")
	parts := cuts(content, 3)
	os.WriteFile(log, parts[0], 0o600)
	data := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, bin, home, data)
	waitStore(t, data, expected(t, bin, []string{log}), d)

	copyTruncate(t, log, 0, parts[1])
	want := expected(t, bin, []string{log, log + ".1"})
	if diff := diffMaps(want, expected(t, bin, []string{log})); len(diff) == 0 {
		t.Fatal("the rotated copy adds nothing to the map")
	}
	waitStore(t, data, want, d)
	d.stop(t)

	copyTruncate(t, log, 1, parts[2])
	runScan(t, bin, home, data)
	sameAsBuild(t, bin, data, []string{log + ".1", log, log + ".2"}, "scan after a rotation while stopped")
}

// Codex token totals that cannot be (negative, beyond int64) are clamped
// alike by the daemon and `agentmap build`, and the maps validate.
func TestCodexImpossibleTokenTotals(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	roll := filepath.Join(home, ".codex", "sessions", "2025", "11", "01", "rollout-2025-11-01T00-00-00-a392ff33-2928-4000-8000-000000000000.jsonl")
	b := place(t, corpus, "codex/agentv__a392ff332928-0__full.jsonl", roll)
	n := 0
	b = regexp.MustCompile(`"(input_tokens|output_tokens|cached_input_tokens)":[0-9]+`).ReplaceAllFunc(b, func(m []byte) []byte {
		n++
		key := m[:bytes.IndexByte(m, ':')+1]
		switch n % 3 {
		case 0:
			return append(key, "-6"...)
		case 1:
			return append(key, "99999999999999999999"...) // beyond int64: the line is refused
		}
		return append(key, "9223372036854775807"...)
	})
	if n < 6 {
		t.Skip("no token totals to damage")
	}
	os.WriteFile(roll, b, 0o600)
	data := filepath.Join(t.TempDir(), "data")
	runScan(t, bin, home, data)
	sameAsBuild(t, bin, data, []string{roll}, "scan of impossible token totals")
	maps, _ := filepath.Glob(filepath.Join(data, "maps", "codex", "*", "*", "*.json.gz"))
	if len(maps) != 1 {
		t.Fatalf("%d codex maps", len(maps))
	}
	if out, err := exec.Command(bin, append([]string{"validate"}, maps...)...).CombinedOutput(); err != nil {
		t.Fatalf("validate: %v\n%s", err, out)
	}
}
