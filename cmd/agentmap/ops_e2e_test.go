package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/report"
	"github.com/agentmap/agentmap/state"
)

// opsBinary builds the real binary for the operator tests.
func opsBinary(t *testing.T, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the control socket is unix-only")
	}
	bin := filepath.Join(dir, "agentmap")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// opsHome is a temporary HOME with a git repo and a Claude log dir.
type opsHome struct {
	t    *testing.T
	bin  string
	home string
	env  []string
}

func newOpsHome(t *testing.T, bin string) *opsHome {
	home := t.TempDir()
	h := &opsHome{t: t, bin: bin, home: home}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
			"USERPROFILE", "LOCALAPPDATA", "APPDATA", "AGENTMAP_CONFIG":
			continue
		}
		h.env = append(h.env, kv)
	}
	h.env = append(h.env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	return h
}

// daemon starts `agentmap run` with args in the home, killed when the test
// ends, and returns its log.
func (h *opsHome) daemon(args ...string) *lockedBuffer {
	h.t.Helper()
	d := exec.Command(h.bin, append([]string{"run"}, args...)...)
	d.Env = h.env
	dlog := &lockedBuffer{}
	d.Stdout, d.Stderr = dlog, dlog
	if err := d.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		d.Process.Kill()
		d.Wait()
	})
	return dlog
}

func (h *opsHome) path(rel string) string { return filepath.Join(h.home, filepath.FromSlash(rel)) }

func (h *opsHome) run(args ...string) (int, string, string) {
	h.t.Helper()
	cmd := exec.Command(h.bin, args...)
	cmd.Env = h.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		h.t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

func (h *opsHome) must(args ...string) string {
	h.t.Helper()
	code, out, errb := h.run(args...)
	if code != 0 {
		h.t.Fatalf("agentmap %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errb)
	}
	return out
}

// daemonStatus is `status --json` of the home's data directory, decoded
// (the zero value when the command fails).
type daemonStatus struct {
	Running bool `json:"running"`
	daemon.Status
}

func (h *opsHome) status() (out daemonStatus) {
	h.t.Helper()
	if code, stdout, _ := h.run("status", "--json", "--no-service"); code == 0 {
		json.Unmarshal([]byte(stdout), &out)
	}
	return out
}

// claudeTurn is one user prompt and one Read of src/app.go, in Claude
// Code's log shape, for a session working in cwd.
func claudeTurn(session, cwd string, n int) string {
	ts := func(s int) string {
		return time.Date(2026, 5, 1, 10, n, s, 0, time.UTC).Format("2006-01-02T15:04:05.000Z")
	}
	id := func(p string) string { return fmt.Sprintf("%s%d", p, n) }
	common := fmt.Sprintf(`"cwd":%q,"sessionId":%q,"version":"2.1.100"`, cwd, session)
	return strings.Join([]string{
		fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"userType":"external",%s,"type":"user","message":{"role":"user","content":"a prompt"},"uuid":%q,"timestamp":%q}`,
			common, id("u"), ts(1)),
		fmt.Sprintf(`{"parentUuid":%q,"isSidechain":false,"type":"assistant","requestId":%q,"message":{"id":%q,"model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Read","input":{"file_path":%q}}],"stop_reason":"tool_use","usage":{"input_tokens":6,"output_tokens":20,"cache_read_input_tokens":100,"cache_creation_input_tokens":0}},"uuid":%q,"timestamp":%q,%s}`,
			id("u"), id("req"), id("msg"), id("toolu"), filepath.Join(cwd, "src", "app.go"), id("a"), ts(3), common),
		fmt.Sprintf(`{"parentUuid":%q,"isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":"package main"}]},"uuid":%q,"timestamp":%q,%s}`,
			id("a"), id("toolu"), id("r"), ts(4), common),
	}, "\n") + "\n"
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// lockedBuffer collects a daemon's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitFor(t *testing.T, what string, log fmt.Stringer, ok func() bool) {
	t.Helper()
	waitUntil(t, 20*time.Second, what, log, ok)
}

// waitUntil is waitFor with its own deadline.
func waitUntil(t *testing.T, limit time.Duration, what string, log fmt.Stringer, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\ndaemon log:\n%s", what, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestOperatorCommandsEndToEnd(t *testing.T) {
	bin := opsBinary(t, t.TempDir())
	h := newOpsHome(t, bin)
	cfg := h.path(".config/agentmap/config.toml")

	// config init, check; a broken file is rejected with key and line.
	h.must("config", "init")
	if out := h.must("config", "check"); !strings.Contains(out, cfg+": ok") {
		t.Fatalf("config check: %s", out)
	}
	bad := h.path("bad.toml")
	os.WriteFile(bad, []byte("version = 1\n\n[maps]\npath_mode = \"sideways\"\n"), 0o600)
	code, _, errb := h.run("config", "check", "--config", bad)
	if code != exitFailure || !strings.Contains(errb, bad+":4: maps.path_mode") {
		t.Fatalf("bad config: exit %d\n%s", code, errb)
	}
	if code, _, errb := h.run("run", "--config", bad); code != exitFailure || !strings.Contains(errb, "maps.path_mode") {
		t.Fatalf("run with a bad config: exit %d\n%s", code, errb)
	}

	// A repo, a session in it and one in an excluded directory.
	repo := h.path("work/proj")
	secret := h.path("secret/client")
	for _, d := range []string{repo + "/.git", secret + "/.git"} {
		os.MkdirAll(d, 0o700)
	}
	const sid = "0a1b2c3d-0000-4000-8000-00000000e2e1"
	const hidden = "0a1b2c3d-0000-4000-8000-00000000e2e2"
	logPath := h.path(".claude/projects/-proj/" + sid + ".jsonl")
	appendFile(t, logPath, claudeTurn(sid, repo, 0))
	appendFile(t, h.path(".claude/projects/-secret/"+hidden+".jsonl"), claudeTurn(hidden, secret, 0))
	data := h.path(".local/share/agentmap")
	writeConfig := func(mode string) {
		t.Helper()
		body := fmt.Sprintf(`version = 1
[maps]
path_mode = %q
[flush]
idle = "1h"
[watch]
debounce = "20ms"
rescan = "1s"
[agents.codex]
enabled = false
[agents.cursor]
enabled = false
[privacy]
exclude = ["~/secret"]
`, mode)
		// Whole or not at all: the daemon polls the file.
		tmp := cfg + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig("relative")

	d := exec.Command(bin, "run", "--config-poll", "50ms")
	d.Env = h.env
	var dlog lockedBuffer
	d.Stdout, d.Stderr = &dlog, &dlog
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			d.Process.Kill()
			d.Wait()
		}
	}()

	status := h.status
	waitFor(t, "the daemon to follow the log", &dlog, func() bool {
		st := status()
		for _, a := range st.Agents {
			if a.Agent == "claude" && a.Files == 1 && a.Live == 1 {
				return st.Running && !st.CatchUp.Running && !st.CatchUp.Finished.IsZero()
			}
		}
		return false
	})
	if fi, err := os.Stat(daemon.ControlPath(data)); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("control socket: %v %v", fi, err)
	}
	if out := h.must("status", "--no-service"); !strings.Contains(out, "running (answering on") || !strings.Contains(out, "catch-up:   done") {
		t.Fatalf("status:\n%s", out)
	}
	// A healthy machine: doctor is green, the daemon run by hand standing
	// in for the service (no Gemini CLI here, Claude Code's default cleanup).
	if code, out, errb := h.run("doctor"); code != exitOK || !strings.HasSuffix(out, "all good: no warnings, no failures\n") {
		t.Fatalf("doctor on a healthy machine: exit %d\n%s%s", code, out, errb)
	}
	if st := status(); st.Excluded != 1 {
		t.Fatalf("excluded logs %d, want 1", st.Excluded)
	}

	// Nothing is quiet for an hour: flush writes the map now.
	if out := h.must("flush", "--all"); !strings.Contains(out, "flushed claude/"+sid) || strings.Contains(out, hidden) {
		t.Fatalf("flush --all:\n%s", out)
	}
	if out := h.must("flush", "--all"); !strings.Contains(out, "up to date") {
		t.Fatalf("flush --all again:\n%s", out)
	}
	// Named, it is written again all the same (with the map options in effect).
	if out := h.must("flush", sid[:12]); !strings.Contains(out, "flushed claude/"+sid) {
		t.Fatalf("flush ID up to date:\n%s", out)
	}
	// scan while the daemon runs: the daemon catches up and flushes.
	appendFile(t, logPath, claudeTurn(sid, repo, 10))
	code, out, errb := h.run("scan")
	if code != exitOK || !strings.Contains(errb, "scan: done by the daemon: 2 logs checked") ||
		!strings.Contains(errb, "1 map written, 1 session") || !strings.Contains(out, "maps in "+daemon.MapsDir(data)) {
		t.Fatalf("scan with a daemon: exit %d\n%s%s", code, out, errb)
	}
	if code, _, errb := h.run("flush", "nonexistent"); code != exitFailure ||
		!strings.Contains(errb, "agentmap flush: nonexistent: no session the daemon follows matches that id (agentmap list shows them)") {
		t.Fatalf("flush of an unknown id with a daemon: exit %d\n%s", code, errb)
	}
	// Nothing is live: an id that names no map gets no hint to flush it.
	if code, _, errb := h.run("show", "zzzz"); code != exitFailure || !strings.Contains(errb, "no session in the store matches that id") || strings.Contains(errb, "flush") {
		t.Fatalf("show of an unknown id, nothing live: exit %d\n%s", code, errb)
	}
	list := h.must("list")
	if !regexp.MustCompile(sid+`\s+claude\s+proj\s+2026-05-01`).MatchString(list) || strings.Contains(list, hidden) {
		t.Fatalf("list:\n%s", list)
	}
	if out := h.must("list", "--agent", "codex"); !strings.Contains(out, "no sessions") {
		t.Fatalf("list --agent codex:\n%s", out)
	}
	if out := h.must("list", "--agent", "claude-code"); !strings.Contains(out, sid) { // as the maps and the report name it
		t.Fatalf("list --agent claude-code:\n%s", out)
	}
	// Completion asks the running daemon, which holds the state, for the ids.
	if out := h.must("__complete", "show", sid[:8]); !strings.HasPrefix(out, sid+"\tclaude, proj, ") {
		t.Fatalf("completion of show's id with a daemon:\n%s", out)
	}
	show := h.must("show", sid[:10])
	for _, want := range []string{"session   " + sid, "paths     relative", "proj: src/app.go", "files most touched"} {
		if !strings.Contains(show, want) {
			t.Fatalf("show lacks %q:\n%s", want, show)
		}
	}
	mapPath := filepath.Join(daemon.MapsDir(data), "claude", "2026", "05", sid+".json.gz")
	build := func(extra ...string) []byte {
		t.Helper()
		out := filepath.Join(t.TempDir(), "m.json.gz")
		h.must(append(append([]string{"build", "-o", out}, extra...), logPath)...)
		b, _ := os.ReadFile(out)
		return b
	}
	stored := func() []byte { b, _ := os.ReadFile(mapPath); return b }
	if !bytes.Equal(stored(), build()) {
		t.Fatal("the daemon's map differs from agentmap build's")
	}
	// usage and report read the store as the running daemon lists it (over
	// its control socket: it holds the state database).
	maps, errs := report.Collect(t.Context(), report.Files{Root: daemon.MapsDir(data), Paths: []string{mapPath[len(daemon.MapsDir(data))+1:]}}, report.Filter{})
	if len(errs) > 0 || len(maps) != 1 {
		t.Fatalf("the daemon's map: %v", errs)
	}
	var tab report.UsageTable
	if err := json.Unmarshal([]byte(h.must("usage", "session", "--json")), &tab); err != nil || len(tab.Rows) != 1 || tab.Rows[0].Key != sid ||
		tab.Totals.Total != maps[0].Totals.Tokens {
		t.Fatalf("usage with the daemon running: %v %+v, the map's tokens %d", err, tab, maps[0].Totals.Tokens)
	}
	reportFile := h.path("report.html")
	h.must("report", "-o", reportFile)
	page, _ := os.ReadFile(reportFile)
	if docs, err := report.Unpack(page); err != nil || len(docs) != 2 || !bytes.Contains(docs[0], []byte(sid)) {
		t.Fatalf("report with the daemon running: %d documents, %v", len(docs), err)
	}

	// path_mode changes while running: the next map written uses it.
	writeConfig("hashed")
	waitFor(t, "the reload", &dlog, func() bool { return strings.Count(dlog.String(), "configuration reloaded") >= 1 })
	appendFile(t, logPath, claudeTurn(sid, repo, 1))
	waitFor(t, "the new turn", &dlog, func() bool {
		code, out, _ := h.run("list", "--json")
		return code == 0 && strings.Contains(out, `"live": true`)
	})
	// The daemon may have read the appended turn in more than one wake-up
	// (a read can overlap the write): flush until its map has caught up.
	// A daemon that never writes the right map still fails here.
	key := h.path(".local/share/agentmap/hash.key")
	waitFor(t, "the hashed map to catch up", &dlog, func() bool {
		h.must("flush", sid)
		_, err := os.Stat(key)
		return err == nil && bytes.Equal(stored(), build("--path-mode", "hashed", "--hash-key-file", key))
	})
	if out := h.must("show", "--json", sid); !strings.Contains(out, `"pathMode": "hashed"`) {
		t.Fatalf("after the change of path_mode:\n%s", out)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("hash key: %v %v", fi, err)
	}

	// A broken file is reported with key and line; the config in effect
	// stays.
	os.WriteFile(cfg, []byte("version = 1\n[maps]\npath_mode = 7\n"), 0o600)
	waitFor(t, "the rejected reload", &dlog, func() bool {
		return strings.Contains(dlog.String(), "line=3 key=maps.path_mode")
	})
	waitFor(t, "status to show the rejected reload", &dlog, func() bool {
		out := h.must("status", "--no-service", "--data-dir", data)
		return strings.Contains(out, "config:     reload of "+cfg+" rejected at ") &&
			strings.Contains(out, cfg+":3: maps.path_mode")
	})
	appendFile(t, logPath, claudeTurn(sid, repo, 2))
	// list warns of it and reads the data directory the file names (here
	// none: the default one).
	if code, _, errb := h.run("list"); code != exitOK || !strings.Contains(errb, ":3: maps.path_mode") || !strings.Contains(errb, "warning: "+cfg+" has 1 problem(s)") {
		t.Fatalf("list with a broken config: exit %d\n%s", code, errb)
	}
	waitFor(t, "the third turn", &dlog, func() bool {
		code, out, _ := h.run("list", "--json", "--data-dir", data)
		return code == 0 && strings.Contains(out, `"live": true`)
	})
	// The broken file must not change the map options: the map still
	// converges to build's hashed map (a relative map never would).
	waitFor(t, "the map after a rejected reload to match the hashed build", &dlog, func() bool {
		h.must("flush", "--all", "--data-dir", data)
		return bytes.Equal(stored(), build("--path-mode", "hashed", "--hash-key-file", key))
	})

	// Stopped: the commands read the state directly.
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, &dlog)
	}
	stopped = true
	if _, err := os.Stat(daemon.ControlPath(data)); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	if out := h.must("status", "--no-service", "--data-dir", data); !strings.Contains(out, "not running (read from") {
		t.Fatalf("status without daemon:\n%s", out)
	}
	if out := h.must("list", "--data-dir", data); !strings.Contains(out, sid) {
		t.Fatalf("list without daemon:\n%s", out)
	}

	// The excluded session left nothing in the state or the store.
	db, err := state.OpenReadOnly(daemon.StatePath(data))
	if err != nil {
		t.Fatal(err)
	}
	srcs, sessions, err := db.Load()
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		if strings.Contains(s.Path, "secret") || strings.Contains(s.Session, hidden) {
			t.Fatalf("excluded log in the state: %+v", s)
		}
	}
	for _, s := range sessions {
		if s.NativeID == hidden {
			t.Fatalf("excluded session in the state: %+v", s)
		}
	}
	raw, err := state.SearchableBytes(daemon.StatePath(data))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(hidden)) || bytes.Contains(raw, []byte("secret")) {
		t.Fatal("the state file holds the excluded session")
	}
}

// A config file removed under a running daemon is not taken for the
// defaults, which would drop privacy.exclude and map the sessions it keeps
// out: the config in effect stays, the daemon says so in its log and in
// status, and a file put back is read again.
func TestConfigFileRemovedKeepsTheConfigInEffect(t *testing.T) {
	bin := opsBinary(t, t.TempDir())
	h := newOpsHome(t, bin)
	cfg := h.path(".config/agentmap/config.toml")
	secret := h.path("secret/client")
	os.MkdirAll(secret+"/.git", 0o700)
	const hidden = "0a1b2c3d-0000-4000-8000-00000000e2f1"
	hiddenLog := h.path(".claude/projects/-secret/" + hidden + ".jsonl")
	appendFile(t, hiddenLog, claudeTurn(hidden, secret, 0))
	appendFile(t, cfg, "version = 1\n[flush]\nidle = \"1h\"\n[watch]\ndebounce = \"20ms\"\nrescan = \"1s\"\n[agents.codex]\nenabled = false\n[agents.cursor]\nenabled = false\n[privacy]\nexclude = [\"~/secret\"]\n")
	dlog := h.daemon("--config-poll", "50ms")
	status := h.status
	waitFor(t, "the daemon to keep the log out", dlog, func() bool {
		st := status()
		return st.Running && st.Excluded == 1 && !st.CatchUp.Finished.IsZero()
	})

	moved := cfg + ".bak"
	if err := os.Rename(cfg, moved); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removal to be reported", dlog, func() bool {
		st := status()
		return st.ConfigError != nil && strings.Contains(strings.Join(st.ConfigError.Problems, " "), "config file is gone")
	})
	// The log grows; were the defaults in effect, the rescan would follow
	// it and flush --all would map it.
	appendFile(t, hiddenLog, claudeTurn(hidden, secret, 5))
	time.Sleep(3 * time.Second)
	h.must("flush", "--all")
	if st := status(); st.Excluded != 1 {
		t.Errorf("excluded logs %d after the config file was removed, want 1", st.Excluded)
	}
	if out := h.must("list"); strings.Contains(out, hidden) {
		t.Fatalf("the excluded session was mapped after the config file was removed:\n%s\ndaemon log:\n%s", out, dlog.String())
	}
	if !strings.Contains(dlog.String(), "config file removed; keeping the one in effect") {
		t.Errorf("the daemon's log does not say the file was removed:\n%s", dlog.String())
	}
	if out := h.must("status", "--no-service"); !strings.Contains(out, "config file is gone") {
		t.Errorf("status does not say the config file is gone:\n%s", out)
	}

	if err := os.Rename(moved, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the file put back to be read again", dlog, func() bool { return status().ConfigError == nil })
}
