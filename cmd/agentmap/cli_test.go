package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
)

// Every command with a data directory settles on the same one, whether it
// is named by --config, by $AGENTMAP_CONFIG or by --data-dir, given after
// the command or before it.
func TestEveryCommandUsesTheSameDataDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("XDG_RUNTIME_DIR", "")
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", config.EnvConfig} {
		t.Setenv(v, "")
	}
	data := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "agentmap.toml")
	body := fmt.Sprintf("version = 1\ndata_dir = %q\n", filepath.ToSlash(data))
	for _, a := range config.AgentNames {
		body += "[agents." + a + "]\nenabled = false\n"
	}
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "r.html")
	commands := []struct {
		args []string
		// configOnly: the command takes its data directory from the config
		// only (the service runs with the config it is installed with).
		configOnly bool
	}{
		{args: []string{"list"}},
		{args: []string{"status", "--no-service"}},
		{args: []string{"show", "no-such-session"}},
		{args: []string{"flush", "--all"}},
		{args: []string{"export", "--format", "jsonl"}},
		{args: []string{"report", "-o", report}},
		{args: []string{"usage"}},
		{args: []string{"doctor"}},
		{args: []string{"scan"}},
		{args: []string{"uninstall", "--dry-run"}},
		{args: []string{"sink", "status"}},
		{args: []string{"install", "--dry-run"}, configOnly: true},
	}
	if runtime.GOOS == "darwin" {
		commands = append(commands, struct {
			args       []string
			configOnly bool
		}{args: []string{"logs", "-n", "1"}})
	}
	ways := []struct {
		name string
		env  string
		args func(cmd []string) []string
		all  bool
	}{
		{"--config", "", func(c []string) []string { return append(append([]string{}, c...), "--config", cfg) }, true},
		{"$AGENTMAP_CONFIG", cfg, func(c []string) []string { return c }, true},
		{"--data-dir", "", func(c []string) []string { return append(append([]string{}, c...), "--data-dir", data) }, false},
		{"--data-dir before the command", "", func(c []string) []string { return append([]string{"--data-dir", data}, c...) }, false},
		{"--config before the command", "", func(c []string) []string { return append([]string{"--config=" + cfg}, c...) }, true},
	}
	var seen []string
	dataDirSeen = func(d string) { seen = append(seen, d) }
	defer func() { dataDirSeen = func(string) {} }()
	for _, w := range ways {
		t.Setenv(config.EnvConfig, w.env)
		for _, c := range commands {
			if c.configOnly && !w.all {
				continue
			}
			seen = nil
			args := w.args(c.args)
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), args, &stdout, &stderr)
			if len(seen) == 0 {
				t.Errorf("%s: %v settled on no data directory (exit %d): %s", w.name, args, code, stderr.String())
				continue
			}
			for _, d := range seen {
				if d != data {
					t.Errorf("%s: %v used %s, want %s", w.name, args, d, data)
				}
			}
			if code == exitUsage {
				t.Errorf("%s: %v: usage error: %s", w.name, args, stderr.String())
			}
		}
		if !w.all {
			continue
		}
		// The config commands read the same file: config show prints the
		// data directory in effect.
		for _, c := range [][]string{{"config", "show"}, {"config", "check"}} {
			args := w.args(c)
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), args, &stdout, &stderr)
			want := fmt.Sprintf("data_dir = %q", filepath.ToSlash(data))
			if c[1] == "check" {
				want = cfg + ": ok"
			}
			if code != exitOK || !strings.Contains(stdout.String(), want) {
				t.Errorf("%s: %v: exit %d, stdout %q, stderr %q; want %q", w.name, args, code, stdout.String(), stderr.String(), want)
			}
		}
	}
}

// The command line's own errors, with their words and exit codes.
func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stream string // "out" or "err"
		want   string
	}{
		{[]string{"nope"}, exitUsage, "err", `agentmap: unknown command "nope" (see agentmap help)`},
		{[]string{"help", "nope"}, exitUsage, "err", `agentmap: unknown command "nope" (see agentmap help)`},
		{[]string{"build", "--data-dir", "/x", "f"}, exitUsage, "err", "agentmap build: --data-dir does not apply to build"},
		{[]string{"--data-dir", "/x", "validate", "f"}, exitUsage, "err", "agentmap validate: --data-dir does not apply to validate"},
		{[]string{"--bogus", "list"}, exitUsage, "err", "agentmap: unknown flag --bogus before the command (the global flags are --config, --data-dir, --log-level and --json; --version prints the version)"},
		{[]string{"--data-dir"}, exitUsage, "err", "agentmap: --data-dir needs a value"},
		{[]string{"help", "build"}, exitOK, "out", "usage: agentmap build [flags] FILE|DIR..."},
		{[]string{"build", "-h"}, exitOK, "out", "usage: agentmap build [flags] FILE|DIR..."},
		{[]string{"list", "--help"}, exitOK, "out", "usage: agentmap list"},
		{[]string{"help"}, exitOK, "out", "Global flags, before or after the command"},
		{[]string{"--data-dir", "/x", "--help"}, exitOK, "out", "Global flags, before or after the command"},
		{[]string{"--data-dir", "/x", "-h", "list"}, exitOK, "out", "usage: agentmap list"},
		{[]string{"--data-dir", "/x", "help", "list"}, exitOK, "out", "usage: agentmap list"},
		{[]string{"--version"}, exitOK, "out", "agentmap devel"},
		{[]string{"completion", "tcsh"}, exitUsage, "err", `agentmap completion: unknown shell "tcsh" (bash, zsh or fish; see agentmap help completion)`},
		{[]string{"completion"}, exitUsage, "err", "agentmap completion: name the shell: bash, zsh or fish (see agentmap help completion)"},
		{[]string{"start", "--data-dir", "/x"}, exitUsage, "err", "agentmap start: --data-dir does not apply to start"},
		{[]string{"completion", "--data-dir", "/x", "bash"}, exitUsage, "err", "agentmap completion: --data-dir does not apply to completion"},
		{[]string{"run", "--retire-after", "5s"}, exitUsage, "err", "agentmap run: --retire-after must be between 1m and 30d"},
		{[]string{"run", "--idle", "0s"}, exitUsage, "err", "agentmap run: --idle must be a duration above 0"},
		{[]string{"scan", "--rescan", "-1s"}, exitUsage, "err", "agentmap scan: --rescan must be a duration above 0"},
		{[]string{"run", "--log-level", "loud"}, exitUsage, "err", "agentmap run: unknown log level \"loud\" (debug, info, warn or error)\n"},
		{[]string{"--log-level=loud", "scan"}, exitUsage, "err", "agentmap scan: unknown log level \"loud\" (debug, info, warn or error)\n"},
		{[]string{"run", "--debounce", "-1s"}, exitUsage, "err", "agentmap run: --debounce must be 0 or more"},
		{[]string{"run", "--max-line", "0"}, exitUsage, "err", "agentmap run: --max-line must be a size above 0, at most 1GiB (64MiB, or a number of bytes)"},
		{[]string{"scan", "--max-line", "9223372036854775807"}, exitUsage, "err", `agentmap scan: --max-line "9223372036854775807": not a size`},
		{[]string{"scan", "--max-line", "1073741825"}, exitUsage, "err", "agentmap scan: --max-line must be a size above 0, at most 1GiB (64MiB, or a number of bytes)"},
		{[]string{"scan", "--max-line", "2GiB"}, exitUsage, "err", "agentmap scan: --max-line must be a size above 0, at most 1GiB"},
		{[]string{"scan", "--max-line", "abc"}, exitUsage, "err", `agentmap scan: --max-line "abc": not a size (use e.g. 64MiB, 512KiB or a number of bytes)`},
		{[]string{"usage", "model", "--breakdown", "--data-dir", "/nonexistent/x"}, exitUsage, "err", "agentmap usage: --breakdown splits the rows of daily, weekly, monthly or session by model; the rows of model are models already\n"},
		{[]string{"run", "--once", "--data-dir", "/nonexistent/x", "--export-every", "1s", "--export-formats", "jsonl,bogus"}, exitUsage, "err", `agentmap run: --export-formats "jsonl,bogus": "bogus" is not a format (bundle, jsonl, attemptdb, agentscope or sentience)`},
		{[]string{"run", "--once", "--data-dir", "/nonexistent/x", "--export-formats", "jsonl,jsonl"}, exitUsage, "err", `agentmap run: --export-formats "jsonl,jsonl": "jsonl" is listed twice`},
		{[]string{"run", "--once", "--data-dir", "/nonexistent/x", "--export-since", "bogus"}, exitUsage, "err", `agentmap run: --export-since "bogus": want incremental, all or a window such as 7d`},
		{[]string{"run", "--once", "--data-dir", "/nonexistent/x", "--export-keep", "-1"}, exitUsage, "err", "agentmap run: --export-keep -1: want how many exports of each format to keep, 0 for all"},
		{[]string{"run", "--once", "--data-dir", "/nonexistent/x", "--export-every", "-1s"}, exitUsage, "err", "agentmap run: --export-every -1s: want 0 (off) or a period such as 1h"},
		{[]string{"build", "--event-cap", "-5", "f"}, exitUsage, "err", "agentmap build: --event-cap must be between 1 and 1000000"},
		{[]string{"export", "--out", "x"}, exitUsage, "err", "agentmap export: --format is required: bundle, jsonl"},
		{[]string{"build", "f", "-o"}, exitUsage, "err", "agentmap build: -o needs a value (see agentmap help build)\n"},
		{[]string{"list", "--data-dir"}, exitUsage, "err", "agentmap list: --data-dir needs a value (see agentmap help list)\n"},
		{[]string{"status", "extra"}, exitUsage, "err", "agentmap status: unexpected argument \"extra\" (status takes no arguments, only flags; see agentmap help status)\n"},
		{[]string{"list", "extra"}, exitUsage, "err", "agentmap list: unexpected argument \"extra\" (list takes no arguments, only flags; see agentmap help list)\n"},
		{[]string{"list", "--agent="}, exitUsage, "err", "agentmap list: --agent is empty: give a value, or leave the flag out\n"},
		{[]string{"usage", "--maps", "/nonexistent/maps"}, exitFailure, "err", "agentmap usage: --maps /nonexistent/maps: no such file or directory\n"},
		{[]string{"usage", "--maps", "/nonexistent/maps", "--data-dir", "/nonexistent/x"}, exitUsage, "err", "agentmap usage: --maps and --data-dir are two sources"},
		{[]string{"show", "--files", "-1", "x"}, exitUsage, "err", "agentmap show: --files -1: give how many files to show (0 for none)"},
		{[]string{"scan", "--data-dir", "/nonexistent/x", "extra"}, exitUsage, "err", `agentmap scan: unexpected argument "extra"`},
		{[]string{"export", "--format", "jsonl", "--first-seq", "5"}, exitUsage, "err", "agentmap export: --first-seq applies to --format attemptdb only"},
		{[]string{"export", "--format", "jsonl", "--out", "/", "--data-dir", "/nonexistent/x"}, exitUsage, "err", "agentmap export: --out / is a directory: give the file to write"},
		{[]string{"export", "--format", "jsonl", "--path-mode", "hashed", "--hash-key-file", "/nonexistent/k", "--data-dir", os.TempDir()}, exitFailure, "err", "agentmap export: hash key /nonexistent/k: no such file"},
		{[]string{"build", "--path-mode", "hashed", "--hash-key-file", "/nonexistent/dir/k", "f"}, exitFailure, "err", "agentmap build: --hash-key-file /nonexistent/dir/k: the directory /nonexistent/dir does not exist (create it first)"},
		{[]string{"report", "--maps", "/nonexistent/maps", "-o", "/"}, exitUsage, "err", "agentmap report: -o / is a directory: give the file to write"},
		{[]string{"report", "--maps", "/nonexistent/maps", "-o", "/nonexistent/out/r.html"}, exitFailure, "err", "agentmap report: -o /nonexistent/out/r.html: the directory /nonexistent/out does not exist (create it first)"},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(context.Background(), tc.args, &stdout, &stderr)
		got := stderr.String()
		if tc.stream == "out" {
			got = stdout.String()
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%v: exit %d, stdout %.200q, stderr %q; want %d and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.want)
		}
		// A usage error of one word says it in one line, not the usage.
		if strings.Contains(tc.want, "unexpected argument") && strings.Count(stderr.String(), "\n") > 1 {
			t.Errorf("%v: more than one line: %q", tc.args, stderr.String())
		}
	}
}

// The completion scripts are checked by the shells themselves, and the
// completions they ask for come from the command definitions and the agent
// registry.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var stdout, stderr bytes.Buffer
		if code := dispatch(context.Background(), []string{"completion", shell}, &stdout, &stderr); code != exitOK || stdout.Len() == 0 {
			t.Fatalf("completion %s: exit %d %s", shell, code, stderr.String())
		}
		path, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("SKIP %s -n: %s is not installed", shell, shell)
			continue
		}
		script := filepath.Join(t.TempDir(), "agentmap."+shell)
		os.WriteFile(script, stdout.Bytes(), 0o600)
		if out, err := exec.Command(path, "-n", script).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, out)
		}
	}
	var stdout bytes.Buffer
	dispatch(context.Background(), []string{"__complete", "list", "--agent", ""}, &stdout, &bytes.Buffer{})
	for _, a := range config.AgentNames {
		if !strings.Contains(stdout.String(), a+"\n") {
			t.Errorf("list --agent completes without %s:\n%s", a, stdout.String())
		}
	}
	stdout.Reset()
	dispatch(context.Background(), []string{"__complete", "export", "--"}, &stdout, &bytes.Buffer{})
	for _, f := range []string{"--format\t", "--since\t", "--until\t", "--config\t", "--data-dir\t"} {
		if !strings.Contains(stdout.String(), f) {
			t.Errorf("export flags complete without %s:\n%s", f, stdout.String())
		}
	}
}

// The man pages come from the same definitions: one per command, with its
// flags.
func TestManPages(t *testing.T) {
	files := t.TempDir()
	if code := dispatch(context.Background(), []string{"package-files", files}, &bytes.Buffer{}, &bytes.Buffer{}); code != exitOK {
		t.Fatalf("package-files: exit %d", code)
	}
	dir := filepath.Join(files, "man", "man1")
	unit, err := os.ReadFile(filepath.Join(files, "systemd", "agentmap.service"))
	if err != nil || !bytes.Contains(unit, []byte(`ExecStart=/usr/bin/agentmap "run"`)) || !bytes.Contains(unit, []byte("WantedBy=default.target")) {
		t.Errorf("packaged unit: %v\n%s", err, unit)
	}
	for _, f := range []string{"agentmap.bash", "_agentmap", "agentmap.fish"} {
		if fi, err := os.Stat(filepath.Join(files, "completions", f)); err != nil || fi.Size() == 0 {
			t.Errorf("completion %s: %v", f, err)
		}
	}
	for _, c := range commands() {
		page, err := os.ReadFile(filepath.Join(dir, "agentmap-"+c.name+".1"))
		if err != nil {
			t.Errorf("no man page of %s: %v", c.name, err)
			continue
		}
		for _, f := range probeCommand(c).Flags {
			if !bytes.Contains(page, []byte(`\fB--`+f.Name+`\fP`)) && !bytes.Contains(page, []byte(`\fB-`+f.Name+`\fP`)) {
				t.Errorf("the man page of %s lacks --%s", c.name, f.Name)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "agentmap.1")); err != nil {
		t.Error(err)
	}
}

// Help is never an error: -h, --help and help COMMAND print the command's
// usage on stdout and exit 0, for every command.
func TestEveryCommandsHelpExitsZero(t *testing.T) {
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {"help", c.name}} {
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), args, &stdout, &stderr)
			if code != exitOK || !strings.HasPrefix(stdout.String(), "usage: agentmap "+c.name) {
				t.Errorf("%v: exit %d, stdout %.80q, stderr %.200q", args, code, stdout.String(), stderr.String())
			}
		}
	}
	for _, args := range [][]string{{"completion", "-h"}, {"help", "completion"}, {"-h"}, {"--help"}} {
		var stdout, stderr bytes.Buffer
		if code := dispatch(context.Background(), args, &stdout, &stderr); code != exitOK || stdout.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// The completion scripts complete for real, in the shells, through the
// binary's __complete: commands, and the agents of the registry for --agent.
func TestCompletionInTheShells(t *testing.T) {
	dir := t.TempDir()
	opsBinary(t, dir)
	path := dir + string(os.PathListSeparator) + os.Getenv("PATH")
	agents := strings.Join(config.AgentNames, " ")
	ran := 0
	if _, err := exec.LookPath("bash"); err == nil {
		if _, err := os.Stat("/usr/share/bash-completion/bash_completion"); err == nil {
			ran++
			script := `source /usr/share/bash-completion/bash_completion; source <(agentmap completion bash)
complete() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=(); __start_agentmap 2>/dev/null; echo "${COMPREPLY[*]}"; }
line() { COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); __start_agentmap 2>/dev/null; echo "${COMPREPLY[*]}"; }
complete agentmap li
complete agentmap list --agent ""
line "agentmap list --agent=c" agentmap list --agent = c
complete agentmap --data-dir /tmp li
complete agentmap sink ""`
			cmd := exec.Command("bash", "-c", script)
			cmd.Env = append(os.Environ(), "PATH="+path)
			out, err := cmd.Output()
			// bash splits --agent=c at "=" and completes the word after it.
			var cAgents []string
			for _, a := range config.AgentNames {
				if strings.HasPrefix(a, "c") {
					cAgents = append(cAgents, a)
				}
			}
			want := "list\n" + agents + "\n" + strings.Join(cAgents, " ") + "\nlist\nstatus resend forget migrate grants\n"
			if got := string(out); err != nil || got != want {
				t.Errorf("bash completion: %v\n%q, want %q", err, got, want)
			}
		} else {
			t.Log("SKIP bash completion: the bash-completion package is not installed")
		}
	}
	if _, err := exec.LookPath("fish"); err == nil {
		ran++
		cmd := exec.Command("fish", "-c", `agentmap completion fish | source; complete -C "agentmap lis"; complete -C "agentmap export --agent "; echo; complete -C "agentmap list --agent=cl"; complete -C "agentmap --data-dir /tmp lis"`)
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.Output()
		// fish sorts the candidates and shows a command's summary after a tab.
		first, second, _ := strings.Cut(strings.TrimSpace(string(out)), "\n\n")
		lines := strings.Split(first, "\n")
		want := slices.Sorted(slices.Values(config.AgentNames))
		if err != nil || len(lines) != 1+len(want) || !strings.HasPrefix(lines[0], "list\t") || !slices.Equal(lines[1:], want) {
			t.Errorf("fish completion: %v\n%q", err, out)
		}
		// --flag=value is completed as one word, and global flags before
		// the command are skipped.
		if lines := strings.Split(second, "\n"); len(lines) != 2 || lines[0] != "--agent=claude" || !strings.HasPrefix(lines[1], "list\t") {
			t.Errorf("fish completion of --agent=cl and after --data-dir: %q", second)
		}
	}
	if ran == 0 {
		t.Skip("neither bash with bash-completion nor fish is installed")
	}
}

// Flags may follow the arguments, as in the tools users know (`build FILE
// -o DIR`): before, the flag package stopped at the first file name, so
// that the map went to the default directory and "-o" was read as a file.
func TestFlagsAfterTheArguments(t *testing.T) {
	dir := t.TempDir()
	fixture, _ := filepath.Abs(fixture)
	t.Chdir(dir) // a default of -o . must not write into the package
	maps := filepath.Join(dir, "maps")
	if code, _, stderr := run(t, "build", fixture, "-o", maps+"/"); code != exitOK {
		t.Fatalf("build FILE -o DIR: exit %d\n%s", code, stderr)
	}
	built, _ := filepath.Glob(filepath.Join(maps, "*.json.gz"))
	if len(built) != 1 {
		t.Fatalf("build FILE -o DIR wrote %v into DIR", built)
	}
	if code, stdout, stderr := run(t, "validate", built[0], "-q"); code != exitOK || stdout != "" {
		t.Errorf("validate MAP -q: exit %d, stdout %q, stderr %q; want a quiet pass", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "validate", built[0], "--bogus"); code != exitUsage || !strings.Contains(stderr, "agentmap validate: unknown flag --bogus") {
		t.Errorf("validate MAP --bogus: exit %d, stderr %q; want a usage error naming it", code, stderr)
	}
	out := filepath.Join(dir, "out.jsonl")
	code, stdout, stderr := run(t, "export", "--format", "jsonl", built[0], "--out", out)
	if code != exitOK || stdout != "" {
		t.Fatalf("export --format jsonl MAP --out F: exit %d, stdout %.200q, stderr %q", code, stdout, stderr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Errorf("export --out after the map wrote nothing: %v", err)
	}
	// What follows -- stays an argument, even when it looks like a flag.
	if code, _, stderr := run(t, "validate", "--", "-q"); code != exitFailure || !strings.Contains(stderr, "-q: ") {
		t.Errorf("validate -- -q: exit %d, stderr %q; want -q read as a file", code, stderr)
	}
}

// The read-only commands read a data directory that scan and run refuse,
// but say so.
func TestReadCommandsWarnOfAnUnsafeDataDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits")
	}
	data := filepath.Join(t.TempDir(), "data")
	os.Mkdir(data, 0o700)
	os.Chmod(data, 0o777)
	code, _, stderr := run(t, "list", "--data-dir", data)
	if code != exitOK || !strings.Contains(stderr, "agentmap list: warning: data directory "+data+" is writable by its group and others (mode 0777)") {
		t.Fatalf("list over a world-writable data dir: exit %d, stderr %q", code, stderr)
	}
	os.Chmod(data, 0o700)
	if _, _, stderr := run(t, "list", "--data-dir", data); strings.Contains(stderr, "warning") {
		t.Fatalf("list over a private data dir warned: %q", stderr)
	}
}
