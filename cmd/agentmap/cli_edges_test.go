package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/state"
)

// A command that takes no flags (start, stop, restart) and completion
// refuse a global flag in the words every other command uses, before the
// command or after it, and never reach the service manager.
func TestGlobalFlagsOfCommandsWithoutFlags(t *testing.T) {
	for _, name := range []string{"start", "stop", "restart", "completion"} {
		for _, args := range [][]string{
			{name, "--data-dir", "/x"},
			{"--data-dir", "/x", name},
			{name, "--json"},
			{name, "--config=/x/c.toml"},
		} {
			if name == "completion" {
				args = append(args, "bash")
			}
			flag := strings.TrimLeft(strings.SplitN(args[slicesIndexFlag(args)], "=", 2)[0], "-")
			code, stdout, stderr := run(t, args...)
			want := fmt.Sprintf("agentmap %s: --%s does not apply to %s\n", name, flag, name)
			if code != exitUsage || stdout != "" || stderr != want {
				t.Errorf("%q: exit %d, stdout %.100q, stderr %q; want %d and %q", args, code, stdout, stderr, exitUsage, want)
			}
		}
	}
}

// slicesIndexFlag is the index of the first flag in args.
func slicesIndexFlag(args []string) int {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			return i
		}
	}
	return -1
}

// agentmap completion says which shells it takes, as a usage error, in
// the words of the other commands rather than cobra's.
func TestCompletionArgumentErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion"}, "agentmap completion: name the shell: bash, zsh or fish (see agentmap help completion)\n"},
		{[]string{"completion", "tcsh"}, "agentmap completion: unknown shell \"tcsh\" (bash, zsh or fish; see agentmap help completion)\n"},
		{[]string{"completion", "bash", "zsh"}, "agentmap completion: one shell, not 2: bash, zsh or fish (see agentmap help completion)\n"},
		{[]string{"completion", "--bogus", "bash"}, "agentmap completion: unknown flag --bogus (completion takes no flags; see agentmap help completion)\n"},
	} {
		code, stdout, stderr := run(t, tc.args...)
		if code != exitUsage || stdout != "" || stderr != tc.want {
			t.Errorf("%q: exit %d, stdout %.100q, stderr %q; want %d and %q", tc.args, code, stdout, stderr, exitUsage, tc.want)
		}
	}
	for _, args := range [][]string{{"completion", "zsh"}, {"completion", "--", "fish"}, {"completion", "-h"}} {
		if code, stdout, stderr := run(t, args...); code != exitOK || stdout == "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// A flag that takes a value, given last without one, is one line in the
// command's words and a pointer to its help, for every flag of every
// command, not the flag package's "flag needs an argument" and every flag.
func TestFlagMissingValueIsOneLine(t *testing.T) {
	home := t.TempDir() // nothing runs, but if it did it would read no one's data
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv(config.EnvConfig, "")
	for _, c := range commands() {
		for _, f := range probeCommand(c).Flags {
			if f.Type == "" {
				continue
			}
			for _, args := range [][]string{{c.name, flagSpelling(f.Name)}, {c.name, "x", flagSpelling(f.Name)}} {
				code, stdout, stderr := run(t, args...)
				want := fmt.Sprintf("agentmap %s: %s needs a value (see agentmap help %s)\n", c.name, flagSpelling(f.Name), c.name)
				if code != exitUsage || stdout != "" || stderr != want {
					t.Errorf("%q: exit %d, stdout %.100q, stderr %.200q; want %d and %q", args, code, stdout, stderr, exitUsage, want)
				}
			}
		}
	}
}

// build --session takes a unique prefix of the id, as show and report
// --session do; a prefix of several sessions is a usage error naming them,
// in one plan and in pieces alike (where no piece may be built before the
// prefix is known to be unique).
func TestBuildSessionPrefix(t *testing.T) {
	log, err := os.ReadFile("../../testdata/claude/coststate.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	var inputs, ids []string
	for i := range 7 {
		id := fmt.Sprintf("0a1b2c3d-%04x-4000-8000-000000000000", i)
		ids = append(ids, id)
		p := filepath.Join(in, id+".jsonl")
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(log), "0a1b2c3d-0000-4000-8000-0000000000dd", id)), 0o600); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	check := func(t *testing.T) {
		out := t.TempDir() + "/"
		code, _, stderr := run(t, append([]string{"build", "--session", ids[3][:len("0a1b2c3d-0003")], "-o", out}, inputs...)...)
		entries, _ := os.ReadDir(out)
		if code != exitOK || len(entries) != 1 || entries[0].Name() != ids[3]+".json.gz" {
			t.Errorf("unique prefix: exit %d, %v, stderr %q", code, entries, stderr)
		}
		out = t.TempDir() + "/"
		code, _, stderr = run(t, append([]string{"build", "--session", "0a1b2c3d", "-o", out}, inputs...)...)
		entries, _ = os.ReadDir(out)
		want := "agentmap build: --session: the id prefix \"0a1b2c3d\" matches 7 sessions; give more of it:\n"
		for _, id := range ids[:5] {
			want += "  claude/" + id + "\n"
		}
		want += "  …and 2 more\n"
		if code != exitUsage || len(entries) != 0 || stderr != want {
			t.Errorf("ambiguous prefix: exit %d, %d maps, stderr %q; want %q", code, len(entries), stderr, want)
		}
		code, _, stderr = run(t, append([]string{"build", "--session", "0a1b2c3e", "-o", t.TempDir() + "/"}, inputs...)...)
		if code != exitFailure || stderr != "agentmap build: no session \"0a1b2c3e\" in the inputs\n" {
			t.Errorf("no match: exit %d, stderr %q", code, stderr)
		}
		// The full id, as before.
		out = t.TempDir() + "/"
		code, _, stderr = run(t, append([]string{"build", "--session", ids[6], "-o", out}, inputs...)...)
		entries, _ = os.ReadDir(out)
		if code != exitOK || len(entries) != 1 || entries[0].Name() != ids[6]+".json.gz" {
			t.Errorf("full id: exit %d, %v, stderr %q", code, entries, stderr)
		}
	}
	t.Run("one plan", check)
	t.Run("pieces", func(t *testing.T) {
		pieces := withPieces(t, 1)
		check(t)
		if *pieces < 2 {
			t.Errorf("built in %d pieces", *pieces)
		}
	})
}

// An ambiguous id prefix names the sessions it matches, newest first as
// list shows them, up to five, and says how many more and where to see
// them.
func TestShowAmbiguousPrefixNamesTheSessions(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var es []daemon.Entry
	for i := range 8 {
		id := fmt.Sprintf("2%d-session", i)
		es = append(es, daemon.Entry{Key: "codex/" + id, Agent: "codex", ID: id, Start: t0.Add(time.Duration(i) * time.Hour)})
	}
	_, err := findEntry(es, "2")
	want := "the id prefix \"2\" matches 8 sessions; give more of it:\n" +
		"  codex/27-session\n  codex/26-session\n  codex/25-session\n  codex/24-session\n  codex/23-session\n" +
		"  …and 3 more (agentmap list shows them all)"
	if err == nil || err.Error() != want {
		t.Errorf("8 sessions: %v\nwant %s", err, want)
	}
	_, err = findEntry(es[:6], "2")
	want = "the id prefix \"2\" matches 6 sessions; give more of it:\n" +
		"  codex/25-session\n  codex/24-session\n  codex/23-session\n  codex/22-session\n  codex/21-session\n  codex/20-session"
	if err == nil || err.Error() != want {
		t.Errorf("6 sessions: %v\nwant %s", err, want)
	}
}

// show counts in the singular for one, names the agent as list does, and
// leaves out a duration of 0 rather than print "-" for it.
func TestShowSummaryWords(t *testing.T) {
	s := summary{ID: "s1", Agent: "claude-code", Path: "/m/s1.json.gz", Start: "2026-03-01T00:00:00Z", PathMode: "relative",
		Outcome: "completed", Tasks: 1,
		Totals: mapfile.Totals{Calls: 1, Requests: 1, UserTurns: 1, Subagents: 1, FilesTouched: 1, Commits: 1, PRsCreated: 1, Errors: 1}}
	var b strings.Builder
	writeSummary(&b, s)
	for _, want := range []string{"session   s1 (claude)\n", "started   2026-03-01 00:00:00 UTC\n",
		"  1 call, 1 model request, 1 user turn, 1 task, 1 subagent\n",
		"  1 file touched, 1 commit, 1 PR created, 1 error\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("want %q in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "lasted") {
		t.Errorf("a duration of 0 shown:\n%s", b.String())
	}
	s.DurationMs, s.Totals.UserTurns, s.Totals.FilesTouched = 90_000, 2, 0
	b.Reset()
	writeSummary(&b, s)
	for _, want := range []string{", lasted 1m30s\n", " 2 user turns,", "  0 files touched,"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("want %q in\n%s", want, b.String())
		}
	}
}

// sink resend with no team database configured says so, in the words of
// sink migrate, not the state's "the sink is not enabled".
func TestSinkResendWithoutATeamDatabase(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv(config.EnvConfig, "")
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(daemon.StatePath(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	none := "no team database is configured ([sink.postgres] in the config file has no url or url_file; see docs/team-database.md in agentmap's source)\n"
	code, stdout, stderr := run(t, "sink", "resend", "--data-dir", data)
	if code != exitFailure || stdout != "" || stderr != "agentmap sink resend: "+none {
		t.Errorf("resend: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("version = 1\ndata_dir = %q\n", data)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, "sink", "migrate", "--config", cfg)
	if code != exitFailure || stderr != "agentmap sink migrate: "+none {
		t.Errorf("migrate: exit %d, stderr %q", code, stderr)
	}
	// Configured, but the daemon has not started with it yet.
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("version = 1\ndata_dir = %q\n[sink.postgres]\nurl = \"postgres://u@127.0.0.1:1/db\"\n", data)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, "sink", "resend", "--config", cfg)
	if code != exitFailure || !strings.Contains(stderr, "the team database's queue is not set up yet") || strings.Contains(stderr, "not enabled") {
		t.Errorf("resend, configured: exit %d, stderr %q", code, stderr)
	}
}

// flush --all --rewrite counts the maps written again, and the ones that
// were the same bytes already apart; sessions that make no map are in
// neither.
func TestFlushRewriteLine(t *testing.T) {
	for _, tc := range []struct {
		res  daemon.FlushResult
		want string
	}{
		{daemon.FlushResult{Rewritten: 46}, "written again: 46 maps"},
		{daemon.FlushResult{Rewritten: 1}, "written again: 1 map"},
		{daemon.FlushResult{Rewritten: 46, Current: 46}, "written again: 0 maps; up to date already: 46"},
		{daemon.FlushResult{Rewritten: 46, Current: 40}, "written again: 6 maps; up to date already: 40"},
	} {
		if got := rewriteLine(tc.res); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.res, got, tc.want)
		}
	}
}

// Without a home directory, a command given --data-dir runs: no config
// file can be looked for, so the defaults are in effect, less what they
// put under the home, which is not taken from the working directory. What
// needs the home says so: the data directory when --data-dir is not given,
// and the agents' logs when no --root names any.
func TestCLIWithoutHome(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the home is USERPROFILE there")
	}
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", config.EnvConfig, "CLAUDE_CONFIG_DIR", "CODEX_HOME",
		"COPILOT_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB"} {
		t.Setenv(v, "")
	}
	log, err := os.ReadFile("../../testdata/claude/coststate.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// A working directory that looks like a home: nothing in it is read.
	cwd := t.TempDir()
	t.Chdir(cwd)
	decoy := filepath.Join(cwd, ".claude", "projects", "-w-app", "0a1b2c3d-0000-4000-8000-0000000000dd.jsonl")
	os.MkdirAll(filepath.Dir(decoy), 0o700)
	if err := os.WriteFile(decoy, log, 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	note := "agentmap scan: HOME is not set, so there is no user config directory: no config file is read, the defaults are in effect\n"

	code, stdout, stderr := run(t, "scan", "--data-dir", data)
	if code != exitFailure || stderr != note+"agentmap scan: no agent's logs to follow: HOME is not set, and the agents keep their logs under it (set it, or give --root agent=DIR)\n" {
		t.Errorf("scan without a root: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	root := filepath.Join(t.TempDir(), "claude")
	if err := os.MkdirAll(filepath.Join(root, "projects", "-w-app"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "projects", "-w-app", "0a1b2c3d-0000-4000-8000-0000000000ee.jsonl"), log, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "scan", "--data-dir", data, "--root", "claude="+root)
	if code != exitOK || !strings.HasPrefix(stderr, note) {
		t.Fatalf("scan --root: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "list", "--data-dir", data)
	if code != exitOK || !strings.Contains(stdout, "0a1b2c3d-0000-4000-8000-0000000000ee") || strings.Contains(stdout, "00dd") {
		t.Errorf("list --data-dir: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = run(t, "list")
	if code != exitFailure || stderr != "agentmap list: no data directory: HOME is not set, and the default one is under it (pass --data-dir DIR)\n" {
		t.Errorf("list: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = run(t, "scan")
	if code != exitFailure || stderr != "agentmap scan: no data directory: HOME is not set, and the default one is under it (pass --data-dir DIR)\n" {
		t.Errorf("scan: exit %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := run(t, "prices"); code != exitOK || stdout == "" {
		t.Errorf("prices: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = run(t, "config", "show")
	if code != exitFailure || stderr != "agentmap config: HOME is not set, so there is no user config directory (--config FILE names the file)\n" {
		t.Errorf("config show: exit %d, stderr %q", code, stderr)
	}
	// A config file named by --config: the defaults under the missing
	// home are left out as without one, not blamed on the file, and what
	// the file sets is used; a ~/ in it says why it cannot be.
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("data_dir = %q\n[agents.claude]\nroots = [%q]\n", data, root)), 0o600)
	code, stdout, stderr = run(t, "list", "--config", cfg)
	if code != exitOK || stderr != "" || !strings.Contains(stdout, "0a1b2c3d-0000-4000-8000-0000000000ee") {
		t.Errorf("list --config: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, stdout, stderr = run(t, "scan", "--config", cfg); code != exitOK || strings.Contains(stderr, "problem") || !strings.Contains(stderr, "scan: done") {
		t.Errorf("scan --config: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	bare := filepath.Join(dir, "bare.toml")
	os.WriteFile(bare, []byte("[flush]\nidle = \"5m\"\n"), 0o600)
	code, _, stderr = run(t, "list", "--config", bare)
	if code != exitFailure || stderr != "agentmap list: no data directory: HOME is not set, and the default one is under it (pass --data-dir DIR)\n" {
		t.Errorf("list --config without data_dir: exit %d, stderr %q", code, stderr)
	}
	tilde := filepath.Join(dir, "tilde.toml")
	os.WriteFile(tilde, []byte("data_dir = \"~/am\"\n"), 0o600)
	code, _, stderr = run(t, "list", "--config", tilde)
	if code != exitFailure || !strings.Contains(stderr, "data_dir: must be an absolute path or start with ~/ (but HOME is not set, so ~ stands for nothing)\n") ||
		strings.Contains(stderr, "roots") {
		t.Errorf("list --config with ~/: exit %d, stderr %q", code, stderr)
	}
	// Nothing was made where the command ran.
	entries, _ := os.ReadDir(cwd)
	if len(entries) != 1 || entries[0].Name() != ".claude" {
		t.Errorf("the working directory holds %v", entries)
	}
}

// A value a flag cannot take (a duration, a number or a boolean it cannot
// read) is one line that names the flag as the help spells it and what
// it wants, and a pointer to the help, for every such flag of every
// command: not the flag package's "invalid value … for flag -x" followed
// by every flag of the command.
func TestFlagBadValueIsOneLine(t *testing.T) {
	home := t.TempDir() // nothing runs, but if it did it would read no one's data
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv(config.EnvConfig, "")
	wants := map[string]string{
		"duration": "is not a duration (want one such as 30s, 5m or 1h30m)",
		"int":      "is not a whole number",
		"uint":     "is not a whole number",
		"float":    "is not a number",
		"":         "takes true or false, not \"x1y\"",
	}
	tried := 0
	for _, c := range commands() {
		for _, f := range probeCommand(c).Flags {
			want, typed := wants[f.Type]
			if !typed || f.Name == "h" || f.Name == "help" {
				continue
			}
			arg := []string{flagSpelling(f.Name), "x1y"}
			if f.Type == "" {
				arg = []string{flagSpelling(f.Name) + "=x1y"}
			}
			args := append([]string{c.name}, arg...)
			code, stdout, stderr := run(t, args...)
			tried++
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			head := fmt.Sprintf("agentmap %s: %s ", c.name, flagSpelling(f.Name))
			if code != exitUsage || stdout != "" || len(lines) != 2 ||
				!strings.HasPrefix(lines[0], head) || !strings.Contains(lines[0], want) ||
				lines[1] != fmt.Sprintf("see agentmap %s --help for the flags it takes", c.name) {
				t.Errorf("%q: exit %d, stdout %.100q, stderr %.300q; want %d, %q… %q and one line of help", args, code, stdout, stderr, exitUsage, head, want)
			}
		}
	}
	if tried < 10 {
		t.Fatalf("only %d typed flags tried: the probe found too few", tried)
	}
}

// An argument missing, one too many, or given with a flag it does not go
// with is one line that says what to give, not the usage alone: the user
// had to guess which word was wrong.
func TestArgumentErrorsSayWhatToGive(t *testing.T) {
	home := t.TempDir() // nothing runs, but if it did it would read no one's data
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv(config.EnvConfig, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "agentmap show: name the session: its id, agent/id or a unique prefix (agentmap list shows them)\n"},
		{[]string{"show", "a", "b"}, "agentmap show: unexpected argument \"b\" (show takes one session: its id, agent/id or a unique prefix; see agentmap help show)\n"},
		{[]string{"flush"}, "agentmap flush: name the session by its id (agentmap list shows them), or give --all for every session\n"},
		{[]string{"flush", "a", "b"}, "agentmap flush: unexpected argument \"b\" (flush takes one session id, or --all; see agentmap help flush)\n"},
		{[]string{"flush", "--rewrite"}, "agentmap flush: --rewrite goes with --all: agentmap flush --all --rewrite (a session named by its id is always written)\n"},
		{[]string{"flush", "ID", "--rewrite"}, "agentmap flush: --rewrite goes with --all: agentmap flush --all --rewrite (a session named by its id is always written)\n"},
		{[]string{"flush", "ID", "--all"}, "agentmap flush: the id \"ID\" and --all do not go together: give one (--all flushes every session)\n"},
		{[]string{"usage", "daily", "weekly"}, "agentmap usage: one grouping, not 2: daily, weekly, monthly, session or model (see agentmap help usage)\n"},
		{[]string{"usage", "fortnightly"}, "agentmap usage: unknown grouping \"fortnightly\" (daily, weekly, monthly, session or model)\n"},
		{[]string{"config"}, "agentmap config: name what to do: init, check or show (see agentmap help config)\n"},
		{[]string{"config", "check", "x"}, "agentmap config check: unexpected argument \"x\" (config check takes no argument; --config FILE names the file)\n"},
		{[]string{"sink"}, "agentmap sink: name what to do: status, resend, forget, migrate or grants (see agentmap help sink)\n"},
		{[]string{"sink", "status", "x"}, "agentmap sink status: unexpected argument \"x\" (sink status takes no argument; see agentmap help sink)\n"},
		{[]string{"validate"}, "agentmap validate: name the map files to check (FILE.json.gz or FILE.json, or a directory of them; see agentmap help validate)\n"},
		{[]string{"build"}, "agentmap build: name the logs to build: files or directories, or --inputs LIST (see agentmap help build)\n"},
	} {
		code, stdout, stderr := run(t, tc.args...)
		if code != exitUsage || stdout != "" || stderr != tc.want {
			t.Errorf("%q: exit %d, stdout %.100q, stderr %.300q; want %d and %q", tc.args, code, stdout, stderr, exitUsage, tc.want)
		}
	}
}

// A path that starts with "-" (a Claude Code project directory) is read
// as a flag: the error quotes it as typed and says how to give it; an
// unknown flag is quoted as typed too, one dash or two.
func TestAPathThatStartsWithADash(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("-w-app", 0o700); err != nil {
		t.Fatal(err)
	}
	see := "see agentmap build --help for the flags it takes\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "-w-app000/x.jsonl"}, "agentmap build: unknown flag -w-app000/x.jsonl (a path that starts with -: give it after --, or as ./-w-app000/x.jsonl)\n" + see},
		{[]string{"build", "-o", "maps/", "-w-app"}, "agentmap build: unknown flag -w-app (a path that starts with -: give it after --, or as ./-w-app)\n" + see},
		{[]string{"build", "f", "-bogus=1"}, "agentmap build: unknown flag -bogus\n" + see},
		{[]string{"build", "f", "--bogus=/x"}, "agentmap build: unknown flag --bogus\n" + see},
	} {
		code, stdout, stderr := run(t, tc.args...)
		if code != exitUsage || stdout != "" || stderr != tc.want {
			t.Errorf("%q: exit %d, stdout %.100q, stderr %q; want %d and %q", tc.args, code, stdout, stderr, exitUsage, tc.want)
		}
	}
}

// agentmap help lists the commands, completion among them, with their
// summaries in one column, at least two spaces after the longest name.
func TestHelpListsTheCommandsInOneColumn(t *testing.T) {
	_, stdout, _ := run(t, "help")
	names := []string{"completion"}
	for _, c := range commands() {
		names = append(names, c.name)
	}
	column := -1
	for _, name := range names {
		i := strings.Index(stdout, "\n  "+name+" ")
		if i < 0 {
			t.Errorf("help does not list %s:\n%s", name, stdout)
			continue
		}
		line, _, _ := strings.Cut(stdout[i+1:], "\n")
		at := len(line) - len(strings.TrimLeft(line[2+len(name):], " "))
		if at-2-len(name) < 2 {
			t.Errorf("help: one space after %s: %q", name, line)
		}
		if column >= 0 && at != column {
			t.Errorf("help: the summary of %s starts at column %d, the others' at %d: %q", name, at, column, line)
		}
		column = at
	}
}
