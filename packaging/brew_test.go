package packaging

import (
	"os"
	"path/filepath"
	"testing"
)

// Installed by Homebrew, the service runs the binary through brew's opt
// link, which every upgrade keeps, not the versioned Cellar path that
// brew upgrade and brew cleanup delete.
func TestStableBinaryOfHomebrew(t *testing.T) {
	prefix, err := filepath.EvalSymlinks(t.TempDir()) // macOS's is under a link
	if err != nil {
		t.Fatal(err)
	}
	cellarBin := filepath.Join(prefix, "Cellar", "agentmap", "1.0.0", "bin", "agentmap")
	if err = os.MkdirAll(filepath.Dir(cellarBin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cellarBin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := stableBinary(cellarBin); got != cellarBin {
		t.Errorf("without the opt link: %s, want %s", got, cellarBin)
	}
	opt := filepath.Join(prefix, "opt", "agentmap")
	if err := os.MkdirAll(filepath.Dir(opt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "Cellar", "agentmap", "1.0.0"), opt); err != nil {
		t.Fatal(err)
	}
	// What os.Executable gives resolved, as Current resolves it.
	bin := filepath.Join(prefix, "bin", "agentmap")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "Cellar", "agentmap", "1.0.0", "bin", "agentmap"), bin); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(prefix, "opt", "agentmap", "bin", "agentmap")
	if got := stableBinary(resolved); got != want {
		t.Errorf("Homebrew: %s, want %s", got, want)
	}

	// Anywhere else, the resolved path stands.
	for _, p := range []string{
		"/usr/bin/agentmap",
		filepath.Join(prefix, "Cellar", "other", "1.0.0", "bin", "agentmap"),
		filepath.Join(prefix, "Kegs", "agentmap", "1.0.0", "bin", "agentmap"),
		filepath.Join(prefix, "Cellar", "agentmap", "1.0.0", "libexec", "agentmap"),
	} {
		if got := stableBinary(p); got != p {
			t.Errorf("%s: %s", p, got)
		}
	}
}
