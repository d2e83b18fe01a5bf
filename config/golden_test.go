package config

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/config")

// The default file for a fixed Linux home is kept as a golden file, so that
// a change to what users get from `config init` shows up in review.
func TestDefaultFileGolden(t *testing.T) {
	p := linux(nil)
	got := render(defaultsFor(p), p, true)
	path := filepath.Join("..", "testdata", "config", "default-linux.toml")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./config -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("default file differs from %s (run go test ./config -update and review the diff)", path)
	}
}
