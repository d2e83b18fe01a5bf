//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithin runs the binary, which must exit within limit (one that does
// not is dumped with SIGQUIT and the test fails); it returns the exit
// code and the output.
func (h *opsHome) runWithin(limit time.Duration, args ...string) (int, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = h.env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		h.t.Fatalf("agentmap %s still ran after %v:\n%.4000s", strings.Join(args, " "), limit, out)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		h.t.Fatal(err)
	}
	return 0, string(out)
}

// A config file that is a named pipe is refused, not waited on: the
// commands that read it fail at once saying what it is, and a running
// daemon keeps the config in effect, says why in its log and status, and
// reads a regular file put back.
func TestConfigFileThatIsANamedPipe(t *testing.T) {
	bin := opsBinary(t, t.TempDir())
	h := newOpsHome(t, bin)
	fifo := h.path("pipe.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, args := range [][]string{{"config", "check", "--config", fifo}, {"list", "--config", fifo}} {
		code, out := h.runWithin(30*time.Second, args...)
		if code == 0 || !strings.Contains(out, fifo+" is not a regular file (a named pipe)") {
			t.Errorf("agentmap %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}

	cfg := h.path(".config/agentmap/config.toml")
	data := h.path("data")
	config := "version = 1\ndata_dir = " + `"` + data + `"` + "\n[watch]\ndebounce = \"20ms\"\nrescan = \"1s\"\n"
	appendFile(t, cfg, config)
	d := exec.Command(bin, "run", "--config-poll", "50ms")
	d.Env = h.env
	var dlog lockedBuffer
	d.Stdout, d.Stderr = &dlog, &dlog
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		exited := make(chan struct{})
		go func() { d.Wait(); close(exited) }()
		d.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			d.Process.Signal(syscall.SIGQUIT) // its stacks, for the log
			<-exited
			t.Errorf("the daemon did not stop:\n%.8000s", dlog.String())
		}
	}()
	// The data directory named: status reads no config file.
	status := func() daemonStatus {
		var st daemonStatus
		if code, out := h.runWithin(30*time.Second, "status", "--json", "--no-service", "--data-dir", data); code == 0 {
			json.Unmarshal([]byte(out), &st)
		}
		return st
	}
	waitFor(t, "the daemon's catch-up", &dlog, func() bool {
		st := status()
		return st.Running && !st.CatchUp.Finished.IsZero()
	})

	if err := os.Rename(cfg, cfg+".bak"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pipe to be refused", &dlog, func() bool {
		st := status()
		return st.ConfigError != nil && strings.Contains(strings.Join(st.ConfigError.Problems, " "), "is not a regular file (a named pipe)")
	})
	if !strings.Contains(dlog.String(), "config not reloaded; keeping the one in effect") {
		t.Errorf("the daemon's log does not say the config was kept:\n%s", dlog.String())
	}
	// A signal asks for a reload too: it is refused the same way, and
	// answered (a reload stuck on the pipe would take no signal after).
	d.Process.Signal(syscall.SIGHUP)
	time.Sleep(500 * time.Millisecond)

	os.Remove(cfg)
	appendFile(t, cfg, config)
	waitFor(t, "the regular file put back to be read", &dlog, func() bool {
		st := status()
		return st.Running && st.ConfigError == nil
	})
}
