package packaging

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var carried = []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"}

// Install gives the service the variables set where it runs, in both
// service files; a value a unit line would change is left out on Linux
// and named, while a LaunchAgent holds it.
func TestCarryEnv(t *testing.T) {
	env := map[string]string{
		"CODEX_HOME":        "/home/u/work/codex",
		"CLAUDE_CONFIG_DIR": "/home/u/My Claude",
	}
	s := linuxSpec()
	left := s.CarryEnv(carried, func(k string) string { return env[k] })
	if !reflect.DeepEqual(s.Env, map[string]string{"CODEX_HOME": "/home/u/work/codex"}) || !slices.Equal(left, []string{"CLAUDE_CONFIG_DIR"}) {
		t.Errorf("linux: env %v, left %v", s.Env, left)
	}
	unit, err := RenderUnit(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "\nEnvironment=CODEX_HOME=/home/u/work/codex\n") || strings.Contains(string(unit), "CLAUDE") {
		t.Errorf("unit:\n%s", unit)
	}
	for _, bad := range []string{`/a"b`, `/a\b`, "/a%hb", "/a$HOME", "/a'b", "/a\tb", "/a\nb", "/a\xffb"} {
		s := linuxSpec()
		if left := s.CarryEnv([]string{"CODEX_HOME"}, func(string) string { return bad }); len(left) != 1 || s.Env != nil {
			t.Errorf("linux carries %q", bad)
		}
	}

	d := darwinSpec()
	env["XDG_DATA_HOME"] = "/Users/u/R&D <data>"
	if left := d.CarryEnv(carried, func(k string) string { return env[k] }); len(left) != 0 {
		t.Errorf("darwin left %v", left)
	}
	plist, err := RenderPlist(d)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := parsePlist(plist)
	if err != nil {
		t.Fatalf("not a property list: %v\n%s", err, plist)
	}
	got, _ := dict["EnvironmentVariables"].(map[string]plistValue)
	want := map[string]plistValue{"CODEX_HOME": env["CODEX_HOME"], "CLAUDE_CONFIG_DIR": env["CLAUDE_CONFIG_DIR"], "XDG_DATA_HOME": env["XDG_DATA_HOME"]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EnvironmentVariables = %v, want %v", got, want)
	}
	// Without any, neither file has the section.
	unit, _ = RenderUnit(linuxSpec())
	plist, _ = RenderPlist(darwinSpec())
	if strings.Contains(string(unit), "Environment") || strings.Contains(string(plist), "EnvironmentVariables") {
		t.Errorf("an empty environment is written:\n%s\n%s", unit, plist)
	}
}

// What install wrote is read back: doctor compares it with the shell's.
func TestInstalledEnv(t *testing.T) {
	env := map[string]string{"CODEX_HOME": "/x/codex", "XDG_DATA_HOME": "/x/data&more"}
	for _, goos := range []string{"linux", "darwin"} {
		home := t.TempDir()
		s := Spec{GOOS: goos, Home: home, Binary: "/opt/agentmap", DataDir: filepath.Join(home, "data")}
		old := PackagedUnitPath
		PackagedUnitPath = filepath.Join(home, "none")
		if _, installed := InstalledEnv(s); installed {
			t.Errorf("%s: nothing installed, yet installed", goos)
		}
		s.CarryEnv(slices.Collect(maps.Keys(env)), func(k string) string { return env[k] })
		b, err := Render(s)
		if err != nil {
			t.Fatal(err)
		}
		path, _ := s.File()
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, b, 0o600)
		got, installed := InstalledEnv(s)
		if !installed || !reflect.DeepEqual(got, env) {
			t.Errorf("%s: %v (installed %v), want %v", goos, got, installed, env)
		}
		// The package's unit, when the user has none, carries nothing.
		if goos == "linux" {
			os.Remove(path)
			packaged, _ := PackagedUnit("/usr/bin/agentmap")
			PackagedUnitPath = filepath.Join(home, "packaged.service")
			os.WriteFile(PackagedUnitPath, packaged, 0o644)
			if got, installed := InstalledEnv(s); !installed || len(got) != 0 {
				t.Errorf("packaged: %v (installed %v)", got, installed)
			}
		}
		PackagedUnitPath = old
	}
}

// systemd reads the Environment= lines as install means them.
func TestUnitWithEnvVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("systemd-analyze not found: install the systemd package (apt-get install -y systemd) to verify the unit")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "agentmap")
	os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	s := linuxSpec()
	s.Binary = bin
	s.CarryEnv(carried, func(k string) string { return "/srv/" + strings.ToLower(k) })
	unit, err := RenderUnit(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, UnitName+".service")
	os.WriteFile(path, unit, 0o644)
	rt := filepath.Join(dir, "runtime")
	os.Mkdir(rt, 0o700)
	cmd := exec.Command(analyze, "--user", "verify", path)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+rt, "HOME="+dir, "SYSTEMD_LOG_LEVEL=notice")
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), UnitName+".service") {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The environment of the installed service: the user manager's under the
// unit's and its drop-ins', as systemctl shows them, quoting undone; the
// unit file's own lines without a user manager to ask.
func TestEnvironmentOfTheInstalledService(t *testing.T) {
	home := t.TempDir()
	s := Spec{GOOS: "linux", Home: home, Binary: "/opt/agentmap", DataDir: filepath.Join(home, "data")}
	old := PackagedUnitPath
	PackagedUnitPath = filepath.Join(home, "none")
	defer func() { PackagedUnitPath = old }()
	s.CarryEnv([]string{"CODEX_HOME"}, func(string) string { return "/srv/from-file" })
	b, _ := Render(s)
	path, _ := s.File()
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, b, 0o600)

	answers := map[string]string{
		"systemctl --user show-environment":                                     "HOME=/home/u\nXDG_DATA_HOME=$'/srv/my data & more'\nODD=$'\\q'\nCODEX_HOME=/srv/manager\n",
		"systemctl --user show agentmap.service --property=Environment --value": `CODEX_HOME=/srv/unit "CLAUDE_CONFIG_DIR=/srv/a b" GEMINI_CLI_HOME=/srv/dropin` + "\n",
	}
	run := func(_ context.Context, args ...string) ([]byte, error) {
		if a, ok := answers[strings.Join(args, " ")]; ok {
			return []byte(a), nil
		}
		return nil, errors.New("no such command here")
	}
	env, installed := Environment(context.Background(), s, run)
	want := map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "/srv/my data & more", "CODEX_HOME": "/srv/unit",
		"CLAUDE_CONFIG_DIR": "/srv/a b", "GEMINI_CLI_HOME": "/srv/dropin"}
	if !installed || !reflect.DeepEqual(env, want) {
		t.Errorf("with a user manager: %v, want %v", env, want)
	}
	none := func(context.Context, ...string) ([]byte, error) { return nil, errors.New("no user manager") }
	if env, installed := Environment(context.Background(), s, none); !installed || !reflect.DeepEqual(env, map[string]string{"CODEX_HOME": "/srv/from-file"}) {
		t.Errorf("without a user manager: %v", env)
	}
	for in, want := range map[string]string{`plain`: "plain", `$'a\'b\\c\x41\n'`: "a'b\\cA\n"} {
		if got, ok := unquoteDollar(in); !ok || got != want {
			t.Errorf("unquoteDollar(%q) = %q, %v", in, got, ok)
		}
	}
	for _, bad := range []string{`$'open`, `$'\x4'`, `$'\z'`} {
		if _, ok := unquoteDollar(bad); ok {
			t.Errorf("unquoteDollar(%q) accepted", bad)
		}
	}
}
