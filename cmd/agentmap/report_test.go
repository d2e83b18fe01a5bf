package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/report"
)

// fixtureMaps builds the project's own fixtures into a directory of maps.
func fixtureMaps(t *testing.T) (string, []*report.Map) {
	t.Helper()
	td := filepath.Join("..", "..", "testdata")
	dir := t.TempDir()
	args := []string{"build", "-o", dir, filepath.Join(td, "claude", "basic.jsonl"), filepath.Join(td, "claude", "canary.jsonl"),
		filepath.Join(td, "codex", "leak.jsonl"), filepath.Join(td, "cursor", "transcript.jsonl")}
	if code, _, stderr := run(t, args...); code != exitOK {
		t.Fatalf("build: exit %d\n%s", code, stderr)
	}
	maps, errs := report.Collect(t.Context(), report.Dir(dir), report.Filter{})
	if len(errs) > 0 || len(maps) < 3 {
		t.Fatalf("%d maps, %v", len(maps), errs)
	}
	return dir, maps
}

// TestReportCommand: a report of a directory and of a bundle of the same
// maps carry every session, reference nothing outside the page, and
// --session writes one session's page.
func TestReportCommand(t *testing.T) {
	dir, maps := fixtureMaps(t)
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := run(t, "report", "--maps", dir, "-o", out); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)(https?:|//[a-z0-9.-]+\.[a-z]{2,}/|\bsrc=|<link|@import|url\()`).Find(page); m != nil {
		t.Errorf("the page references something outside itself: %q", m)
	}
	docs, err := report.Unpack(page)
	if err != nil || len(docs) != 1+len(maps) {
		t.Fatalf("the page carries %d documents for %d maps (%v)", len(docs), len(maps), err)
	}
	var ov struct {
		Sessions [][]any `json:"s"`
	}
	if err := json.Unmarshal(docs[0], &ov); err != nil || len(ov.Sessions) != len(maps) {
		t.Fatalf("overview: %d sessions, %v", len(ov.Sessions), err)
	}

	bundle := filepath.Join(t.TempDir(), "maps.tar.gz")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	if code, _, stderr := run(t, append([]string{"export", "--format", "bundle", "--data-dir", dir, "--out", bundle}, files...)...); code != exitOK {
		t.Fatalf("export bundle: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "report", "--maps", bundle, "-o", "-")
	if code != exitOK {
		t.Fatalf("report of a bundle: exit %d\n%s", code, stderr)
	}
	if bd, _ := report.Unpack([]byte(stdout)); len(bd) != len(docs) {
		t.Errorf("the bundle's report carries %d documents, the directory's %d", len(bd), len(docs))
	}
	var tokens int64
	for _, m := range maps {
		tokens += m.Totals.Tokens
	}
	// A bundle is known by its content, under whatever name it was written.
	renamed := filepath.Join(t.TempDir(), "maps.bundle")
	if err := os.Rename(bundle, renamed); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "usage", "--maps", renamed, "--json")
	var tab report.UsageTable
	if code != exitOK || json.Unmarshal([]byte(stdout), &tab) != nil || tab.Totals.Total != tokens {
		t.Errorf("usage of the bundle: exit %d, total %d, the maps %d\n%s", code, tab.Totals.Total, tokens, stderr)
	}

	id := maps[0].Session.NativeID()
	code, stdout, stderr = run(t, "report", "--maps", dir, "-o", "-", "--session", id[:len(id)-1])
	if code != exitOK {
		t.Fatalf("report --session: exit %d\n%s", code, stderr)
	}
	one, _ := report.Unpack([]byte(stdout))
	if len(one) != 2 || !bytes.Contains(one[0], []byte(id)) || !bytes.Contains(one[0], []byte(`"single":true`)) {
		t.Errorf("--session %s: %d documents", id, len(one))
	}
	if code, _, _ := run(t, "report", "--maps", dir, "-o", "-", "--session", "no-such-session"); code != exitFailure {
		t.Errorf("--session of an unknown id: exit %d", code)
	}
	// Said as a missing --data-dir is: exit 1, the path and what is wrong.
	if code, _, errb := run(t, "report", "--maps", filepath.Join(dir, "missing")); code != exitFailure || !strings.Contains(errb, "missing: no such file or directory") {
		t.Errorf("--maps of a missing path: exit %d: %s", code, errb)
	}
	// A report is made to be shared: the store's directory (which names the
	// user's home) is not in it, nor the directory --maps named.
	data, _ := smallStore(t)
	for _, args := range [][]string{{"--data-dir", data}, {"--maps", dir}} {
		code, stdout, stderr := run(t, append([]string{"report", "-o", "-"}, args...)...)
		if code != exitOK {
			t.Fatalf("report %v: exit %d\n%s", args, code, stderr)
		}
		if strings.Contains(stdout, args[1]) || strings.Contains(stdout, filepath.Dir(args[1])) {
			t.Errorf("report %v names the directory", args)
		}
	}
}

// TestUsageCommand: the totals row of every grouping is the sum of the
// maps' totals, and the text table ends with it.
func TestUsageCommand(t *testing.T) {
	dir, maps := fixtureMaps(t)
	var tokens int64
	for _, m := range maps {
		tokens += m.Totals.Tokens
	}
	for _, p := range report.Periods() {
		args := []string{"usage", string(p), "--maps", dir, "--json", "--breakdown"}
		if p == report.ByModel {
			args = args[:len(args)-1] // its rows are models already
		}
		code, stdout, stderr := run(t, args...)
		if code != exitOK {
			t.Fatalf("usage %s: exit %d\n%s", p, code, stderr)
		}
		var tab report.UsageTable
		if err := json.Unmarshal([]byte(stdout), &tab); err != nil {
			t.Fatal(err)
		}
		if tab.Totals.Total != tokens {
			t.Errorf("usage %s: total %d, the maps %d", p, tab.Totals.Total, tokens)
		}
	}
	// --agent and --repo keep the sessions list keeps: the totals are theirs.
	sum := func(keep func(*report.Map) bool) (n int64) {
		for _, m := range maps {
			if keep(m) {
				n += m.Totals.Tokens
			}
		}
		return n
	}
	inRepo := func(name string) func(*report.Map) bool {
		return func(m *report.Map) bool {
			return slices.ContainsFunc(m.Repos, func(r mapfile.Repo) bool { return r.Name == name })
		}
	}
	// A repository whose sessions have tokens, not all of them.
	var repo string
	for _, m := range maps {
		for _, r := range m.Repos {
			if n := sum(inRepo(r.Name)); r.Name != "" && n > 0 && n < tokens {
				repo = r.Name
			}
		}
	}
	for _, c := range []struct {
		args []string
		want int64
	}{
		{[]string{"--agent", "codex"}, sum(func(m *report.Map) bool { return m.Session.AgentTool == "codex" })},
		{[]string{"--repo", repo}, sum(inRepo(repo))},
	} {
		code, stdout, stderr := run(t, append([]string{"usage", "session", "--maps", dir, "--json"}, c.args...)...)
		var tab report.UsageTable
		if code != exitOK || json.Unmarshal([]byte(stdout), &tab) != nil {
			t.Fatalf("usage %v: exit %d\n%s", c.args, code, stderr)
		}
		if tab.Totals.Total != c.want || c.want == 0 || c.want == tokens {
			t.Errorf("usage %v: total %d, its maps %d (all maps %d)", c.args, tab.Totals.Total, c.want, tokens)
		}
	}
	code, stdout, _ := run(t, "usage", "--maps", dir)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != exitOK || !strings.HasPrefix(lines[0], "DATE") || !strings.Contains(stdout, "\nTotal ") {
		t.Errorf("usage: exit %d\n%s", code, stdout)
	}
	if code, _, _ := run(t, "usage", "yearly", "--maps", dir); code != exitUsage {
		t.Errorf("usage yearly: exit %d", code)
	}
	for _, window := range [][]string{{"--since", "2999-01-01"}, {"--until", "2000-01-01"}} {
		if code, stdout, _ := run(t, append([]string{"usage", "--maps", dir}, window...)...); code != exitOK || !strings.Contains(stdout, "no model requests") {
			t.Errorf("usage %v: exit %d\n%s", window, code, stdout)
		}
	}
}

// TestShowEvents: one aligned line per event under a header.
func TestShowEvents(t *testing.T) {
	data, file := smallStore(t)
	code, stdout, stderr := run(t, "show", "--data-dir", data, "small-1", "--events")
	if code != exitOK {
		t.Fatalf("show --events: exit %d\n%s", code, stderr)
	}
	m, err := report.Collect(t.Context(), report.Files{Root: filepath.Dir(file), Paths: []string{filepath.Base(file)}}, report.Filter{})
	if err != nil && len(err) > 0 {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	if len(lines) != 2+len(m[0].Events) || !strings.HasPrefix(lines[0], "SEQ") {
		t.Fatalf("%d lines for %d events:\n%s", len(lines), len(m[0].Events), stdout)
	}
	if !strings.Contains(stdout, "exec") || !strings.Contains(stdout, "ls") {
		t.Errorf("the exec of ls is missing:\n%s", stdout)
	}
	col := strings.Index(lines[0], "KIND")
	for _, l := range lines[2:] {
		if len(l) < col || l[col-1] != ' ' {
			t.Errorf("misaligned line %q", l)
		}
	}
}

// TestReportOpen: --open hands the written file to the desktop's opener.
func TestReportOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the opener is xdg-open on Linux; open and rundll32 elsewhere are not faked here")
	}
	dir, _ := fixtureMaps(t)
	bin := t.TempDir()
	opened := filepath.Join(bin, "opened")
	os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+opened+".tmp && mv "+opened+".tmp "+opened+"\n"), 0o700)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := run(t, "report", "--maps", dir, "-o", out, "--open"); code != exitOK {
		t.Fatalf("report --open: exit %d\n%s", code, stderr)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(opened); err == nil {
			if string(b) != out {
				t.Errorf("--open opened %q, not %q", b, out)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("--open did not run the opener")
		}
	}
}

// TestReportOfNoMatchingSession: a report whose filters keep none of the
// sessions there are tells its page so (filtered), which then says that
// none matched rather than that none are mapped yet; a report of an empty
// store, filtered or not, does not.
func TestReportOfNoMatchingSession(t *testing.T) {
	dir, _ := fixtureMaps(t)
	data, _ := smallStore(t)
	empty := t.TempDir()
	os.MkdirAll(filepath.Join(empty, "maps"), 0o700)
	for _, c := range []struct {
		args     []string
		filtered bool
	}{
		{[]string{"--maps", dir, "--agent", "gemini"}, true},
		{[]string{"--data-dir", data, "--since", "2000-01-01", "--until", "2000-01-02"}, true},
		{[]string{"--data-dir", empty, "--agent", "codex"}, false},
		{[]string{"--data-dir", empty}, false},
		{[]string{"--maps", filepath.Join(empty, "maps"), "--since", "2000-01-01"}, false},
	} {
		code, stdout, stderr := run(t, append([]string{"report", "-o", "-"}, c.args...)...)
		if code != exitOK {
			t.Fatalf("report %v: exit %d\n%s", c.args, code, stderr)
		}
		docs, err := report.Unpack([]byte(stdout))
		if err != nil || len(docs) != 1 {
			t.Fatalf("report %v: %d documents, %v", c.args, len(docs), err)
		}
		var ov struct {
			Sessions [][]any `json:"s"`
			Filtered bool    `json:"filtered"`
		}
		if err := json.Unmarshal(docs[0], &ov); err != nil || len(ov.Sessions) != 0 || ov.Filtered != c.filtered {
			t.Errorf("report %v: %d sessions, filtered %v, want 0 and %v (%v)", c.args, len(ov.Sessions), ov.Filtered, c.filtered, err)
		}
	}
}

// A map that cannot be read is left out of usage's table, as of the
// report: the table is printed, the warning says its totals are short, and
// the exit is 1, as report's, not 0 as for a whole count.
func TestUsageOfAnUnreadableMap(t *testing.T) {
	data := t.TempDir()
	store := filepath.Join(data, "maps", "claude", "2026", "05") + "/"
	for _, log := range []string{fixture, "../../testdata/claude/coststate.jsonl"} {
		if code, _, stderr := run(t, "build", "-o", store, log); code != exitOK {
			t.Fatalf("build %s: exit %d %s", log, code, stderr)
		}
	}
	damaged := filepath.Join(store, "0a1b2c3d-0000-4000-8000-0000000000dd.json.gz")
	if err := os.WriteFile(damaged, []byte("damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	skipped := "agentmap usage: skipped: " + damaged + ": "
	short := "agentmap usage: the table leaves out 1 map that could not be read (skipped above)"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"usage", "--data-dir", data}, short + ": agentmap flush --all --rewrite writes the store's maps again\n"},
		{[]string{"usage", "model", "--json", "--data-dir", data}, short + ": agentmap flush --all --rewrite writes the store's maps again\n"},
		{[]string{"usage", "--maps", filepath.Join(data, "maps")}, short + "\n"},
	} {
		code, stdout, stderr := run(t, tc.args...)
		if code != exitFailure || !strings.Contains(stdout, "claude-sonnet-4-6") || strings.Contains(stdout, "claude-haiku") ||
			!strings.Contains(stderr, skipped) || !strings.HasSuffix(stderr, tc.want) {
			t.Errorf("%q: exit %d, stdout %.300q, stderr %q; want %d, the table without the damaged map, and %q", tc.args, code, stdout, stderr, exitFailure, tc.want)
		}
	}
	if code, _, stderr := run(t, "report", "--data-dir", data, "-o", filepath.Join(t.TempDir(), "r.html")); code != exitFailure {
		t.Errorf("report: exit %d %q", code, stderr)
	}
}
