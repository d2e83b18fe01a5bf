package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
)

// The end-to-end tests build the real binary and run it against a
// temporary HOME laid out like the agents' own directories, fed from the
// corpus (read in place, never copied into the repository).

func corpusDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.tsv")); err != nil {
		t.Skip("corpus not present at ../shared/corpus")
	}
	return dir
}

func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the end-to-end tests stop the daemon with POSIX signals")
	}
	bin := filepath.Join(t.TempDir(), "agentmap")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentmap")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// feed is one log to write into the temporary HOME: where from, where to.
type feed struct {
	from, to string
	data     []byte
	written  int
}

// layout maps a selection of corpus files into agent homes under home:
// Claude main + subagent files in projects/<slug>/, Codex rollouts under
// sessions/YYYY/MM/DD/, Cursor transcripts under projects/<slug>/agent-transcripts/.
func layout(t *testing.T, corpus, home string, maxSize int64) []*feed {
	t.Helper()
	var feeds []*feed
	add := func(from, to string) {
		fi, err := os.Stat(from)
		if err != nil || fi.Size() > maxSize {
			return
		}
		feeds = append(feeds, &feed{from: from, to: filepath.Join(home, filepath.FromSlash(to))})
	}
	const s = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
	add(filepath.Join(corpus, "claude", "spotter__"+s+".jsonl"), ".claude/projects/-w-app/"+s+".jsonl")
	add(filepath.Join(corpus, "claude", "spotter__"+s+"__subagents__agent-aac57f5.jsonl"),
		".claude/projects/-w-app/"+s+"/subagents/agent-aac57f5.jsonl")
	entries := func(agent string) []string {
		m, _ := filepath.Glob(filepath.Join(corpus, agent, "*.jsonl"))
		sort.Strings(m)
		return m
	}
	for i, f := range entries("claude") {
		if !strings.Contains(f, "spotter__ae4a") {
			add(f, fmt.Sprintf(".claude/projects/-w-app/f%d.jsonl", i))
		}
	}
	for i, f := range entries("codex") {
		add(f, fmt.Sprintf(".codex/sessions/2026/01/02/rollout-2026-01-02T00-00-00-%08d-0000-4000-8000-000000000000.jsonl", i))
	}
	for i, f := range entries("cursor") {
		u := fmt.Sprintf("%08d-1111-4111-8111-111111111111", i)
		add(f, ".cursor/projects/w-app/agent-transcripts/"+u+"/"+u+".jsonl")
	}
	for _, f := range feeds {
		var err error
		if f.data, err = os.ReadFile(f.from); err != nil {
			t.Fatal(err)
		}
	}
	return feeds
}

func (f *feed) write(t *testing.T, n int) {
	t.Helper()
	n = min(n, len(f.data)-f.written)
	if err := os.MkdirAll(filepath.Dir(f.to), 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(f.to, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(f.data[f.written : f.written+n]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.written += n
}

// env is a clean environment with HOME pointing at the temporary one.
func testEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
			"COPILOT_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "USERPROFILE="+home)
}

type proc struct {
	cmd *exec.Cmd
	log *syncBuffer
}

func startDaemon(t *testing.T, bin, home, data string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"run", "--data-dir", data, "--idle", "400ms", "--debounce", "20ms", "--rescan", "1s"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = testEnv(home)
	log := &syncBuffer{}
	cmd.Stderr, cmd.Stdout = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &proc{cmd, log}
}

func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

func (p *proc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("daemon exit: %v\n%s", err, p.log)
	}
}

// expected runs `agentmap build` over the complete files and returns the
// maps by file name.
func expected(t *testing.T, bin string, paths []string, extra ...string) map[string][]byte {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"build", "-o", out}, extra...)
	cmd := exec.Command(bin, append(args, paths...)...)
	cmd.Env = testEnv(t.TempDir())
	msg, _ := cmd.CombinedOutput() // a session the builder refuses fails both ways
	maps := readMaps(t, out)
	if len(maps) == 0 {
		t.Fatalf("agentmap build wrote no map:\n%s", msg)
	}
	return maps
}

func readMaps(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	maps := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json.gz") && !strings.HasPrefix(d.Name(), ".") {
			b, err := os.ReadFile(p)
			if err == nil {
				maps[d.Name()] = b
			}
		}
		return nil
	})
	return maps
}

// diffMaps lists what differs between the store and the expected maps.
func diffMaps(store, want map[string][]byte) []string {
	var diff []string
	for name, b := range want {
		got, ok := store[name]
		switch {
		case !ok:
			diff = append(diff, "missing "+name)
		case !bytes.Equal(got, b):
			diff = append(diff, "differs "+name)
		}
	}
	for name := range store {
		if _, ok := want[name]; !ok {
			diff = append(diff, "extra "+name)
		}
	}
	sort.Strings(diff)
	return diff
}

// waitStore waits until the store holds exactly the expected maps.
func waitStore(t *testing.T, data string, want map[string][]byte, p *proc) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		diff := diffMaps(readMaps(t, filepath.Join(data, "maps")), want)
		if len(diff) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("store differs from agentmap build: %v\ndaemon log:\n%s", diff, tailOf(p.log.String(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestCrashEquivalence appends corpus logs of all three agents in random
// chunks that split lines, SIGKILLs the daemon at random moments at least
// 30 times, and checks that the maps it ends with are byte-identical to
// `agentmap build` of the complete files.
func TestCrashEquivalence(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	feeds := layout(t, corpus, home, 4<<20)
	var total int
	for _, f := range feeds {
		total += len(f.data)
	}
	t.Logf("%d files, %.1f MB", len(feeds), float64(total)/1e6)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	rng = rand.New(rand.NewPCG(seed, 1))

	// Killed daemons that had committed something: kills that landed
	// mid-work, not only during start-up.
	busy := 0
	start := func() *proc { return startDaemon(t, bin, home, data, "--log-level", "debug") }
	kill := func(p *proc) {
		// A daemon that restarts into a large catch-up can take longer
		// than the random pause to reach its first commit; give it up to
		// two seconds so that the kills land mid-work, not in start-up.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) &&
			!strings.Contains(p.log.String(), "msg=committed"); {
			time.Sleep(20 * time.Millisecond)
		}
		p.kill()
		if strings.Contains(p.log.String(), "msg=committed") {
			busy++
		}
		if out := p.log.String(); strings.Contains(out, "moved it aside") || strings.Contains(out, "had damaged records") {
			t.Errorf("a kill damaged the state database:\n%s", tailOf(out, 2000))
		}
	}
	p := start()
	kills := 0
	chunks := 0
	const wantKills = 32
	perKill := max(1, (total/(24<<10))/wantKills)
	for {
		var open []*feed
		for _, f := range feeds {
			if f.written < len(f.data) {
				open = append(open, f)
			}
		}
		if len(open) == 0 {
			break
		}
		f := open[rng.IntN(len(open))]
		f.write(t, 1+rng.IntN(48<<10))
		chunks++
		if chunks%perKill == 0 {
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
			kill(p)
			kills++
			p = start()
		}
	}
	for kills < wantKills {
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		kill(p)
		kills++
		p = start()
	}
	t.Logf("%d chunks, %d kills, %d of them after the daemon had committed work", chunks, kills, busy)
	if busy < wantKills/2 {
		t.Errorf("only %d kills landed after the daemon had started working", busy)
	}
	var paths []string
	for _, f := range feeds {
		paths = append(paths, f.to)
	}
	want := expected(t, bin, paths)
	waitStore(t, data, want, p)
	p.stop(t)
	t.Logf("%d maps identical to agentmap build", len(want))
}

// TestFollowScenarios runs one daemon through what its files go through
// in life, checking the store against `agentmap build` after each step.
func TestFollowScenarios(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(corpus, name))
		if err != nil {
			t.Skipf("corpus file %s: %v", name, err)
		}
		return b
	}
	put := func(rel string, b []byte) string {
		p := filepath.Join(home, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	claudeA := read("claude/spotter__tool_heavy.jsonl")
	claudeB := read("claude/entire-cli__0382579310fc-0__full.jsonl")
	codexA := read("codex/agent-history__real_sessions_codex_session-01.jsonl")
	cursorA := read("cursor/test-repo__b8b6fbd5f55f-0__full.jsonl")

	// The Codex root does not exist yet when the daemon starts.
	a := put(".claude/projects/-w/a.jsonl", claudeA)
	p := startDaemon(t, bin, home, data, "--max-line", "200000")
	defer func() {
		if p.cmd.ProcessState == nil {
			p.kill()
		}
	}()
	all := []string{a}
	want := expected(t, bin, all)
	waitStore(t, data, want, p)

	roll := put(".codex/sessions/2026/02/03/rollout-2026-02-03T10-00-00-0aaaaaaa-0000-4000-8000-000000000000.jsonl", codexA)
	cur := put(".cursor/projects/w/agent-transcripts/0bbbbbbb-0000-4000-8000-000000000000/0bbbbbbb-0000-4000-8000-000000000000.jsonl", cursorA)
	all = append(all, roll, cur)
	want = expected(t, bin, all)
	waitStore(t, data, want, p)

	// Garbage and a line over --max-line mixed into a live log.
	f, _ := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("not json at all\n\x00\x01\xff\n{\"type\":\n")
	f.Write(append(append([]byte(`{"type":"user","pad":"`), bytes.Repeat([]byte("x"), 300000)...), `"}`+"\n"...))
	f.Write(claudeB)
	f.Close()
	// `agentmap build` has no line cap option: its expectation is built
	// from a copy without the line the daemon must skip.
	aCut := cutLine(t, a, 300000)
	want = expected(t, bin, []string{aCut, roll, cur})
	waitStore(t, data, want, p)

	// Renamed into archived_sessions/: followed, not read again.
	archived := filepath.Join(home, ".codex", "archived_sessions", filepath.Base(roll))
	os.MkdirAll(filepath.Dir(archived), 0o700)
	if err := os.Rename(roll, archived); err != nil {
		t.Fatal(err)
	}
	waitStore(t, data, want, p)

	// Deleted after capture: the map stays.
	os.Remove(cur)
	time.Sleep(300 * time.Millisecond)
	waitStore(t, data, want, p)
	p.stop(t)

	// While stopped: a log truncated and regrown with other content, and
	// another replaced under the same name.
	os.WriteFile(a, claudeB, 0o600)
	tmp := archived + ".tmp"
	os.WriteFile(tmp, append(append([]byte{}, codexA...), codexA[:len(codexA)/2]...), 0o600)
	os.Rename(tmp, archived)
	// The store is unwritable when the daemon comes back (a file where the
	// agent's directory goes blocks even root).
	os.RemoveAll(filepath.Join(data, "maps", "claude"))
	os.WriteFile(filepath.Join(data, "maps", "claude"), nil, 0o600)
	p = startDaemon(t, bin, home, data, "--max-line", "200000")
	time.Sleep(1500 * time.Millisecond)
	if !strings.Contains(p.log.String(), "cannot write the map") {
		t.Errorf("no write failure logged:\n%s", p.log)
	}
	os.Remove(filepath.Join(data, "maps", "claude"))
	want = expected(t, bin, []string{a, archived})
	// The deleted transcript keeps its map from before.
	old := readMaps(t, filepath.Join(data, "maps", "cursor"))
	for k, v := range old {
		want[k] = v
	}
	waitStore(t, data, want, p)
	p.stop(t)
	if strings.Contains(p.log.String(), "already running") {
		t.Error("state lock not released between runs")
	}
}

// cutLine copies a log (same base name, in a fresh dir) without its lines
// longer than n bytes.
func cutLine(t *testing.T, path string, n int) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) <= n {
			out = append(out, l...)
		}
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(dst, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// A second daemon on the same data dir fails at once with a clear message.
func TestSecondDaemonRefused(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	p := startDaemon(t, bin, home, data)
	defer p.stop(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(StatePath(data)); err == nil && strings.Contains(p.log.String(), "started") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not start:\n%s", p.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--data-dir", data)
	cmd.Env = testEnv(home)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "agentmap is already running ("+filepath.Join(data, LockName)+" is locked, by process "+strconv.Itoa(p.cmd.Process.Pid)+")") {
		t.Fatalf("second daemon: %v\n%s", err, out)
	}
}

// A real 100 MB line (over the default 64 MiB cap) is skipped and counted
// with bounded memory, and the rest of the log is read as if it were not
// there.
func TestHundredMegabyteLine(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	src, err := os.ReadFile(filepath.Join(corpus, "claude", "spotter__tool_heavy.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	p := filepath.Join(home, ".claude", "projects", "-w", "big.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o700)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	half := bytes.Index(src[len(src)/2:], []byte("\n")) + len(src)/2 + 1
	f.Write(src[:half])
	f.WriteString(`{"type":"user","message":{"role":"user","content":"`)
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for i := 0; i < 100; i++ {
		f.Write(chunk)
	}
	f.WriteString("\"}}\n")
	f.Write(src[half:])
	f.Close()
	cmd := exec.Command(bin, "scan", "--data-dir", data)
	cmd.Env = testEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "lines over the size cap skipped") {
		t.Errorf("the skipped line is not reported:\n%s", out)
	}
	if rss, ok := maxRSSKB(cmd.ProcessState); ok {
		t.Logf("max RSS %d MB", rss/1024)
		if rss > 400<<10 {
			t.Errorf("max RSS %d MB: the line was held in memory", rss/1024)
		}
	}
	want := expected(t, bin, []string{cutLine(t, p, 64<<20)})
	if diff := diffMaps(readMaps(t, filepath.Join(data, "maps")), want); len(diff) > 0 {
		t.Fatalf("store differs from agentmap build without the line: %v", diff)
	}
}

// A corrupt state database is moved aside, loudly, and everything is
// rebuilt from the logs; damage to one record costs its logs a re-read.
// Either way the maps come out the same, and scan exits 0.
func TestCorruptStateRebuilt(t *testing.T) {
	sr := newScanRig(t, 1)
	base := filepath.Join(t.TempDir(), "data")
	scan := func(data string) string {
		out, err := sr.scan(data)
		if err != nil {
			t.Fatalf("scan: %v\n%s", err, out)
		}
		return out
	}
	scan(base)
	want := expected(t, sr.bin, sr.paths)
	clean, _ := os.ReadFile(StatePath(base))
	batch := bytes.Index(clean[4*4096:], []byte(`[{"`)) + 4*4096
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		aside  bool
	}{
		{"garbage", func([]byte) []byte { return bytes.Repeat([]byte("garbage!"), 4096) }, true},
		{"cut to 8192 bytes", func(b []byte) []byte { return b[:8192] }, true},
		{"cut to 16 pages", func(b []byte) []byte { return b[:16*4096] }, true},
		{"one data page overwritten", func(b []byte) []byte {
			copy(b[batch/4096*4096:], bytes.Repeat([]byte{0xA5}, 4096))
			return b
		}, false},
		{"7 bytes of an event batch", func(b []byte) []byte { copy(b[batch+20:], "GARBAGE"); return b }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			copyTree(t, base, data)
			if err := os.WriteFile(StatePath(data), tc.damage(append([]byte(nil), clean...)), 0o600); err != nil {
				t.Fatal(err)
			}
			out := scan(data)
			if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "state") {
				t.Errorf("no loud error about the damaged state:\n%s", out)
			}
			if m, _ := filepath.Glob(StatePath(data) + ".corrupt-*"); tc.aside && len(m) != 1 {
				t.Errorf("corrupt state not moved aside: %v", m)
			}
			if strings.Contains(out, "goroutine ") {
				t.Errorf("panic:\n%s", out)
			}
			if diff := diffMaps(readMaps(t, filepath.Join(data, "maps")), want); len(diff) > 0 {
				t.Fatalf("maps after the repair differ from agentmap build: %v\n%s", diff, out)
			}
			// And the next run is a plain one.
			if out := scan(data); strings.Contains(out, "level=ERROR") {
				t.Errorf("second scan still finds damage:\n%s", out)
			}
			// A status after both, with no daemon, still tells the
			// repair the first scan made, and when.
			db, err := state.Open(StatePath(data), nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := OfflineStatus(db, data)
			db.Close()
			if r := st.State; err != nil || r == nil || r.By != "scan" || !r.Earlier || time.Since(r.At) > time.Hour ||
				(tc.aside && (r.Aside == "" || r.Reason == "")) || (!tc.aside && r.Aside == "" && r.Records == 0 && r.Reason == "") {
				t.Errorf("status after the repairing scan: %+v %v", r, err)
			}
		})
	}
}

// Nothing of what a log says reaches the state database, the maps or the
// daemon's log, even at debug level and on the error paths.
func TestNoContentLeaves(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	const canary = "CANARYd41d8cd98f"
	sid := "5a1e0000-0000-4000-8000-000000000001"
	ts := func(s int) string { return fmt.Sprintf("2026-03-01T10:00:%02d.000Z", s) }
	lines := []string{
		fmt.Sprintf(`{"type":"user","sessionId":%q,"uuid":"u1","timestamp":%q,"cwd":"/tmp/work","version":"2.1.0","message":{"role":"user","content":"please %s"}}`, sid, ts(0), canary),
		fmt.Sprintf(`{"type":"assistant","sessionId":%q,"uuid":"a1","timestamp":%q,"requestId":"r1","message":{"id":"m1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"sure %s"},{"type":"thinking","thinking":"%s"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo %s > /tmp/%s.txt","description":"%s"}}],"usage":{"input_tokens":3,"output_tokens":4}}}`, sid, ts(1), canary, canary, canary, canary, canary),
		fmt.Sprintf(`{"type":"user","sessionId":%q,"uuid":"u2","timestamp":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"%s","is_error":true}]},"toolUseResult":"Error: %s"}`, sid, ts(2), canary, canary),
		`{"type":"user","broken ` + canary,
		`{"type":"user","message":{"content":"` + strings.Repeat(canary, 2000) + `"}}`,
		`{"type":"user","sessionId":"` + sid + `","message":{"role":"user","content":"` + canary,
	}
	p := filepath.Join(home, ".claude", "projects", "-tmp-"+canary, sid+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600)
	cmd := exec.Command(bin, "scan", "--data-dir", data, "--log-level", "debug", "--max-line", "10000")
	cmd.Env = testEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	// The log names the file (its own path, which holds the project slug)
	// but never what is in it.
	logText := strings.ReplaceAll(string(out), p, "<log>")
	logText = strings.ReplaceAll(logText, sid, "<sid>")
	if strings.Contains(logText, canary) {
		t.Errorf("content in the daemon's log:\n%s", logText)
	}
	db, err := state.SearchableBytes(StatePath(data))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(db, []byte(canary)); n > bytes.Count(db, []byte(p)) {
		t.Errorf("content in the state database (%d occurrences beyond the file's path)", n)
	}
	maps := readMaps(t, filepath.Join(data, "maps"))
	if len(maps) != 1 {
		t.Fatalf("%d maps", len(maps))
	}
	for name, gz := range maps {
		cmd := exec.Command("gzip", "-dc")
		cmd.Stdin = bytes.NewReader(gz)
		raw, err := cmd.Output()
		if err != nil {
			t.Skipf("gzip: %v", err)
		}
		if bytes.Contains(raw, []byte(canary)) {
			t.Errorf("content in map %s", name)
		}
	}
}

// Cursor's databases are read read-only, one map per conversation, the same
// as `agentmap build` of the database; an unchanged database is not read
// again.
func TestCursorDatabases(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	var paths []string
	for from, to := range map[string]string{
		"cursor/CursorSync__globalStorage_state.vscdb":         ".config/Cursor/User/globalStorage/state.vscdb",
		"cursor/cursor-history__state.vscdb":                   ".config/Cursor/User/workspaceStorage/abc/state.vscdb",
		"cursor/agent-sessions__Fixtures_Cursor_test-store.db": ".cursor/chats/0123abcd/5e55a000-0000-4000-8000-000000000000/store.db",
	} {
		b, err := os.ReadFile(filepath.Join(corpus, from))
		if err != nil {
			t.Skip(err)
		}
		p := filepath.Join(home, filepath.FromSlash(to))
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, b, 0o600)
		paths = append(paths, p)
	}
	want := expected(t, bin, paths)
	cmd := exec.Command(bin, "scan", "--data-dir", data)
	cmd.Env = testEnv(home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	if diff := diffMaps(readMaps(t, filepath.Join(data, "maps")), want); len(diff) > 0 {
		t.Fatalf("store differs from agentmap build: %v", diff)
	}
	t.Logf("%d conversations", len(want))
	sum := func() []byte {
		b, _ := os.ReadFile(paths[0])
		return b
	}
	before := sum()
	cmd = exec.Command(bin, "scan", "--data-dir", data, "--log-level", "info")
	cmd.Env = testEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "map written") {
		t.Fatalf("second scan rewrote maps (%v):\n%s", err, out)
	}
	if !bytes.Equal(before, sum()) {
		t.Fatal("a database was modified")
	}
}

// A Claude subagent log read before its meta.json existed is read again
// when the sidecar shows up, so the lane's type matches `agentmap build`.
func TestLateSubagentSidecar(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	const s = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
	main, err := os.ReadFile(filepath.Join(corpus, "claude", "spotter__"+s+".jsonl"))
	if err != nil {
		t.Skip(err)
	}
	sub, err := os.ReadFile(filepath.Join(corpus, "claude", "spotter__"+s+"__subagents__agent-aac57f5.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	mainPath := filepath.Join(home, ".claude", "projects", "-w", s+".jsonl")
	subPath := filepath.Join(home, ".claude", "projects", "-w", s, "subagents", "agent-aac57f5.jsonl")
	os.MkdirAll(filepath.Dir(subPath), 0o700)
	os.WriteFile(mainPath, main, 0o600)
	half := bytes.LastIndexByte(sub[:len(sub)/2], '\n') + 1
	os.WriteFile(subPath, sub[:half], 0o600)
	scan := func() {
		cmd := exec.Command(bin, "scan", "--data-dir", data)
		cmd.Env = testEnv(home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scan: %v\n%s", err, out)
		}
	}
	scan()
	os.WriteFile(strings.TrimSuffix(subPath, ".jsonl")+".meta.json",
		[]byte(`{"agentType":"Explore","toolUseId":"toolu_01X","model":"claude-sonnet-4-5","description":"not for maps"}`), 0o600)
	f, _ := os.OpenFile(subPath, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(sub[half:])
	f.Close()
	scan()
	want := expected(t, bin, []string{mainPath})
	if diff := diffMaps(readMaps(t, filepath.Join(data, "maps")), want); len(diff) > 0 {
		t.Fatalf("store differs from agentmap build: %v", diff)
	}
}
