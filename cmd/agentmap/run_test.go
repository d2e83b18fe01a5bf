package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRootFlags(t *testing.T) {
	r := rootFlags{}
	for _, v := range []string{"claude=/a", "codex=/b", "claude=/c", "cursor-app=/d"} {
		if err := r.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	want := rootFlags{"claude": {"/a", "/c"}, "codex": {"/b"}, "cursor-app": {"/d"}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %v", r)
	}
	for _, bad := range []string{"claude", "claude=", "aider=/x", "=/x"} {
		if err := r.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestRunUsage(t *testing.T) {
	var out, errb bytes.Buffer
	for _, args := range [][]string{{"--idle", "soon"}, {"--root", "nope"}, {"extra"}, {"--log-level", "loud"}} {
		if code := cmdRun(context.Background(), args, &out, &errb); code != exitUsage {
			t.Errorf("run %v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// scan over empty roots succeeds, creates the state and says where maps go.
func TestScanEmpty(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	var out, errb bytes.Buffer
	code := cmdScan(context.Background(), []string{"--data-dir", data,
		"--root", "claude=" + filepath.Join(dir, "c"), "--root", "codex=" + filepath.Join(dir, "x"),
		"--root", "cursor=" + filepath.Join(dir, "u"), "--root", "cursor-app=" + filepath.Join(dir, "a")}, &out, &errb)
	if code != exitOK {
		t.Fatalf("scan: exit %d\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), filepath.Join(data, "maps")) || !strings.Contains(errb.String(), "scan: done") {
		t.Fatalf("output:\n%s\n%s", out.String(), errb.String())
	}
}

func TestProgressPlain(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	for i := int64(0); i <= 100; i += 5 {
		p.update(i*1e6, 100e6, 3)
	}
	p.finish(nil)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 12 || !strings.HasPrefix(lines[0], "scan: 0%") || !strings.Contains(lines[10], "100%") ||
		!strings.HasPrefix(lines[11], "scan: done, 100.0 MB read, 3 sessions") {
		t.Fatalf("progress lines:\n%s", b.String())
	}
}

// The last line of a scan says how it ended: "done with errors" when it
// read everything (a second scan's nothing included) but something
// failed, "stopped" when an error or an interrupt ended it early, and
// nothing of its own when it failed before it started.
func TestProgressEndings(t *testing.T) {
	for _, tc := range []struct {
		name        string
		started     bool
		done, total int64
		err         error
		want        string
	}{
		{"stopped by an error", true, 1e6, 100e6, errors.New("disk full"), "scan: stopped, 1.0 MB read, 1 session\n"},
		{"read everything, failed somewhere", true, 100e6, 100e6, errors.New("1 log could not be read"), "scan: done with errors, 100.0 MB read, 1 session\n"},
		{"a second scan that met an error", true, 0, 0, errors.New("1 log directory could not be listed"), "scan: done with errors, 0.0 kB read, 1 session\n"},
		{"interrupted while writing maps", true, 100e6, 100e6, errInterrupted, "scan: stopped, 100.0 MB read, 1 session\n"},
		{"never started", false, 0, 0, errors.New("locked"), ""},
	} {
		var b bytes.Buffer
		p := newProgress(&b)
		if tc.started {
			p.update(tc.done, tc.total, 1)
		}
		b.Reset()
		p.finish(tc.err)
		if b.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, b.String(), tc.want)
		}
	}
}

// A scan of a few small logs shows what it read, not "0.0 MB".
func TestProgressSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0.0 kB", 24_800: "24.8 kB", 999_999: "1000.0 kB", 1_000_000: "1.0 MB", 333_100_000: "333.1 MB"} {
		if got := progressSize(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}
