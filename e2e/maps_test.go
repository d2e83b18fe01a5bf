package e2e

import (
	"compress/gzip"
	"context"
	"encoding/json"
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

// idle is the daemon's --idle: short, so that maps follow the clients closely.
const idle = 2 * time.Second

// mapSource produces the maps of the sessions the clients write. The
// daemon is the real thing; `agentmap build` over the finished logs is the
// fallback (AGENTMAP_E2E_MAPS=build) and the reference it must equal.
type mapSource interface {
	// start runs before the clients.
	start(t *testing.T)
	// finish returns the directory holding every map once the given
	// sessions (native ids) have theirs.
	finish(t *testing.T, sessions []string) string
	// logs are the bytes the source logged, to search for leaks.
	logs() []byte
}

func newMapSource(t *testing.T, w *world, agentmap string) mapSource {
	if os.Getenv("AGENTMAP_E2E_MAPS") == "build" {
		return &buildSource{w: w, bin: agentmap}
	}
	return &daemonSource{w: w, bin: agentmap}
}

// buildAgentmap compiles the binary under test.
func buildAgentmap(t *testing.T, w *world) string {
	t.Helper()
	// Built in the test temp dir: the world's file system may forbid executables.
	bin := filepath.Join(t.TempDir(), "agentmap")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentmap")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agentmap: %v\n%s", err, out)
	}
	return bin
}

type daemonSource struct {
	w      *world
	bin    string
	cmd    *exec.Cmd
	stderr *os.File
	done   chan error
}

func (d *daemonSource) start(t *testing.T) {
	t.Helper()
	f, err := os.Create(filepath.Join(d.w.root, "agentmap-run.log"))
	if err != nil {
		t.Fatal(err)
	}
	d.stderr = f
	d.run(t)
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Kill()
			<-d.done
		}
	})
}

// crash kills the daemon the hard way and starts it again on the same
// data: the maps must come out as if nothing happened.
func (d *daemonSource) crash(t *testing.T) {
	t.Helper()
	d.cmd.Process.Kill()
	<-d.done
	d.run(t)
}

func (d *daemonSource) run(t *testing.T) {
	t.Helper()
	f := d.stderr
	d.cmd = exec.Command(d.bin, "run", "--data-dir", d.w.data, "--idle", idle.String(), "--log-level", "debug")
	d.cmd.Env = d.w.env
	d.cmd.Stdout, d.cmd.Stderr = f, f
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("agentmap run: %v", err)
	}
	d.done = make(chan error, 1)
	go func() { d.done <- d.cmd.Wait() }()
}

// finish waits until every session has a map and no map changed for a few
// idle periods, then stops the daemon as a service manager would.
func (d *daemonSource) finish(t *testing.T, sessions []string) string {
	t.Helper()
	dir := filepath.Join(d.w.data, "maps")
	deadline := time.Now().Add(90 * time.Second)
	var last string
	stableSince := time.Now()
	for {
		snap, missing := snapshot(dir, sessions)
		if snap != last {
			last, stableSince = snap, time.Now()
		}
		if missing == "" && time.Since(stableSince) > 3*idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agentmap run wrote no map for session %s within 90s; log:\n%s", missing, tail(d.logs()))
		}
		select {
		case err := <-d.done:
			t.Fatalf("agentmap run exited early: %v; log:\n%s", err, tail(d.logs()))
		case <-time.After(200 * time.Millisecond):
		}
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		if err != nil {
			t.Errorf("agentmap run ended with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("agentmap run did not stop within 20s of SIGTERM")
		d.cmd.Process.Kill()
		<-d.done
	}
	return dir
}

func (d *daemonSource) logs() []byte {
	b, _ := os.ReadFile(d.stderr.Name())
	return b
}

// snapshot describes the map files (names, sizes, times) and names a
// session that has none yet.
func snapshot(dir string, sessions []string) (string, string) {
	var b strings.Builder
	have := map[string]bool{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if fi, err := e.Info(); err == nil {
			b.WriteString(p + " " + fi.ModTime().String() + " " + strconv.FormatInt(fi.Size(), 10) + "\n")
		}
		have[strings.TrimSuffix(e.Name(), ".json.gz")] = true
		return nil
	})
	for _, s := range sessions {
		if !have[s] {
			return b.String(), s
		}
	}
	return b.String(), ""
}

type buildSource struct {
	w   *world
	bin string
	out []byte
}

func (b *buildSource) start(*testing.T) {}

func (b *buildSource) finish(t *testing.T, sessions []string) string {
	t.Helper()
	var files []string
	for _, root := range []string{filepath.Join(b.w.claude, "projects"), filepath.Join(b.w.codex, "sessions"),
		filepath.Join(b.w.home, ".gemini", "tmp")} {
		filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return nil
		})
	}
	if db := filepath.Join(b.w.home, ".local", "share", "opencode", "opencode.db"); fileExists(db) {
		files = append(files, db)
	}
	copilot, _ := filepath.Glob(filepath.Join(b.w.home, ".copilot", "session-state", "*", "events.jsonl"))
	files = append(files, copilot...)
	dir := filepath.Join(b.w.data, "maps-build")
	if err := os.MkdirAll(dir, 0o700); err != nil { // build writes into a directory that is there
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A trailing separator asks build to create the directory.
	cmd := exec.CommandContext(ctx, b.bin, append([]string{"build", "-o", dir + string(filepath.Separator)}, files...)...)
	cmd.Env = b.w.env
	out, err := cmd.CombinedOutput()
	b.out = out
	if err != nil {
		t.Fatalf("agentmap build: %v\n%s", err, out)
	}
	return dir
}

func (b *buildSource) logs() []byte { return b.out }

// agentMap is the part of a map the suite compares.
type agentMap struct {
	path        string
	ContentHash string `json:"contentHash"`
	Session     struct {
		ID              string   `json:"id"`
		AgentTool       string   `json:"agentTool"`
		Models          []string `json:"models"`
		Role            string   `json:"role"`
		ParentSessionID *string  `json:"parentSessionId"`
	} `json:"session"`
	Totals struct {
		Calls          int            `json:"calls"`
		Requests       int            `json:"requests"`
		UserTurns      int            `json:"userTurns"`
		Subagents      int            `json:"subagents"`
		Tokens         int64          `json:"tokens"`
		CostUSD        float64        `json:"costUsd"`
		Retries        int            `json:"retries"`
		Compactions    int            `json:"compactions"`
		ErrorsByClass  map[string]int `json:"errorsByClass"`
		ErrorsBySource map[string]int `json:"errorsBySource"`
	} `json:"totals"`
	Agents []struct {
		ID           string `json:"id"`
		Kind         string `json:"kind"`
		SubagentType string `json:"subagentType"`
		LaunchSeq    *int   `json:"launchSeq"`
		Requests     int    `json:"requests"`
		Tokens       int64  `json:"tokens"`
		Calls        int    `json:"calls"`
	} `json:"agents"`
	Files []struct {
		Path  string `json:"path"`
		Reads int    `json:"reads"`
	} `json:"files"`
	Events []struct {
		Seq      int         `json:"seq"`
		Kind     string      `json:"kind"`
		Agent    string      `json:"agent"`
		Tool     string      `json:"tool"`
		Verb     string      `json:"verb"`
		Skill    string      `json:"skill"`
		Server   string      `json:"server"`
		Err      bool        `json:"err"`
		ExitCode *int        `json:"exitCode"`
		RetryOf  *int        `json:"retryOf"`
		Targets  []mapTarget `json:"targets"`
		Child    string      `json:"child"`
		OutBytes int64       `json:"outBytes"`
	} `json:"events"`
}

// readMaps loads every map below dir by native session id.
func readMaps(t *testing.T, dir string) (map[string]*agentMap, map[string][]byte) {
	t.Helper()
	maps := map[string]*agentMap{}
	raws := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json.gz") {
			return nil
		}
		raw, err := gunzip(p)
		if err != nil {
			t.Errorf("map %s: %v", p, err)
			return nil
		}
		raws[p] = raw
		m := &agentMap{path: p}
		if err := json.Unmarshal(raw, m); err != nil {
			t.Errorf("map %s: %v", p, err)
			return nil
		}
		maps[strings.TrimSuffix(e.Name(), ".json.gz")] = m
		return nil
	})
	return maps, raws
}

func gunzip(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// mapTarget is one targets[] entry of an event: a file of files[] or an
// outside-repo bucket.
type mapTarget struct {
	File  *int   `json:"file"`
	Scope string `json:"scope"`
	Label string `json:"label"`
}
