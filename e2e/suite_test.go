package e2e

import (
	"bytes"
	"cmp"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
)

func runSuite(t *testing.T, bin string) {
	start := time.Now()
	w := newWorld(t, bin)
	agentmap := buildAgentmap(t, w)
	src := newMapSource(t, w, agentmap)
	src.start(t)
	if d, ok := src.(*daemonSource); ok {
		// A crash mid-run: the main sessions grow again after it.
		w.after = func(name string) {
			if name == "claude-main" || name == "codex-main" || name == "opencode-main" || name == "copilot-main" ||
				name == "gemini-main" {
				d.crash(t)
			}
		}
	}

	var sessions []session
	clients := clientList()
	if strings.Contains(clients, "claude") {
		sessions = append(sessions, runClaude(t, w).sessions()...)
	}
	if strings.Contains(clients, "codex") {
		sessions = append(sessions, runCodex(t, w).sessions()...)
	}
	if strings.Contains(clients, "opencode") {
		sessions = append(sessions, runOpenCode(t, w).sessions()...)
	}
	if strings.Contains(clients, "copilot") {
		sessions = append(sessions, runCopilot(t, w).sessions()...)
	}
	if strings.Contains(clients, "gemini") {
		sessions = append(sessions, runGemini(t, w).sessions(t)...)
	}
	if t.Failed() {
		return
	}
	var natives []string
	for _, s := range sessions {
		natives = append(natives, s.native)
	}
	dir := src.finish(t, natives)
	got, raws := readMaps(t, dir)
	for _, s := range sessions {
		check(t, s, got[s.native])
	}
	validate(t, agentmap, dir)
	if _, ok := src.(*daemonSource); ok {
		// The daemon's maps equal a one-shot build of the finished logs.
		b := &buildSource{w: w, bin: agentmap}
		built, braws := readMaps(t, b.finish(t, natives))
		for _, s := range sessions {
			if d, o := got[s.native], built[s.native]; d != nil && o != nil && d.ContentHash != o.ContentHash {
				t.Errorf("%s: the daemon's map differs from agentmap build of the same logs (%s vs %s)", s.name, d.ContentHash, o.ContentHash)
			}
		}
		maps.Copy(raws, braws)
	}
	checkLeaks(t, w, raws, src.logs())
	t.Logf("suite ran in %v", time.Since(start).Round(time.Second))
}

// clientList is the clients the suite runs (AGENTMAP_E2E_CLIENTS, a
// comma-separated list; all by default).
func clientList() string {
	return cmp.Or(os.Getenv("AGENTMAP_E2E_CLIENTS"), "claude,codex,opencode,copilot,gemini")
}

// validate runs `agentmap validate` over every map.
func validate(t *testing.T, agentmap, dir string) {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	out, err := exec.Command(agentmap, append([]string{"validate"}, files...)...).CombinedOutput()
	if err != nil {
		t.Errorf("agentmap validate: %v\n%s", err, out)
	}
}

// checkLeaks looks for the canary in every map, in the state database's
// bytes and in what agentmap logged.
func checkLeaks(t *testing.T, w *world, maps map[string][]byte, logs []byte) {
	t.Helper()
	needle := []byte(canary)
	if len(maps) == 0 {
		t.Errorf("no maps to search")
	}
	for p, m := range maps {
		if i := bytes.Index(bytes.ToLower(m), needle); i >= 0 {
			t.Errorf("map %s holds scripted text at byte %d", p, i)
		}
	}
	if db, err := state.SearchableBytes(filepath.Join(w.data, "state.db")); err == nil {
		if bytes.Contains(bytes.ToLower(db), needle) {
			t.Errorf("state.db holds scripted text at byte %d", bytes.Index(bytes.ToLower(db), needle))
		}
	} else if os.Getenv("AGENTMAP_E2E_MAPS") != "build" {
		t.Errorf("state.db: %v", err)
	}
	if i := bytes.Index(bytes.ToLower(logs), needle); i >= 0 {
		t.Errorf("agentmap's log holds scripted text at byte %d", i)
	}
}
