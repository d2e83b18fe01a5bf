package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/packaging"
)

// serviceHome is a home with none of the variables that move roots set,
// no user manager to ask and no package's unit, for the service's
// environment to be the test's alone.
func serviceHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, name := range config.ServiceEnv {
		t.Setenv(name, "")
	}
	t.Setenv(config.EnvConfig, "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	old := packaging.PackagedUnitPath
	packaging.PackagedUnitPath = filepath.Join(home, "no-package", "agentmap.service")
	t.Cleanup(func() { packaging.PackagedUnitPath = old })
	return home
}

// The service is given the roots and directories of the shell install
// runs in; a value the unit cannot hold is named, with what to do.
func TestInstallCarriesTheEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the dry run checked here is the systemd one")
	}
	home := serviceHome(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("CODEX_HOME", filepath.Join(home, "codex"))
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "my claude"))
	_, out, errOut := runCmd(cmdInstall, "--dry-run")
	for _, want := range []string{
		"\nEnvironment=CODEX_HOME=" + filepath.Join(home, "codex") + "\n",
		"\nEnvironment=XDG_CONFIG_HOME=" + filepath.Join(home, "cfg") + "\n",
		"\nEnvironment=XDG_DATA_HOME=" + filepath.Join(home, "data") + "\n",
		"the service is given CODEX_HOME=" + filepath.Join(home, "codex") + ", XDG_CONFIG_HOME=",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install --dry-run lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "CLAUDE_CONFIG_DIR") {
		t.Errorf("a value with a space is written into the unit:\n%s", out)
	}
	if !strings.Contains(errOut, "warning: $CLAUDE_CONFIG_DIR is set here, but the service file cannot hold its value") ||
		!strings.Contains(errOut, "(agents.claude.roots)") {
		t.Errorf("no warning for the value left out:\n%s", errOut)
	}
	// The service's data directory is the shell's: the unit runs there.
	if !strings.Contains(out, "would run: systemctl --user enable agentmap.service") {
		t.Errorf("no plan:\n%s", out)
	}
}

// doctor says when the service was given other roots or directories than
// this shell has, and nothing when they agree.
func TestDoctorComparesTheServiceEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no per-user service here")
	}
	home := serviceHome(t)
	spec, err := packaging.Current("", filepath.Join(home, "data"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if _, ok := serviceEnvCheck(getenv); ok {
		t.Error("a check with no service installed")
	}
	spec.CarryEnv([]string{"CODEX_HOME"}, func(string) string { return "/srv/codex-a" })
	unit, err := packaging.Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := spec.File()
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, unit, 0o644); err != nil {
		t.Fatal(err)
	}
	env["CODEX_HOME"] = "/srv/codex-a"
	if ch, ok := serviceEnvCheck(getenv); ok {
		t.Errorf("the same environment: %+v", ch)
	}
	env["CODEX_HOME"] = "/srv/codex-b"
	env["XDG_DATA_HOME"] = "/srv/data"
	ch, ok := serviceEnvCheck(getenv)
	for _, want := range []string{"$CODEX_HOME is /srv/codex-b here and /srv/codex-a for the service", "$XDG_DATA_HOME is /srv/data here and not set for the service", "agentmap install"} {
		if !ok || ch.Level != levelWarn || !strings.Contains(ch.Msg, want) {
			t.Errorf("check %+v lacks %q", ch, want)
		}
	}
	delete(env, "CODEX_HOME")
	delete(env, "XDG_DATA_HOME")
	if ch, ok := serviceEnvCheck(getenv); !ok || !strings.Contains(ch.Msg, "$CODEX_HOME is /srv/codex-a for the service and not set here") {
		t.Errorf("unset here: %+v", ch)
	}
}
