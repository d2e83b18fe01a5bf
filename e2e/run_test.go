package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// client runs one client command in the world and returns its stdout. A
// failing client fails the test with the tail of its output; its output is
// kept in the world for a look afterwards.
func (w *world) client(t *testing.T, dir, name string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.program(args[0]), args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), w.env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	os.WriteFile(filepath.Join(w.root, name+".stdout"), stdout.Bytes(), 0o600)
	os.WriteFile(filepath.Join(w.root, name+".stderr"), stderr.Bytes(), 0o600)
	t.Logf("%s: %s in %v", name, strings.Join(args[:1], " "), time.Since(start).Round(time.Millisecond))
	if err == nil && w.after != nil {
		w.after(name)
	}
	if err != nil {
		t.Fatalf("%s failed: %v\nstderr:\n%s\nstdout tail:\n%s", name, err, tail(stderr.Bytes()), tail(stdout.Bytes()))
	}
	return stdout.Bytes()
}

// program finds a client in the install directories (AGENTMAP_E2E_BIN is
// a list of them, separated as in PATH).
func (w *world) program(name string) string {
	for _, dir := range filepath.SplitList(w.bin) {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	return filepath.Join(w.bin, name)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func tail(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}
