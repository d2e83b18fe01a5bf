package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/config"
)

// Completion offers, for every command, the flags it takes and no other:
// each once, a one-letter flag with one dash, and none of the global flags
// that the command would refuse as not applying to it.
func TestCompletionOffersTheFlagsACommandTakes(t *testing.T) {
	for _, c := range commands() {
		var stdout, stderr bytes.Buffer
		if code := dispatch(context.Background(), []string{"__complete", c.name, "-"}, &stdout, &stderr); code != exitOK {
			t.Fatalf("__complete %s -: exit %d %s", c.name, code, stderr.String())
		}
		var got []string
		for _, line := range strings.Split(stdout.String(), "\n") {
			if strings.HasPrefix(line, "-") {
				got = append(got, strings.SplitN(line, "\t", 2)[0])
			}
		}
		var want []string
		for _, f := range probeCommand(c).Flags {
			want = append(want, dashed(f.Name))
		}
		if !slices.Equal(got, want) {
			t.Errorf("__complete %s - offers %q, want %q", c.name, got, want)
		}
		for _, f := range got {
			if err := checkGlobals(c, []string{f, "x"}); err != nil {
				t.Errorf("__complete %s - offers %s, which %s refuses: %v", c.name, f, c.name, err)
			}
		}
	}
	var stdout bytes.Buffer
	dispatch(context.Background(), []string{"__complete", "logs", "-"}, &stdout, &bytes.Buffer{})
	if out := stdout.String(); !strings.Contains(out, "\n-n\t") || strings.Contains(out, "--n\t") || strings.Contains(out, "--log-level") {
		t.Errorf("logs completes:\n%s", out)
	}
}

// The man page of a command lists the flags it takes, and no global flag
// it would refuse (as options "inherited from parent commands").
func TestManPagesListOnlyTheFlagsACommandTakes(t *testing.T) {
	files := t.TempDir()
	if code := dispatch(context.Background(), []string{"package-files", files}, &bytes.Buffer{}, &bytes.Buffer{}); code != exitOK {
		t.Fatalf("package-files: exit %d", code)
	}
	flagRE := regexp.MustCompile(`\\fB(--?[a-z][a-z0-9-]*)\\fP`)
	for _, c := range commands() {
		page, err := os.ReadFile(filepath.Join(files, "man", "man1", "agentmap-"+c.name+".1"))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(page, []byte("INHERITED")) {
			t.Errorf("the man page of %s has inherited options", c.name)
		}
		_, options, _ := strings.Cut(string(page), ".SH OPTIONS")
		options, _, _ = strings.Cut(options, "\n.SH SEE ALSO")
		want := []string{"-h", "--help"}
		for _, f := range probeCommand(c).Flags {
			want = append(want, dashed(f.Name))
		}
		for _, m := range flagRE.FindAllStringSubmatch(options, -1) {
			if !slices.Contains(want, m[1]) {
				t.Errorf("the man page of %s lists %s, which %s does not take (it takes %q)", c.name, m[1], c.name, want)
			}
		}
	}
}

// scan catches up once and exits: it neither lists nor takes the flags
// of a following daemon, and says they are run's.
func TestScanRefusesTheFlagsOfRun(t *testing.T) {
	runOnly := []string{"once", "config-poll", "retire-after", "export-every", "export-dir", "export-formats", "export-keep", "export-since"}
	_, scanHelp, _ := run(t, "scan", "--help")
	_, runHelp, _ := run(t, "run", "--help")
	scanFlags, runFlags := probe{Flags: parseDefaults(scanHelp)}, probe{Flags: parseDefaults(runHelp)}
	for _, f := range runOnly {
		if _, ok := scanFlags.flag(f); ok {
			t.Errorf("scan --help lists -%s", f)
		}
		if _, ok := runFlags.flag(f); !ok {
			t.Errorf("run --help lacks -%s", f)
		}
	}
	// Were a flag taken, scan would run, and --once=false follow until
	// stopped: it runs on a directory of the test's, and a deadline ends it.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_RUNTIME_DIR", config.EnvConfig} {
		t.Setenv(v, "")
	}
	data := filepath.Join(home, "data")
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"once", []string{"scan", "--once=false"}},
		{"once", []string{"scan", "--once"}},
		{"retire-after", []string{"scan", "--retire-after", "1h"}},
		{"config-poll", []string{"scan", "--config-poll=1s"}},
		{"export-every", []string{"scan", "--export-every", "1h"}},
		{"once", []string{"--data-dir", data, "scan", "-once=false"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		args := append(tc.args, "--data-dir", data)
		if tc.args[0] == "--data-dir" {
			args = tc.args
		}
		var stdout, stderr bytes.Buffer
		code := dispatch(ctx, args, &stdout, &stderr)
		cancel()
		want := "agentmap scan: --" + tc.flag + " is a flag of agentmap run, not of scan"
		if code != exitUsage || !strings.Contains(stderr.String(), want) {
			t.Errorf("%v: exit %d, stderr %.300q; want %d and %q", args, code, stderr.String(), exitUsage, want)
		}
	}
}

// The command line's rough edges, each with its words and exit code.
func TestCommandLineEdges(t *testing.T) {
	home := t.TempDir() // what would run anyway reads no one's data
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv(config.EnvConfig, "")
	for _, tc := range []struct {
		args   []string
		code   int
		stream string // "out" or "err"
		want   string
	}{
		{[]string{"help", "help"}, exitOK, "out", "usage: agentmap help [COMMAND]"},
		{[]string{"help", "--help"}, exitOK, "out", "usage: agentmap help [COMMAND]"},
		{[]string{"help", "-h"}, exitOK, "out", "usage: agentmap help [COMMAND]"},
		{[]string{"--version", "--json"}, exitOK, "out", `"version": "devel"`},
		{[]string{"--json", "--version"}, exitOK, "out", `"version": "devel"`},
		{[]string{"--data-dir=", "list"}, exitUsage, "err", "agentmap list: --data-dir is empty (leave it out for the default)"},
		{[]string{"--data-dir", "", "list"}, exitUsage, "err", "agentmap list: --data-dir is empty (leave it out for the default)"},
		{[]string{"status", "--config="}, exitUsage, "err", "agentmap status: --config is empty (leave it out for the default)"},
		{[]string{"list", "--bogus"}, exitUsage, "err", "agentmap list: unknown flag --bogus\nsee agentmap list --help for the flags it takes\n"},
		{[]string{"build", "f", "-z"}, exitUsage, "err", "agentmap build: unknown flag -z\nsee agentmap build --help for the flags it takes\n"},
		{[]string{"lsit"}, exitUsage, "err", `agentmap: unknown command "lsit" (did you mean list? see agentmap help)`},
		{[]string{"help", "lsit"}, exitUsage, "err", `agentmap: unknown command "lsit" (did you mean list? see agentmap help)`},
		{[]string{"bogus"}, exitUsage, "err", "agentmap: unknown command \"bogus\" (see agentmap help)\n"},
		{[]string{"lgs"}, exitUsage, "err", `agentmap: unknown command "lgs" (did you mean logs? see agentmap help)`},
		{[]string{"shw"}, exitUsage, "err", `agentmap: unknown command "shw" (did you mean show? see agentmap help)`},
		{[]string{"stat"}, exitUsage, "err", `agentmap: unknown command "stat" (did you mean start or status? see agentmap help)`},
		{[]string{"expor"}, exitUsage, "err", `agentmap: unknown command "expor" (did you mean export? see agentmap help)`},
		{[]string{"sto"}, exitUsage, "err", `agentmap: unknown command "sto" (did you mean stop? see agentmap help)`},
		{[]string{"lost"}, exitUsage, "err", `agentmap: unknown command "lost" (did you mean list? see agentmap help)`},
		{[]string{"flus"}, exitUsage, "err", `agentmap: unknown command "flus" (did you mean flush? see agentmap help)`},
		{[]string{"usage2"}, exitUsage, "err", `agentmap: unknown command "usage2" (did you mean usage? see agentmap help)`},
		{[]string{"plot"}, exitUsage, "err", "agentmap: unknown command \"plot\" (see agentmap help)\n"},
		{[]string{"logs", "-n", "-1"}, exitUsage, "err", "agentmap logs: -n -1: want a number of lines, 0 or more (0: the whole log)"},
	} {
		code, stdout, stderr := run(t, tc.args...)
		got := stderr
		if tc.stream == "out" {
			got = stdout
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%q: exit %d, stdout %.200q, stderr %q; want %d and %q", tc.args, code, stdout, stderr, tc.code, tc.want)
		}
		if tc.code == exitUsage && strings.Contains(stderr, "flag provided but not defined") {
			t.Errorf("%q: the flag package's own words: %q", tc.args, stderr)
		}
	}
	// An unknown flag is one line and a pointer, not the whole flag list.
	if _, _, stderr := run(t, "list", "--bogus"); strings.Count(stderr, "\n") != 2 {
		t.Errorf("list --bogus: %q", stderr)
	}
}

// dashed is a flag as a user types it: -o, --since.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
