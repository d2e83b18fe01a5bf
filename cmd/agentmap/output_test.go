package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state/mapstore"
)

var errDiskFull = errors.New("no space left on device")

// fullWriter takes limit bytes, then fails every write, as a full disk does.
type fullWriter struct {
	limit  int
	n      int
	failed bool
	writes int // the writes tried after the first failure
}

func (w *fullWriter) Write(p []byte) (int, error) {
	if w.failed {
		w.writes++
	}
	if w.n+len(p) > w.limit {
		k := w.limit - w.n
		w.n, w.failed = w.limit, true
		return k, errDiskFull
	}
	w.n += len(p)
	return len(p), nil
}

// storeOf writes n small Codex maps into a new store and returns its data dir.
func storeOf(t *testing.T, n int) string {
	t.Helper()
	data := t.TempDir()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UnixMilli()
	for i := range n {
		id := "full-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		m, err := builder.Build([]event.Event{
			{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: id, AgentTool: "codex"}},
			{Kind: event.KindUser, T: t0, User: &event.User{Chars: 5}},
		}, builder.Options{Producer: "agentmap test"})
		if err != nil {
			t.Fatal(err)
		}
		gz, err := m.Gzip()
		if err != nil {
			t.Fatal(err)
		}
		if err := mapstore.New(filepath.Join(data, "maps")).Write(mapstore.RelPath("codex", id, time.UnixMilli(t0)), gz); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// A failed write to stdout fails every command, with one message naming
// the command: a full disk must not leave a truncated file behind exit 0.
func TestFailedStdoutWriteFails(t *testing.T) {
	data := storeOf(t, 30)
	conf := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTMAP_CONFIG", conf)
	tests := []struct {
		name  string
		args  []string
		limit int
	}{
		{"list", []string{"list", "--json", "--data-dir", data}, 10},
		{"list", []string{"list", "--data-dir", data}, 0},
		{"usage", []string{"usage", "--json", "--data-dir", data}, 0},
		{"show", []string{"show", "--data-dir", data, "full-aa"}, 0},
		{"status", []string{"status", "--data-dir", data}, 0},
		{"doctor", []string{"doctor", "--data-dir", data}, 0},
		{"prices", []string{"prices"}, 0},
		{"config", []string{"config", "show"}, 0},
		{"version", []string{"version"}, 0},
		{"version", []string{"--version"}, 0},
		{"help", []string{"help", "list"}, 0},
		{"list", []string{"list", "-h"}, 0},
		{"completion", []string{"completion", "bash"}, 100},
		{"export", []string{"export", "--format", "jsonl", "--data-dir", data}, 10},
		{"export", []string{"export", "--format", "agentscope", "--data-dir", data}, 10},
		{"export", []string{"export", "--format", "attemptdb", "--data-dir", data}, 10}, // wrote a line per map
		{"export", []string{"export", "--format", "bundle", "--data-dir", data}, 10},
	}
	for _, tt := range tests {
		w := &fullWriter{limit: tt.limit}
		var stderr bytes.Buffer
		code := dispatch(context.Background(), tt.args, w, &stderr)
		want := "agentmap " + tt.name + ": writing output: " + errDiskFull.Error() + "\n"
		if code != exitFailure || !strings.HasSuffix(stderr.String(), want) || strings.Count(stderr.String(), "writing output") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and one %q", tt.args, code, stderr.String(), want)
		}
		if w.writes > 0 {
			t.Errorf("%v: %d writes tried after the first failed", tt.args, w.writes)
		}
	}
}

// A command that reports its own write error (build -o -) is not
// followed by a second message.
func TestFailedStdoutWriteSaidOnce(t *testing.T) {
	w := &fullWriter{}
	var stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"build", "-o", "-", filepath.Join("..", "..", "testdata", "claude", "agent-abc1234.jsonl")}, w, &stderr)
	if code != exitFailure || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "agentmap build: writing output: ") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// The same through the real process and a real full device, where there is one.
func TestWriteToDevFull(t *testing.T) {
	if args := os.Getenv("AGENTMAP_TEST_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"agentmap"}, strings.Fields(args)...)
		main()
		return
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here")
	}
	defer full.Close()
	data := storeOf(t, 3)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteToDevFull$")
	cmd.Env = append(os.Environ(), "AGENTMAP_TEST_MAIN_ARGS=list --json --data-dir "+data)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Fatalf("exit %v, stderr %q; want exit 1", err, stderr.String())
	}
	if got := stderr.String(); !strings.HasPrefix(got, "agentmap list: writing output: write /dev/stdout: ") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q", got)
	}
}

// What the commands say on stderr names files, whose names may hold
// control sequences: the escapes are written as \xNN, never played on the
// terminal (a carriage return inside a name too, which would overwrite
// the line), while newlines, tabs, a progress bar's carriage return and
// any printable text, UTF-8 included, pass as they are.
func TestStderrShowsControlBytesEscaped(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	w := &terminalSafe{f: f}
	in := "\ragentmap build: /tmp/ev\x1b[31mRED\x1b]0;title\x07\x7f\u009b\rOK.jsonl: naïve ✓\tok\r\n"
	if n, err := fmt.Fprint(w, in); err != nil || n != len(in) {
		t.Fatalf("write: %d, %v", n, err)
	}
	f.Close()
	got, _ := os.ReadFile(f.Name())
	want := "\r" + `agentmap build: /tmp/ev\x1b[31mRED\x1b]0;title\x07\x7f\u009b\x0dOK.jsonl: naïve ✓` + "\tok\r\n"
	if string(got) != want {
		t.Errorf("written %q, want %q", got, want)
	}
	// A C1 control cut between two writes (a buffered writer's flush
	// between its two bytes) is escaped as a whole, and a character of
	// the same first byte so cut is written whole.
	for _, c := range []struct {
		writes []string
		want   string
	}{
		{[]string{"ev\xc2", "\x9b31mRED"}, `ev\u009b31mRED`},
		{[]string{"25 \xc2", "\xb0C"}, "25 \u00b0C"},
		{[]string{"a\xc2", "\xc2", "\x85b"}, "a\xc2" + `\u0085b`},
		{[]string{"x\xc2", "\rbar"}, "x\xc2\rbar"},
		{[]string{"ev\xc2", "", "\x9b31mRED"}, `ev\u009b31mRED`},
		{[]string{"name\xc2"}, `name\xc2`}, // held to the end: written by flush
	} {
		g, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		w := &terminalSafe{f: g}
		for _, s := range c.writes {
			if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
				t.Fatalf("write %q: %d, %v", s, n, err)
			}
		}
		w.flush()
		g.Close()
		if got, _ := os.ReadFile(g.Name()); string(got) != c.want {
			t.Errorf("writes %q: written %q, want %q", c.writes, got, c.want)
		}
	}
	if fd, ok := fdOf(w); !ok || fd != f.Fd() {
		t.Error("the descriptor behind stderr is hidden: a progress bar would not see its terminal")
	}

	// The real binary, a build of a file so named.
	bin := opsBinary(t, t.TempDir())
	dir := t.TempDir()
	bad := filepath.Join(dir, "ev\x1b[31mRED\x1b]0;T\x07.jsonl")
	os.WriteFile(bad, []byte("not a log\n"), 0o600)
	out, _ := exec.Command(bin, "build", "-o", filepath.Join(dir, "out")+"/", bad).CombinedOutput()
	if bytes.ContainsAny(out, "\x1b\x07") || !bytes.Contains(out, []byte(`ev\x1b[31mRED\x1b]0;T\x07.jsonl`)) {
		t.Errorf("agentmap build of a file named with escapes says %q", out)
	}
}
