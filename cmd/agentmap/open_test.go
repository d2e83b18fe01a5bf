package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFakeOpener is the opener of the --open tests when the test binary
// runs itself with AGENTMAP_FAKE_OPENER set: "ok" writes the path it was
// given to AGENTMAP_FAKE_OPENER_LOG, "fail" does what xdg-open does on a
// machine without a desktop (a message on stderr, exit 3), "slow" writes
// the path a second later. Run as a test, it does nothing.
func TestFakeOpener(t *testing.T) {
	mode := os.Getenv("AGENTMAP_FAKE_OPENER")
	if mode == "" {
		return
	}
	path := os.Args[len(os.Args)-1]
	switch mode {
	case "fail":
		os.Stderr.WriteString("xdg-open: no method available for opening '" + path + "'\n")
		os.Exit(3)
	case "slow":
		time.Sleep(time.Second)
	}
	os.WriteFile(os.Getenv("AGENTMAP_FAKE_OPENER_LOG"), []byte(path), 0o600)
	os.Exit(0)
}

// fakeOpener makes --open run TestFakeOpener in mode; it returns the file
// the opener writes the path to, and the commands started.
func fakeOpener(t *testing.T, mode string) (log string, started *[]*exec.Cmd) {
	log = filepath.Join(t.TempDir(), "opened")
	started = new([]*exec.Cmd)
	old := opener
	opener = func(abs string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFakeOpener$", "--", abs)
		cmd.Env = append(os.Environ(), "AGENTMAP_FAKE_OPENER="+mode, "AGENTMAP_FAKE_OPENER_LOG="+log)
		*started = append(*started, cmd)
		return cmd
	}
	t.Cleanup(func() { opener = old })
	return log, started
}

// TestReportOpenWaitsForTheOpener: --open hands the report's absolute
// path to the opener and waits for its answer; an opener that fails or is
// not there is a failure (exit 1) that says so on stderr in one line, with
// the file's URL to open by hand, and the report is written all the same.
func TestReportOpenWaitsForTheOpener(t *testing.T) {
	dir, maps := fixtureMaps(t)
	out := filepath.Join(t.TempDir(), "r.html")
	abs, _ := filepath.Abs(out)
	self := filepath.Base(os.Args[0])
	written := "agentmap report: " + counted(len(maps), "session") + " -> " + out

	t.Run("opened", func(t *testing.T) {
		log, _ := fakeOpener(t, "ok")
		code, _, stderr := run(t, "report", "--maps", dir, "-o", out, "--open")
		if code != exitOK || !strings.HasPrefix(stderr, written) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		// Read at once: the command waited for the opener.
		if got, err := os.ReadFile(log); err != nil || string(got) != abs {
			t.Errorf("the opener was given %q (%v), want %q", got, err, abs)
		}
	})

	for _, tt := range []struct {
		name, mode, why string
	}{
		{"the opener fails", "fail", self + ": exit status 3"},
		{"no opener", "", "agentmap-no-such-opener: not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(out)
			if tt.mode != "" {
				fakeOpener(t, tt.mode)
			} else {
				old := opener
				opener = func(abs string) *exec.Cmd { return exec.Command("agentmap-no-such-opener", abs) }
				t.Cleanup(func() { opener = old })
			}
			code, _, stderr := run(t, "report", "--maps", dir, "-o", out, "--open")
			want := written + " (" // the KiB of the report
			if code != exitFailure || !strings.HasPrefix(stderr, want) {
				t.Fatalf("exit %d, stderr %q; want exit 1", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			wantLine := "agentmap report: could not open a browser (" + tt.why + "); open " + fileURL(abs) + " yourself"
			if len(lines) != 2 || lines[1] != wantLine {
				t.Errorf("stderr %q\nwant its last line %q", stderr, wantLine)
			}
			if _, err := os.Stat(out); err != nil {
				t.Errorf("the report is not written: %v", err)
			}
		})
	}

	// An opener still running after openWait has found a browser to run:
	// the command returns without it, and it is reaped when it exits.
	t.Run("the opener runs on", func(t *testing.T) {
		defer func(d time.Duration) { openWait = d }(openWait)
		openWait = 50 * time.Millisecond
		log, started := fakeOpener(t, "slow")
		code, _, stderr := run(t, "report", "--maps", dir, "-o", out, "--open")
		if code != exitOK || strings.Contains(stderr, "could not") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if _, err := os.Stat(log); err == nil {
			t.Fatal("the command waited for the opener past openWait")
		}
		if runtime.GOOS != "linux" || len(*started) != 1 {
			return
		}
		proc := "/proc/" + strconv.Itoa((*started)[0].Process.Pid)
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(proc); os.IsNotExist(err) {
				return
			}
		}
		stat, _ := os.ReadFile(proc + "/stat")
		t.Errorf("the opener is not reaped: %s", stat)
	})
}

func TestFileURL(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/a b/r.html":    "file:///tmp/a%20b/r.html",
		"/home/me/r#1.html":  "file:///home/me/r%231.html",
		"/tmp/report.html":   "file:///tmp/report.html",
		"/tmp/100%/r.html":   "file:///tmp/100%25/r.html",
		"/tmp/r?x.html":      "file:///tmp/r%3Fx.html",
		"/tmp/ünïcode.html":  "file:///tmp/%C3%BCn%C3%AFcode.html",
		"/tmp/semi;colon.ht": "file:///tmp/semi;colon.ht",
	} {
		if got := fileURL(in); got != want {
			t.Errorf("fileURL(%q) = %q, want %q", in, got, want)
		}
	}
}
