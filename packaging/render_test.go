package packaging

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/packaging")

func linuxSpec() Spec {
	return Spec{
		GOOS: "linux", Home: "/home/u", UID: 1000,
		Binary:     "/home/u/go/bin/agentmap",
		ConfigFile: "/home/u/.config/agentmap/config.toml",
		DataDir:    "/home/u/.local/share/agentmap",
	}
}

func darwinSpec() Spec {
	return Spec{
		GOOS: "darwin", Home: "/Users/u", UID: 501,
		Binary:     "/opt/homebrew/bin/agentmap",
		ConfigFile: "/Users/u/Library/Application Support/agentmap/config.toml",
		DataDir:    "/Users/u/Library/Application Support/agentmap",
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "testdata", "packaging", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./packaging -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the render:\n%s\n(run go test ./packaging -update and review the diff)", path, got)
	}
}

func TestRenderGolden(t *testing.T) {
	unit, err := RenderUnit(linuxSpec())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "agentmap.service", unit)
	plist, err := RenderPlist(darwinSpec())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, LaunchdLabel+".plist", plist)
	noConfig := linuxSpec()
	noConfig.ConfigFile = ""
	unit, err = RenderUnit(noConfig)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "agentmap-default-config.service", unit)
}

func TestUnitContents(t *testing.T) {
	s := linuxSpec()
	s.Binary = "/opt/agent map/agentmap"
	unit, err := RenderUnit(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`ExecStart=/opt/agent\x20map/agentmap "run" "--config" "/home/u/.config/agentmap/config.toml"` + "\n",
		"Restart=on-failure\n",
		"WantedBy=default.target\n",
		"IOSchedulingClass=idle\n",
		"ExecReload=/bin/kill -HUP $MAINPID\n",
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(string(unit), "multi-user.target") {
		t.Error("a user unit must not want multi-user.target")
	}
}

// systemd-analyze verify checks the unit as systemd itself reads it. It
// needs the Debian systemd package; without it the test says so and skips.
func TestUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not found: install the systemd package (apt-get install -y systemd) to verify the unit")
	}
	dir := t.TempDir()
	// An executable at a path with a space, so that the escaping of
	// ExecStart is verified too.
	binDir := filepath.Join(dir, "agent bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "agentmap")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := linuxSpec()
	s.Binary = bin
	unit, err := RenderUnit(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, UnitName+".service")
	if err := os.WriteFile(path, unit, 0o644); err != nil {
		t.Fatal(err)
	}
	runtime := filepath.Join(dir, "runtime")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "--user", "verify", path)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HOME="+dir, "SYSTEMD_LOG_LEVEL=notice")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify failed: %v\n%s", err, out)
	}
	// verify warns about unknown keys and the like without failing.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, UnitName+".service") {
			t.Errorf("systemd-analyze: %s", line)
		}
	}
}
