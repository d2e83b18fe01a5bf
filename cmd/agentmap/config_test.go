package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/watchers"
)

func runCmd(f func(context.Context, []string, io.Writer, io.Writer) int, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := f(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestConfigCommands(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(config.EnvConfig, "")
	path := filepath.Join(dir, "sub", "config.toml")
	wrap := cmdConfig

	if code, out, errOut := runCmd(wrap, "init", "--config", path); code != exitOK || !strings.Contains(out, path) {
		t.Fatalf("init: %d %q %q", code, out, errOut)
	}
	if st, err := os.Stat(path); err != nil || (runtime.GOOS != "windows" && st.Mode().Perm() != 0o600) {
		t.Fatalf("init wrote %v, %v", st, err)
	}
	if !bytes.Equal(mustReadFile(t, path), config.DefaultFile()) {
		t.Error("init did not write the default file")
	}
	if code, _, errOut := runCmd(wrap, "--config", path, "init"); code != exitFailure || !strings.Contains(errOut, "already exists") {
		t.Errorf("second init: %d %q", code, errOut)
	}
	if code, _, _ := runCmd(wrap, "init", "--config", path, "--force"); code != exitOK {
		t.Errorf("init --force: %d", code)
	}
	if code, out, _ := runCmd(wrap, "check", "--config", path); code != exitOK || !strings.Contains(out, "ok") {
		t.Errorf("check: %d %q", code, out)
	}

	code, out, _ := runCmd(wrap, "show", "--config", path)
	if code != exitOK || !strings.HasPrefix(out, "# in effect: "+path) {
		t.Fatalf("show: %d %q", code, out)
	}
	shown := filepath.Join(dir, "shown.toml")
	os.WriteFile(shown, []byte(out), 0o600)
	got, err := config.Load(shown)
	if err != nil {
		t.Fatalf("show's output does not load: %v", err)
	}
	want, _ := config.Load(path)
	got.File, want.File = "", ""
	if !reflect.DeepEqual(got, want) {
		t.Error("show's output loads as another config")
	}

	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("version = 1\n\n[maps]\npath_mode = \"plain\"\n[flush]\nidel = \"5m\"\n"), 0o600)
	code, _, errOut := runCmd(wrap, "check", "--config", bad)
	if code != exitFailure {
		t.Errorf("check of a bad file: exit %d", code)
	}
	for _, want := range []string{bad + ":4: maps.path_mode:", bad + ":6: flush.idel: unknown key", "2 problem(s)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check output lacks %q:\n%s", want, errOut)
		}
	}

	if code, _, errOut := runCmd(wrap, "check", "--config", filepath.Join(dir, "absent.toml")); code != exitFailure || !strings.Contains(errOut, "no config file") {
		t.Errorf("check of a named missing file: %d %q", code, errOut)
	}
	for _, args := range [][]string{{}, {"frobnicate"}, {"check", "extra"}, {"check", "--nope"}} {
		if code, _, _ := runCmd(wrap, args...); code != exitUsage {
			t.Errorf("config %q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The config's defaults are the daemon's: a config file that sets nothing
// must change nothing.
func TestConfigDefaultsAreTheDaemons(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	for _, env := range []map[string]string{
		{"XDG_CONFIG_HOME": "", "XDG_DATA_HOME": "", "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": ""},
		{"XDG_CONFIG_HOME": filepath.Join(home, "xc"), "XDG_DATA_HOME": filepath.Join(home, "xd"),
			"CLAUDE_CONFIG_DIR": filepath.Join(home, "c1") + "," + filepath.Join(home, "c2"), "CODEX_HOME": filepath.Join(home, "cx")},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		c := config.Default()
		osEnv := watchers.OSEnv(runtime.GOOS)
		if want := daemon.DefaultDataDir(osEnv); c.DataDir != want {
			t.Errorf("data dir %s, daemon's %s", c.DataDir, want)
		}
		if c.Flush.Idle.Duration != daemon.DefaultIdle || c.Watch.Rescan.Duration != daemon.DefaultRescan ||
			c.Watch.Debounce.Duration != daemon.DefaultDebounce || int(c.Watch.MaxLine) != watchers.DefaultMaxLine {
			t.Errorf("timings differ from the daemon's: %+v %+v", c.Flush, c.Watch)
		}
	}
}

func TestServiceConfigFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(config.EnvConfig, "")
	if got := serviceConfigFile("", &config.Config{}); got != "" {
		t.Errorf("no flag, no env: %q", got)
	}
	f := filepath.Join(dir, "c.toml")
	if got := serviceConfigFile(f, &config.Config{File: f}); got != f {
		t.Errorf("flag: %q", got)
	}
	t.Setenv(config.EnvConfig, f)
	if got := serviceConfigFile("", &config.Config{}); got != f {
		t.Errorf("env: %q", got)
	}
}

// The test binary lives in a temporary build directory: installing it
// would point the service at a file about to vanish.
func TestInstallRefusesATemporaryBinary(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no per-user service here")
	}
	exe, _ := os.Executable()
	if !strings.Contains(exe, "go-build") {
		t.Skip("the test binary is not in a go-build directory")
	}
	t.Setenv("HOME", t.TempDir())
	// go install's destination stays (a temporary one is advised against
	// otherwise: packaging TestInstallAdviceLeavesTemporaryHomesOut).
	t.Setenv("GOBIN", "/opt/go/bin")
	t.Setenv(config.EnvConfig, "")
	code, out, errOut := runCmd(cmdInstall, "--dry-run")
	if code != exitOK || !strings.Contains(out, "would write") ||
		!strings.Contains(errOut, "agentmap install: warning: install would stop here: the running agentmap is a temporary build") ||
		!strings.Contains(errOut, "go install ./cmd/agentmap && ") {
		t.Errorf("install --dry-run of a test binary: %d %q %q", code, out, errOut)
	}
	code, _, errOut = runCmd(cmdInstall)
	if code != exitFailure || !strings.Contains(errOut, "agentmap install: the running agentmap is a temporary build") ||
		!strings.Contains(errOut, "go install ./cmd/agentmap && ") {
		t.Errorf("install of a test binary: %d %q", code, errOut)
	}
}

// install --dry-run of a config file that is not there yet plans with the
// defaults and warns, exit 0, as for whatever else would stop the install;
// the install itself refuses it.
func TestInstallDryRunOfAMissingConfig(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no per-user service here")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv(config.EnvConfig, "")
	missing := filepath.Join(t.TempDir(), "missing.toml")
	warning := "agentmap install: warning: install would stop here: no config file at " + missing + " (agentmap config init writes one)\n"
	code, out, errOut := runCmd(cmdInstall, "--dry-run", "--config", missing)
	if code != exitOK || !strings.Contains(out, "would write") || !strings.Contains(out, missing) || !strings.Contains(errOut, warning) {
		t.Errorf("install --dry-run --config MISSING: %d %q %q", code, out, errOut)
	}
	t.Setenv(config.EnvConfig, missing)
	if code, _, errOut := runCmd(cmdInstall, "--dry-run"); code != exitOK || !strings.Contains(errOut, warning) {
		t.Errorf("install --dry-run with $%s MISSING: %d %q", config.EnvConfig, code, errOut)
	}
	code, _, errOut = runCmd(cmdInstall, "--config", missing)
	if want := "agentmap install: no config file at " + missing + " (agentmap config init writes one)\n"; code != exitFailure || errOut != want {
		t.Errorf("install --config MISSING: %d %q; want %q", code, errOut, want)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Error("the dry run wrote the config file")
	}
}

// TestServiceBinary runs the real binary: config init, check, an invalid
// file rejected with key and line, and install --dry-run, in a temporary
// HOME.
func TestServiceBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the dry run checked here is the systemd one")
	}
	home := t.TempDir()
	bin := filepath.Join(t.TempDir(), "agentmap")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_DATA_HOME=", config.EnvConfig+"=", "XDG_RUNTIME_DIR=")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}
	path := filepath.Join(home, ".config", "agentmap", "config.toml")
	if code, out, errOut := run("config", "init"); code != 0 || !strings.Contains(out, path) {
		t.Fatalf("config init: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := run("config", "check"); code != 0 {
		t.Fatalf("config check: %d %q", code, errOut)
	}
	doc := strings.Replace(string(mustReadFile(t, path)), `path_mode = "relative"`, `path_mode = "secret"`, 1)
	os.WriteFile(path, []byte(doc), 0o600)
	line := 1 + strings.Count(doc[:strings.Index(doc, `path_mode = "secret"`)], "\n")
	code, _, errOut := run("config", "check")
	if want := path + ":" + strconv.Itoa(line) + ": maps.path_mode:"; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("invalid config: exit %d, stderr %q; want %q", code, errOut, want)
	}
	if code, _, errOut := run("install", "--dry-run"); code != 1 || !strings.Contains(errOut, "maps.path_mode") {
		t.Errorf("install with an invalid config: %d %q", code, errOut)
	}
	os.WriteFile(path, config.DefaultFile(), 0o600)

	// No user manager here (XDG_RUNTIME_DIR is empty): the dry run shows the
	// plan and explains what to do instead.
	code, out, errOut := run("install", "--dry-run")
	unit := filepath.Join(home, ".config", "systemd", "user", "agentmap.service")
	for _, want := range []string{"would write " + unit, "ExecStart=" + bin + ` "run"`, "WantedBy=default.target", "would run: systemctl --user enable agentmap.service"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if code != 0 || !strings.Contains(errOut, "warning: install would stop here") || !strings.Contains(errOut, "loginctl enable-linger") {
		t.Errorf("dry run without systemd --user: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Error("the dry run wrote the unit")
	}
}

// config init writes the roots found in the environment as comments, so
// that $CLAUDE_CONFIG_DIR and $CODEX_HOME keep working afterwards.
func TestConfigInitKeepsFollowingTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "first-claude"))
	t.Setenv("CODEX_HOME", filepath.Join(dir, "first-codex"))
	if code, _, errOut := runCmd(cmdConfig, "init", "--config", path); code != exitOK {
		t.Fatalf("init: %d %s", code, errOut)
	}
	body := string(mustReadFile(t, path))
	for _, want := range []string{"# roots = [", filepath.Join(dir, "first-claude"), filepath.Join(dir, "first-codex")} {
		if !strings.Contains(body, want) {
			t.Errorf("the written file lacks %q", want)
		}
	}
	if strings.Contains(body, "\nroots = ") || strings.Contains(body, "\napp_roots = ") {
		t.Error("roots written as values: the environment would be ignored from now on")
	}
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "later-claude"))
	t.Setenv("CODEX_HOME", filepath.Join(dir, "later-codex"))
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.Agents.Claude.Roots, filepath.Join(dir, "later-claude")) || !slices.Contains(c.Agents.Codex.Roots, filepath.Join(dir, "later-codex")) {
		t.Errorf("roots after the environment changed: %v %v", c.Agents.Claude.Roots, c.Agents.Codex.Roots)
	}
}

// flush of an id that names no session fails, daemon or not.
func TestFlushUnknownSession(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	body := fmt.Sprintf("version = 1\ndata_dir = %q\n[agents.claude]\nroots = [%q]\n[agents.codex]\nenabled = false\n[agents.cursor]\nenabled = false\n",
		filepath.ToSlash(filepath.Join(dir, "data")), filepath.ToSlash(filepath.Join(dir, "claude")))
	os.WriteFile(cfg, []byte(body), 0o600)
	code, _, errOut := runCmd(cmdFlush, "nonexistent", "--config", cfg)
	if code != exitFailure || !strings.Contains(errOut, "agentmap flush: nonexistent: no session in the store matches that id") {
		t.Errorf("flush nonexistent: exit %d %q", code, errOut)
	}
}

// A problem in the config file does not hide what the daemon wrote: the
// operator commands warn and read the data directory the file names; one
// that leaves the data directory unknown stops them, as before.
func TestOperatorCommandsDespiteAConfigProblem(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	typo := filepath.Join(dir, "typo.toml")
	os.WriteFile(typo, []byte("version = 1\ndata_dir = \""+data+"\"\n\n[maps]\npath_mode = \"sideways\"\n"), 0o600)
	for _, cmd := range [][]string{{"list"}, {"status", "--no-service"}} {
		code, out, errOut := run(t, append(cmd, "--config", typo)...)
		if code != exitOK || !strings.Contains(errOut, typo+":5: maps.path_mode:") ||
			!strings.Contains(errOut, "warning: "+typo+" has 1 problem(s) (agentmap config check); reading the data directory it names, "+data) {
			t.Errorf("%v with a typo in the file: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}
	// doctor fails on the file, and checks the data directory it names.
	if code, out, _ := run(t, "doctor", "--config", typo); code != exitFailure || !strings.Contains(out, "with the data directory it names") || !strings.Contains(out, data) {
		t.Errorf("doctor with a typo in the file: exit %d\n%s", code, out)
	}
	// Problems that may hide the directory meant stop them, as before.
	for name, doc := range map[string]string{
		"a data_dir of the wrong type":     "version = 1\ndata_dir = 5\n",
		"data_dir misspelled":              "version = 1\ndatadir = \"" + data + "\"\n",
		"data_dir under a table":           "version = 1\n[maps]\ndata_dir = \"" + data + "\"\n",
		"a version this build cannot read": "version = 7\ndata_dir = \"" + data + "\"\n",
	} {
		bad := filepath.Join(dir, "bad.toml")
		os.WriteFile(bad, []byte(doc), 0o600)
		if code, _, errOut := run(t, "list", "--config", bad); code != exitFailure || !strings.Contains(errOut, "problem(s)") || strings.Contains(errOut, "warning") {
			t.Errorf("list with %s: exit %d\n%s", name, code, errOut)
		}
	}
}

// config init --force over a config file that is a link (into a dotfiles
// repository) writes the file it leads to, and the link stays.
func TestConfigInitThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "agentmap.toml")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(cmdConfig, "init", "--force", "--config", link); code != exitOK {
		t.Fatalf("init: %d %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if body := string(mustReadFile(t, target)); !strings.Contains(body, "data_dir") {
		t.Errorf("the link's target was not written: %q", body)
	}
}

// install run again without --config (after an upgrade) keeps the config
// file the installed service runs with, and says so; uninstall --purge
// finds the data directory by it. A config file since gone is said, and
// the usual one taken.
func TestInstallAgainKeepsTheServicesConfig(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the unit read back here is the systemd one")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv(config.EnvConfig, "")
	cfg := filepath.Join(home, "cfg", "agentmap.toml")
	data := filepath.Join(home, "otherdata")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	exports := filepath.Join(home, "exports-elsewhere")
	os.MkdirAll(exports, 0o700)
	os.WriteFile(cfg, []byte(fmt.Sprintf("version = 1\ndata_dir = %q\n[export]\ndir = %q\n", data, exports)), 0o600)
	unit := filepath.Join(home, ".config", "systemd", "user", "agentmap.service")
	os.MkdirAll(filepath.Dir(unit), 0o700)
	os.WriteFile(unit, []byte("[Service]\nExecStart=/opt/agentmap \"run\" \"--config\" \""+cfg+"\"\n"), 0o600)
	code, out, errOut := runCmd(cmdInstall, "--dry-run")
	if code != exitOK || !strings.Contains(out, `"--config" "`+cfg+`"`) ||
		!strings.Contains(errOut, "agentmap install: the service keeps its config file "+cfg+" (--config names another)") {
		t.Errorf("install --dry-run over a service with a config file: %d %q %q", code, out, errOut)
	}
	code, out, errOut = runCmd(cmdUninstall, "--purge", "--dry-run")
	if code != exitOK || !strings.Contains(out+errOut, data) ||
		!strings.Contains(out, "kept: the exports' directory (export.dir) "+exports+", outside the data directory") {
		t.Errorf("uninstall --purge --dry-run over a service with a config file: %d %q %q", code, out, errOut)
	}
	os.Remove(cfg)
	code, out, errOut = runCmd(cmdInstall, "--dry-run")
	if code != exitOK || strings.Contains(out, `"--config"`) || !strings.Contains(errOut, "the service ran with "+cfg+", which is gone") {
		t.Errorf("install --dry-run over a service whose config file is gone: %d %q %q", code, out, errOut)
	}
}
