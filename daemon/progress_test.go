package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestProgressOfASecondScanReachesItsTotal scans a home twice. The second
// scan has nothing to read: a whole-form log (a compressed Codex rollout)
// is unchanged, and a line log too, so its progress must end at its total
// (a whole-form log used to be counted whole in the total and never read,
// leaving the progress short of it for good).
func TestProgressOfASecondScanReachesItsTotal(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	put := func(dst, src string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(home, dst)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const zst = "rollout-2025-11-07T09-00-00-019a5baa-0000-7000-8000-00000000c006.jsonl.zst"
	put(".codex/sessions/2025/11/07/"+zst, "../testdata/codex/"+zst)
	put(".claude/projects/-w-a/0a1b2c3d-0000-4000-8000-000000000001.jsonl", "../testdata/claude/basic.jsonl")
	roots := homeRoots(runtime.GOOS, home)
	scan := func() (done, total int64, sessions int) {
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler),
			Progress: func(dn, tot int64, n int) { done, total, sessions = dn, tot, n }})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return done, total, sessions
	}
	done, total, sessions := scan()
	if sessions != 2 || total == 0 || done != total {
		t.Fatalf("first scan: %d sessions, progress %d of %d; want 2 sessions and all of a non-zero total", sessions, done, total)
	}
	if done, total, sessions = scan(); sessions != 2 || done != total {
		t.Fatalf("second scan, nothing changed: %d sessions, progress %d of %d; want 2 and the whole total", sessions, done, total)
	}
}

// TestProgressOfAQuietLogAppendedAfterTheLoad scans a home, then scans it
// again with a line appended to its log between the load (which finds the
// session quiet and lets go of it) and the walk: the second scan reads the
// appended line only, and its progress must end at its total.
func TestProgressOfAQuietLogAppendedAfterTheLoad(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	basic, err := os.ReadFile("../testdata/claude/basic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(home, ".claude/projects/-w-a/0a1b2c3d-0000-4000-8000-000000000001.jsonl")
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, basic, 0o600); err != nil {
		t.Fatal(err)
	}
	roots := homeRoots(runtime.GOOS, home)
	scan := func() (d *Daemon, done, total int64) {
		d = New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler),
			Progress: func(dn, tot int64, _ int) { done, total = dn, tot }})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return d, done, total
	}
	scan()
	first, _, _ := bytes.Cut(basic, []byte("\n"))
	appended := int64(len(first) + 1)
	afterLoad = func() {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(append(first, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { afterLoad = nil }()
	d, done, total := scan()
	if d.retiredOnLoad != 1 {
		t.Fatalf("%d sessions let go of on load, want 1 (the test no longer appends to a quiet log)", d.retiredOnLoad)
	}
	if done != appended || total != appended {
		t.Fatalf("progress %d of %d, want %d of %d (the appended line)", done, total, appended, appended)
	}
}

// TestProgressLeavesOutACompressedCopy: a compressed rollout beside its
// plain file is not read (the plain one is), so it counts for nothing in
// the progress, on a first scan and after.
func TestProgressLeavesOutACompressedCopy(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	const zst = "rollout-2025-11-07T09-00-00-019a5baa-0000-7000-8000-00000000c006.jsonl.zst"
	dir := filepath.Join(home, ".codex/sessions/2025/11/07")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../testdata/codex/" + zst)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, zst), b, 0o600)
	plain, err := os.ReadFile("../testdata/codex/rollout-2026-03-01T09-00-00-0190aaaa-0000-7000-8000-00000000a001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, strings.TrimSuffix(zst, ".zst")), plain, 0o600)
	roots := homeRoots(runtime.GOOS, home)
	for i := range 2 {
		var done, total int64
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler),
			Progress: func(dn, tot int64, _ int) { done, total = dn, tot }})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := int64(len(plain))
		if i > 0 {
			want = 0
		}
		if done != want || total != want {
			t.Fatalf("scan %d: progress %d of %d, want %d of %d (the plain rollout's bytes)", i+1, done, total, want, want)
		}
	}
}

// TestProgressOfASecondScanOfACursorDatabase: a Cursor database of the
// corpus, unchanged since the first scan, counts nothing in the second
// scan's progress (it used to count its whole size, never read).
func TestProgressOfASecondScanOfACursorDatabase(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(corpusDir(t), "cursor", "CursorSync__globalStorage_state.vscdb"))
	if err != nil {
		t.Skip(err)
	}
	home, data := t.TempDir(), t.TempDir()
	db := filepath.Join(home, ".config", "Cursor", "User", "globalStorage", "state.vscdb")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	roots := homeRoots(runtime.GOOS, home)
	scan := func() (done, total int64, sessions int) {
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler),
			Progress: func(dn, tot int64, n int) { done, total, sessions = dn, tot, n }})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return done, total, sessions
	}
	if done, total, sessions := scan(); sessions == 0 || done != int64(len(raw)) || total != done {
		t.Fatalf("first scan: %d sessions, progress %d of %d; want some sessions and %d of %d", sessions, done, total, len(raw), len(raw))
	}
	if done, total, _ := scan(); done != 0 || total != 0 {
		t.Fatalf("second scan, nothing changed: progress %d of %d, want 0 of 0", done, total)
	}
}
