package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadBuildVersion(t *testing.T) {
	vcs := func(mod string, modified bool) *debug.BuildInfo {
		m := "false"
		if modified {
			m = "true"
		}
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/agentmap/agentmap", Version: mod},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "3e9d9b9abcdef0123456789"},
				{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: m}}}
	}
	cases := []struct {
		name, ldflags string
		info          *debug.BuildInfo
		short         string
		longHas       []string
	}{
		{"test binary", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel", nil},
		{"no build info", "", nil, "devel", nil},
		{"checkout", "", vcs("(devel)", false), "devel+3e9d9b9abcde",
			[]string{"revision 3e9d9b9abcdef0123456789", "built from a commit of 2026-12-01T10:00:00Z"}},
		{"dirty checkout", "", vcs("v0.0.0-20261201100000-3e9d9b9abcde+dirty", true), "devel+3e9d9b9abcde-dirty",
			[]string{"module v0.0.0-20261201100000-3e9d9b9abcde+dirty", "(modified)"}},
		{"go install @tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "1.4.0", nil},
		{"release ldflags", "v1.5.0", vcs("(devel)", false), "1.5.0", []string{"agentmap 1.5.0, revision 3e9d9b9"}},
	}
	for _, c := range cases {
		b := readBuildVersion(c.ldflags, c.info)
		if got := b.short(); got != c.short {
			t.Errorf("%s: short %q, want %q", c.name, got, c.short)
		}
		for _, s := range c.longHas {
			if !strings.Contains(b.long(), s) {
				t.Errorf("%s: %q lacks %q", c.name, b.long(), s)
			}
		}
	}
}

func TestVersionCommands(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, _ := run(t, args...)
		if code != exitOK || !strings.HasPrefix(stdout, "agentmap devel") {
			t.Errorf("%v: %d %q", args, code, stdout)
		}
	}
	if code, stdout, _ := run(t, "version", "--json"); code != exitOK || !strings.Contains(stdout, `"version": "devel"`) {
		t.Errorf("version --json: %d %q", code, stdout)
	}
	// A test binary has no VCS stamps: maps it writes say the same thing every time.
	if producer() != "agentmap devel" {
		t.Errorf("producer %q", producer())
	}
}

// A release build says its -ldflags version, and the maps it writes carry
// it in session.cliVersion.
func TestReleaseVersionInBinaryAndMaps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "agentmap")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "agentmap 9.8.7, ") {
		t.Errorf("--version: %q %v", out, err)
	}
	m, err := exec.Command(bin, "build", "-o", "-", fixture).Output()
	if err != nil || !strings.Contains(string(m), `"cliVersion": "agentmap 9.8.7"`) {
		t.Errorf("the map's cliVersion: %v\n%.600s", err, m)
	}
}
