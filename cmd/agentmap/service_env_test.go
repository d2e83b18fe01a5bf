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
		os.Unsetenv(name)
		t.Setenv(name, "")
		os.Unsetenv(name) // t.Setenv restores it after; unset meanwhile
	}
	t.Setenv(config.EnvConfig, "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("SNAP", "")
	t.Setenv("FLATPAK_ID", "")
	old := packaging.PackagedUnitPath
	packaging.PackagedUnitPath = filepath.Join(home, "no-package", "agentmap.service")
	t.Cleanup(func() { packaging.PackagedUnitPath = old })
	return home
}

// writeUnit installs a unit carrying env, as an earlier install would.
func writeUnit(t *testing.T, env map[string]string) {
	t.Helper()
	spec, err := packaging.Current("", filepath.Join(os.Getenv("HOME"), "data"))
	if err != nil {
		t.Fatal(err)
	}
	spec.CarryEnv(config.ServiceEnv, func(k string) string { return env[k] })
	unit, err := packaging.Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := spec.File()
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, unit, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The service is given the roots and directories of the shell install
// runs in, relative paths made absolute; a value the unit cannot hold is
// named, with what to do; the data directory in the plan is the service's.
func TestInstallCarriesTheEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the dry run checked here is the systemd one")
	}
	home := serviceHome(t)
	t.Chdir(home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("CODEX_HOME", "work/codex")
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "my claude"))
	_, out, errOut := runCmd(cmdInstall, "--dry-run")
	for _, want := range []string{
		"\nEnvironment=CODEX_HOME=" + filepath.Join(home, "work", "codex") + "\n",
		"\nEnvironment=XDG_CONFIG_HOME=" + filepath.Join(home, "cfg") + "\n",
		"\nEnvironment=XDG_DATA_HOME=" + filepath.Join(home, "data") + "\n",
		"the service is given CODEX_HOME=" + filepath.Join(home, "work", "codex") + ", XDG_CONFIG_HOME=",
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
}

// Installed again from a shell without the variables (a script, an ssh
// session, an IDE's terminal), the service keeps what it was given, as it
// keeps its --config; set empty, a variable is dropped.
func TestInstallKeepsWhatTheServiceWasGiven(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the dry run checked here is the systemd one")
	}
	home := serviceHome(t)
	writeUnit(t, map[string]string{"CODEX_HOME": "/srv/codex", "XDG_DATA_HOME": filepath.Join(home, "xdg")})
	_, out, _ := runCmd(cmdInstall, "--dry-run")
	for _, want := range []string{
		"the service keeps CODEX_HOME=/srv/codex, given by an earlier install (CODEX_HOME= agentmap install drops it)",
		// The unit rendered again, with what it was given, is the one
		// installed: nothing changes, nothing restarts.
		"agentmap.service is up to date",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install --dry-run lacks %q:\n%s", want, out)
		}
	}
	t.Setenv("CODEX_HOME", "")
	_, out, _ = runCmd(cmdInstall, "--dry-run")
	if strings.Contains(out, "Environment=CODEX_HOME") || !strings.Contains(out, "the service is no longer given CODEX_HOME (set empty here)") {
		t.Errorf("CODEX_HOME set empty is not dropped:\n%s", out)
	}
}

// An XDG directory of a snap's (VS Code's snap sets XDG_DATA_HOME into
// its revision's folder, which snapd removes) is not given to the service.
func TestInstallLeavesASandboxsDirectoriesOut(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the dry run checked here is the systemd one")
	}
	home := serviceHome(t)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "snap", "code", "182", ".local", "share"))
	t.Setenv("CODEX_HOME", "/srv/codex")
	_, out, errOut := runCmd(cmdInstall, "--dry-run")
	if strings.Contains(out, "XDG_DATA_HOME") || !strings.Contains(out, "\nEnvironment=CODEX_HOME=/srv/codex\n") {
		t.Errorf("install --dry-run:\n%s", out)
	}
	if !strings.Contains(errOut, "warning: $XDG_DATA_HOME here is a sandbox's") || !strings.Contains(errOut, filepath.Join(home, ".local", "share", "agentmap")) {
		t.Errorf("no warning for the sandbox's directory:\n%s", errOut)
	}
}

// doctor says when the service follows other roots or keeps another data
// directory than agentmap here, because its environment differs; not when
// the environments agree, nor when the config names the roots and data
// directory the variables would move.
func TestDoctorComparesTheServiceEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no per-user service here")
	}
	home := serviceHome(t)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	here := func() *config.Config {
		restore := applyEnv(env)
		defer restore()
		return config.Default()
	}
	if _, ok := serviceEnvCheck(here(), "", false, getenv); ok {
		t.Error("a check with no service installed")
	}
	writeUnit(t, map[string]string{"CODEX_HOME": "/srv/codex-a"})
	env["CODEX_HOME"] = "/srv/codex-a"
	if ch, ok := serviceEnvCheck(here(), "", false, getenv); ok {
		t.Errorf("the same environment: %+v", ch)
	}
	env["CODEX_HOME"] = "/srv/codex-b"
	env["XDG_DATA_HOME"] = "/srv/data"
	ch, ok := serviceEnvCheck(here(), "", false, getenv)
	for _, want := range []string{
		"$CODEX_HOME is /srv/codex-b here and /srv/codex-a for the service",
		"$XDG_DATA_HOME is /srv/data here and not set for the service",
		"it keeps its data in " + filepath.Join(home, ".local", "share", "agentmap") + ", agentmap here in /srv/data/agentmap",
		"it follows /srv/codex-a, " + filepath.Join(home, ".codex") + " for codex, agentmap here /srv/codex-b, " + filepath.Join(home, ".codex"),
		"agentmap install",
	} {
		if !ok || ch.Level != levelWarn || !strings.Contains(ch.Msg, want) {
			t.Errorf("check %+v lacks %q", ch, want)
		}
	}
	// A config naming the roots and the data directory: the variables
	// move nothing, and nothing is said.
	cfg := filepath.Join(home, "pinned.toml")
	os.WriteFile(cfg, []byte("data_dir = \"/srv/pinned\"\n[agents.codex]\nroots = [\"/srv/codex-pinned\"]\n[agents.opencode]\nroots = [\"/srv/oc\"]\n"), 0o600)
	pinned, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ch, ok := serviceEnvCheck(pinned, cfg, false, getenv); ok {
		t.Errorf("roots and data_dir in the config: %+v", ch)
	}
}

// uninstall --purge removes the data directory of the service, reckoned in
// the environment it was given, not in this shell's.
func TestUninstallPurgesTheServicesDataDirectory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the unit checked here is the systemd one")
	}
	home := serviceHome(t)
	svcData := filepath.Join(home, "xdg", "agentmap")
	shellData := filepath.Join(home, "elsewhere", "agentmap")
	for _, d := range []string{svcData, shellData} {
		os.MkdirAll(d, 0o700)
		os.WriteFile(filepath.Join(d, "state.db"), []byte("x"), 0o600)
	}
	writeUnit(t, map[string]string{"XDG_DATA_HOME": filepath.Join(home, "xdg")})
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "elsewhere"))
	_, out, errOut := runCmd(cmdUninstall, "--purge", "--dry-run")
	if !strings.Contains(out, svcData) || strings.Contains(out, shellData) {
		t.Errorf("uninstall --purge --dry-run:\n%s\n%s", out, errOut)
	}
}
