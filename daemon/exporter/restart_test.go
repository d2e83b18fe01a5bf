package exporter_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/exportcheck"
	"github.com/agentmap/agentmap/state"
)

// The restart test runs the real binary with scheduled exports every
// second against a temporary HOME fed from the corpus (read in place),
// kills it with SIGKILL mid-way, appends more, restarts it, and checks
// that the exports hold every flushed map exactly once.

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func corpusFiles(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(moduleRoot(), "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.tsv")); err != nil {
		t.Skip("corpus not present at ../shared/corpus")
	}
	var out []string
	for _, agent := range []string{"claude", "codex"} {
		m, _ := filepath.Glob(filepath.Join(dir, agent, "*.jsonl"))
		sort.Strings(m)
		n := 0
		for _, f := range m {
			if fi, err := os.Stat(f); err == nil && fi.Size() < 600<<10 && !strings.Contains(f, "__subagents__") && n < 6 {
				out = append(out, f)
				n++
			}
		}
	}
	if len(out) < 4 {
		t.Skip("too few small corpus logs")
	}
	return out
}

func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the test kills the daemon with POSIX signals")
	}
	bin := filepath.Join(t.TempDir(), "agentmap")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentmap")
	cmd.Dir = moduleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func testEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "USERPROFILE", "AGENTMAP_CONFIG":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}

type daemonProc struct {
	cmd *exec.Cmd
	log *bytes.Buffer
}

func start(t *testing.T, bin, home, data, out string) *daemonProc {
	t.Helper()
	cmd := exec.Command(bin, "run", "--data-dir", data, "--idle", "300ms", "--debounce", "20ms", "--rescan", "1s",
		"--export-every", "1s", "--export-dir", out, "--export-keep", "0", "--export-formats", "jsonl,bundle,attemptdb,agentscope,sentience")
	cmd.Env = testEnv(home)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a test that failed while it runs leaves no daemon writing in its directories
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &daemonProc{cmd, &log}
}

func appendFile(t *testing.T, to string, data []byte) {
	t.Helper()
	os.MkdirAll(filepath.Dir(to), 0o700)
	w, err := os.OpenFile(to, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
}

// content identifies a map: its session and its canonical JSON.
type content struct {
	session string
	hash    [32]byte
}

func idOf(t *testing.T, canonical []byte) string {
	var m struct {
		Session struct {
			ID string `json:"id"`
		} `json:"session"`
	}
	if err := json.Unmarshal(canonical, &m); err != nil {
		t.Fatalf("map undecodable: %v", err)
	}
	return m.Session.ID
}

// stored lists the store's maps by session.
func stored(t *testing.T, maps string) map[string]content {
	out := map[string]content{}
	filepath.WalkDir(maps, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json.gz") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			return nil
		}
		id := idOf(t, b)
		out[id] = content{id, sha256.Sum256(b)}
		return nil
	})
	return out
}

// exported lists, for every JSON lines export in dir, the maps it holds.
func exported(t *testing.T, dir string) map[string][]content {
	out := map[string][]content{}
	m, _ := filepath.Glob(filepath.Join(dir, "agentmap-*"+export.JSONL.Ext()))
	for _, name := range m {
		if f, _ := formatOf(filepath.Base(name)); f != export.JSONL {
			continue
		}
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line := sc.Bytes()
			out[filepath.Base(name)] = append(out[filepath.Base(name)], content{idOf(t, line), sha256.Sum256(line)})
		}
	}
	return out
}

// check compares the exports with the store: every stored map's content
// is in an export, and no content is in two exports.
func check(t *testing.T, maps, out string) (missing, dup []string, n int) {
	seen := map[content]string{}
	for file, cs := range exported(t, out) {
		for _, c := range cs {
			if prev, ok := seen[c]; ok {
				dup = append(dup, fmt.Sprintf("%s in %s and %s", c.session, prev, file))
			}
			seen[c] = file
			n++
		}
	}
	for id, c := range stored(t, maps) {
		if _, ok := seen[c]; !ok {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	return missing, dup, n
}

func waitExported(t *testing.T, p *daemonProc, maps, out string, ready func(map[string]content) bool) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		missing, dup, _ := check(t, maps, out)
		if len(dup) > 0 {
			t.Fatalf("exported twice: %v", dup)
		}
		if len(missing) == 0 && ready(stored(t, maps)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d maps stored, not exported: %v\ndaemon log:\n%s", len(stored(t, maps)), missing, p.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestExportsAcrossRestart(t *testing.T) {
	files := corpusFiles(t)
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	out := filepath.Join(t.TempDir(), "exports")
	maps := filepath.Join(data, "maps")
	dest := func(i int, from string) string {
		if strings.Contains(from, string(filepath.Separator)+"codex"+string(filepath.Separator)) {
			return filepath.Join(home, ".codex", "sessions", "2026", "01", "02",
				fmt.Sprintf("rollout-2026-01-02T00-00-00-%08d-0000-4000-8000-000000000000.jsonl", i))
		}
		return filepath.Join(home, ".claude", "projects", "-w-app", fmt.Sprintf("f%d.jsonl", i))
	}
	logs := make([][]byte, len(files))
	for i, f := range files {
		var err error
		if logs[i], err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	cut := func(b []byte) int { // after a line near the middle
		if i := bytes.IndexByte(b[len(b)/2:], '\n'); i >= 0 {
			return len(b)/2 + i + 1
		}
		return len(b)
	}

	// First run: the first half of the logs in full, the others up to their middle.
	half := len(files) / 2
	for i := range files {
		n := len(logs[i])
		if i >= half {
			n = cut(logs[i])
		}
		appendFile(t, dest(i, files[i]), logs[i][:n])
	}
	p := start(t, bin, home, data, out)
	waitExported(t, p, maps, out, func(m map[string]content) bool { return len(m) > 0 })
	// Kill while it may be mid-export: it exports every second.
	time.Sleep(700 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	first := len(exported(t, out))

	// More of the logs cut in the middle, a restart, and a SIGKILL at a
	// random moment (exports run every second, flushes 300 ms after a
	// change, so kills land before, during and after them).
	pos := make([]int, len(files))
	for i := half; i < len(files); i++ {
		pos[i] = cut(logs[i])
	}
	const rounds = 4
	rewritten := 0 // starts that found an export written but not recorded
	for r := 1; r <= rounds; r++ {
		for i := half; i < len(files); i++ {
			to := pos[i] + (len(logs[i])-pos[i])*r/(rounds+1)
			appendFile(t, dest(i, files[i]), logs[i][pos[i]:to])
			pos[i] = to
		}
		p = start(t, bin, home, data, out)
		time.Sleep(time.Duration(300+rand.IntN(1500)) * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.cmd.Wait()
		if strings.Contains(p.log.String(), "unfinished export") {
			rewritten++
		}
	}
	// The rest of every log, written while the daemon is down, then a
	// last start.
	for i := half; i < len(files); i++ {
		appendFile(t, dest(i, files[i]), logs[i][pos[i]:])
	}
	before := stored(t, maps)
	p = start(t, bin, home, data, out)
	// Ready when the logs cut in the middle have been mapped again and the
	// store has been still for two seconds (idle is 300 ms), all exported.
	var last map[string]content
	var stillSince time.Time
	waitExported(t, p, maps, out, func(m map[string]content) bool {
		changed := 0
		for id, c := range m {
			if before[id] != c {
				changed++
			}
		}
		if fmt.Sprint(m) != fmt.Sprint(last) {
			last, stillSince = m, time.Now()
		}
		return changed > 0 && time.Since(stillSince) > 2*time.Second
	})
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	if strings.Contains(p.log.String(), "unfinished export") {
		rewritten++
	}

	// Status reports the exports from the state.
	db, err := state.OpenReadOnly(filepath.Join(data, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := daemon.OfflineStatus(db, data)
	db.Close()
	if err != nil || st.Export == nil || st.Export.Exports < 2 || st.Export.LastError != "" || st.Export.Pending {
		t.Fatalf("status does not report the exports: %+v (%v)", st.Export, err)
	}

	missing, dup, n := check(t, maps, out)
	if len(missing) > 0 || len(dup) > 0 {
		t.Fatalf("missing %v, duplicated %v", missing, dup)
	}
	all := exported(t, out)
	if len(all) <= first {
		t.Fatalf("no export after the restart (%d before, %d after)", first, len(all))
	}
	t.Logf("%d logs, %d maps stored, %d exported maps in %d exports (%d before the first kill, %d kills, %d unfinished exports written again)",
		len(files), len(stored(t, maps)), n, len(all), first, rounds+1, rewritten)

	// Every scheduled export of every format validates and names no home.
	schemas, err := exportcheck.LoadSchemas(filepath.Join(moduleRoot(), "..", "shared", "schemas"))
	if err != nil {
		t.Logf("schemas absent (%v): checking for leaks only", err)
	}
	entries, _ := os.ReadDir(out)
	checked := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(home)) {
			t.Errorf("%s names the home directory", e.Name())
		}
		if schemas == nil {
			continue
		}
		f, ok := formatOf(e.Name())
		if !ok {
			t.Errorf("%s is not a scheduled export", e.Name())
			continue
		}
		for _, prob := range schemas.Check(f, raw, []string{home}) {
			t.Errorf("%s: %s", e.Name(), prob)
		}
		checked++
	}
	t.Logf("%d export files checked", checked)
}

// formatOf reads the format from a scheduled export's name.
func formatOf(name string) (export.Format, bool) {
	for _, f := range export.Formats() {
		if m, _ := filepath.Match("agentmap-????????T??????Z"+f.Ext(), name); m {
			return f, true
		}
	}
	return "", false
}
