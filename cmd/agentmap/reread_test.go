package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers/agents"
)

// A build whose parsers are newer than the ones that read a data directory
// reads again every log still on disk, of every form (line logs, whole
// rollouts, Cursor's databases): over the corpus, records marked as read by
// an earlier build are read again, status says so until then, and the maps
// (the same parsers here) come out byte for byte as they were.
func TestScanReadsAgainWhatAnEarlierBuildRead(t *testing.T) {
	corpus := corpusDir(t)
	home := privateHome(t)
	roots := layoutCorpus(t, corpus, home, false)
	data := filepath.Join(t.TempDir(), "data")
	scan := func() {
		t.Helper()
		args := append([]string{"scan", "--data-dir", data}, roots...)
		if code, _, stderr := run(t, args...); code != exitOK {
			t.Fatalf("scan: exit %d\n%s", code, stderr)
		}
	}
	scan()
	before := mapDigests(t, data)
	if len(before) == 0 {
		t.Fatal("no map written")
	}

	// The records as an earlier build wrote them: no version.
	db, err := state.Open(filepath.Join(data, "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	srcs, _, err := db.Load()
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]int{}
	resets := map[uint64]int64{}
	for _, s := range srcs {
		if s.Parsed == 0 {
			t.Fatalf("%s: no version recorded by this build", s.Form)
		}
		forms[s.Form]++
		resets[s.ID] = s.Resets
		s.Parsed = 0
		if err := db.PutSource(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	for _, form := range []string{"lines", "whole", "sqlite"} {
		if forms[form] == 0 {
			t.Fatalf("the corpus home has no source of form %s: %v", form, forms)
		}
	}

	code, out, stderr := run(t, "status", "--data-dir", data)
	if code != exitOK || !strings.Contains(out, "reread:") || !strings.Contains(out, "read by an earlier version") {
		t.Fatalf("status before the scan (exit %d) does not say logs are to be read again:\n%s%s", code, out, stderr)
	}

	scan()
	after := mapDigests(t, data)
	if len(after) != len(before) {
		t.Fatalf("%d maps after the scan, %d before", len(after), len(before))
	}
	for p, d := range before {
		if after[p] != d {
			t.Errorf("%s changed when read again by the same parsers", p)
		}
	}
	db, err = state.OpenReadOnly(filepath.Join(data, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srcs, _, err = db.Load()
	if err != nil {
		t.Fatal(err)
	}
	reread := 0
	for _, s := range srcs {
		a, _ := agents.ByName(s.Agent)
		if s.Form != "conversation" && s.Parsed != a.Version {
			t.Errorf("a %s source of %s still parsed by %d, want %d", s.Form, s.Agent, s.Parsed, a.Version)
		}
		if s.Form == "lines" && s.Resets == resets[s.ID]+1 {
			reread++
		}
	}
	if reread != forms["lines"] {
		t.Errorf("%d line logs read again from their start, want all %d", reread, forms["lines"])
	}
	st, err := daemon.OfflineStatus(db, data)
	if err != nil {
		t.Fatal(err)
	}
	if st.Reread != 0 {
		t.Errorf("status still counts %d logs to read again", st.Reread)
	}
}

// mapDigests is the SHA-256 of every stored map, by its path.
func mapDigests(t *testing.T, data string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(daemon.MapsDir(data), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
