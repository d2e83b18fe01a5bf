package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	st := daemonStatus(t, bin, home, data2)
	for _, as := range st.Agents {
		if want := map[string]int{"claude": 3, "codex": 1}[as.Agent]; as.Files != want {
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
