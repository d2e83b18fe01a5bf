package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/export"
)

// completions asks agentmap __complete for args, as the shell scripts do,
// and returns the candidates (without their descriptions) and the
// directive.
func completions(t *testing.T, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := dispatch(context.Background(), append([]string{"__complete"}, args...), &stdout, &stderr); code != exitOK {
		t.Fatalf("__complete %q: exit %d %s", args, code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	directive, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if err != nil || !strings.HasPrefix(last, ":") {
		t.Fatalf("__complete %q: no directive in %q", args, stdout.String())
	}
	var out []string
	for _, l := range lines[:len(lines)-1] {
		cand, _, _ := strings.Cut(l, "\t")
		out = append(out, cand)
	}
	return out, cobra.ShellCompDirective(directive)
}

// --flag=value completes the value after "=", bare, as cobra's own flag
// completion does (the scripts put "--flag=" back): the flags of the
// command in its place made fish offer "--agent=--agent".
func TestCompletionOfAValueAfterEquals(t *testing.T) {
	var cAgents []string
	for _, a := range agentNames() {
		if strings.HasPrefix(a, "c") {
			cAgents = append(cAgents, a)
		}
	}
	var formats []string
	for _, f := range export.Formats() {
		formats = append(formats, string(f))
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"list", "--agent=c"}, cAgents},
		{[]string{"list", "-agent=c"}, cAgents},
		{[]string{"list", "--agent", "c"}, cAgents},
		{[]string{"export", "--format="}, formats},
		{[]string{"export", "--format=js"}, []string{"jsonl"}},
		{[]string{"list", "--json="}, []string{"true", "false"}},
		{[]string{"run", "--log-level=w"}, []string{"warn"}},
	} {
		got, d := completions(t, tc.args...)
		if !slices.Equal(got, tc.want) || d != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("__complete %q: %q, directive %d; want %q and no files", tc.args, got, d, tc.want)
		}
	}
	// A value that is a path is left to the shell.
	if got, d := completions(t, "export", "--out="); len(got) != 0 || d != cobra.ShellCompDirectiveDefault {
		t.Errorf("__complete export --out=: %q, directive %d; want the shell's file names", got, d)
	}
}

// Global flags may come before the command: completion skips them, and
// their values, to find it.
func TestCompletionAfterGlobalFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"--data-dir", dir, "l"}, {"--data-dir=" + dir, "--json", "l"}, {"--config", filepath.Join(dir, "c.toml"), "l"}} {
		got, d := completions(t, args...)
		if !slices.Contains(got, "list") || !slices.Contains(got, "logs") || d != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("__complete %q: %q, directive %d; want the commands list and logs", args, got, d)
		}
	}
	if got, _ := completions(t, "--data-dir", dir, "list", "--agent", ""); !slices.Equal(got, agentNames()) {
		t.Errorf("__complete --data-dir D list --agent '': %q, want the agents", got)
	}
	if got, _ := completions(t, "--data-dir", dir, "sink", ""); !slices.Equal(got, []string{"status", "resend", "forget", "migrate", "grants"}) {
		t.Errorf("__complete --data-dir D sink '': %q, want its actions", got)
	}
	// The value of a global flag itself is a directory name, the shell's.
	if _, d := completions(t, "--data-dir", ""); d != cobra.ShellCompDirectiveDefault {
		t.Errorf("__complete --data-dir '': directive %d, want the shell's file names", d)
	}
}

// emptyHome is a new home with no store and no config in it, for the
// tests of what a command reads from the default data directory: the
// user's own must not answer.
func emptyHome(t *testing.T) string {
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME": filepath.Join(home, ".local", "share"), "CLAUDE_CONFIG_DIR": "", config.EnvConfig: ""} {
		t.Setenv(k, v)
	}
	return home
}

// A command that takes an action word first completes the words its
// usage lists; show and flush take a session id, never a file name (and
// there is no store in this home to offer one from).
func TestCompletionOfActionWords(t *testing.T) {
	emptyHome(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"usage", ""}, []string{"daily", "weekly", "monthly", "session", "model"}},
		{[]string{"usage", "--since", "7d", ""}, []string{"daily", "weekly", "monthly", "session", "model"}},
		{[]string{"sink", ""}, []string{"status", "resend", "forget", "migrate", "grants"}},
		{[]string{"sink", "--json", ""}, []string{"status", "resend", "forget", "migrate", "grants"}},
		{[]string{"config", ""}, []string{"init", "check", "show"}},
		{[]string{"show", ""}, nil},
		{[]string{"flush", ""}, nil},
		{[]string{"show", "--json", ""}, nil},
	} {
		got, d := completions(t, tc.args...)
		if !slices.Equal(got, tc.want) || d != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("__complete %q: %q, directive %d; want %q and no files", tc.args, got, d, tc.want)
		}
	}
	// After the action word, none again.
	if got, _ := completions(t, "sink", "status", ""); len(got) != 0 {
		t.Errorf("__complete sink status '': %q, want nothing", got)
	}
	// Only those three commands take an action word first.
	for _, c := range commands() {
		if w := actionWords(c.name, probeCommand(c)); w != nil && !slices.Contains([]string{"config", "usage", "sink"}, c.name) {
			t.Errorf("%s takes an action word first, by its usage: %q", c.name, w)
		}
	}
}

// Each man page is titled by its command, dated by $SOURCE_DATE_EPOCH when
// set, so that two builds of one commit write the same pages.
func TestManPageHeaders(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000") // 2023-11-14 UTC
	pages := func() string {
		files := t.TempDir()
		if code := dispatch(context.Background(), []string{"package-files", files}, &bytes.Buffer{}, &bytes.Buffer{}); code != exitOK {
			t.Fatalf("package-files: exit %d", code)
		}
		return filepath.Join(files, "man", "man1")
	}
	first, second := pages(), pages()
	for _, tc := range []struct{ file, title string }{{"agentmap.1", "AGENTMAP"}, {"agentmap-list.1", "AGENTMAP-LIST"}, {"agentmap-sink.1", "AGENTMAP-SINK"}} {
		page, err := os.ReadFile(filepath.Join(first, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		th := ""
		for _, l := range strings.Split(string(page), "\n") {
			if strings.HasPrefix(l, ".TH ") {
				th = l
				break
			}
		}
		if !strings.HasPrefix(th, `.TH "`+tc.title+`" "1" "Nov 2023" `) {
			t.Errorf("%s: header %q, want the title %s and the date Nov 2023", tc.file, th, tc.title)
		}
		again, _ := os.ReadFile(filepath.Join(second, tc.file))
		if !bytes.Equal(page, again) {
			t.Errorf("%s differs between two builds with one SOURCE_DATE_EPOCH", tc.file)
		}
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if code := dispatch(context.Background(), []string{"package-files", t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{}); code == exitOK {
		t.Error("package-files with SOURCE_DATE_EPOCH=yesterday succeeded")
	}
}

// The shell offers file names only where a file is meant: the value of a
// flag that names one (--config, --data-dir, -o, --maps…) and the
// arguments of build, validate and export. A window, a repo, a session id
// or a number is completed with nothing rather than the files here.
func TestCompletionOffersFilesOnlyForFiles(t *testing.T) {
	emptyHome(t) // show and flush read the store: not the user's own
	for _, c := range commands() {
		p := probeCommand(c)
		for _, f := range p.Flags {
			if f.Type == "" || flagValues(f.Name) != nil {
				continue // a boolean, or a flag with a list of values
			}
			want := cobra.ShellCompDirectiveNoFileComp
			if slices.Contains(fileFlags, f.Name) {
				want = cobra.ShellCompDirectiveDefault
			}
			for _, args := range [][]string{{c.name, flagSpelling(f.Name), ""}, {c.name, flagSpelling(f.Name) + "="}} {
				if got, d := completions(t, args...); len(got) != 0 || d != want {
					t.Errorf("__complete %q: %q, directive %d; want %d", args, got, d, want)
				}
			}
		}
		want := cobra.ShellCompDirectiveNoFileComp
		if slices.Contains([]string{"build", "validate", "export"}, c.name) {
			want = cobra.ShellCompDirectiveDefault
		}
		args := []string{c.name, ""}
		if actionWords(c.name, p) != nil {
			args = []string{c.name, actionWords(c.name, p)[0], ""}
		}
		if c.name == "completion" {
			continue // the shells
		}
		if _, d := completions(t, args...); d != want {
			t.Errorf("__complete %q: directive %d; want %d", args, d, want)
		}
	}
	for _, args := range [][]string{{"list", "--repo", ""}, {"report", "--session", ""}, {"usage", "--since", ""}} {
		if got, d := completions(t, args...); len(got) != 0 || d != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("__complete %q: %q, directive %d; want no file names", args, got, d)
		}
	}
}

// show and flush complete the store's session ids, newest first, each
// described by its agent, repository and start, from the flush records
// alone (no map is read: they are gone here), in the data directory the
// line names; a store not there or not readable offers nothing and says
// nothing.
func TestCompletionOfSessionIDs(t *testing.T) {
	home := emptyHome(t)
	repo := filepath.Join(home, "work", "proj")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	ids := []string{"aaaa0001-0000-4000-8000-000000000001", "aaaa0002-0000-4000-8000-000000000002", "bbbb0003-0000-4000-8000-000000000003"}
	for i, id := range ids {
		appendFile(t, filepath.Join(home, ".claude", "projects", "-proj", id+".jsonl"), claudeTurn(id, repo, 10*i))
	}
	data := filepath.Join(t.TempDir(), "data")
	var stdout, stderr bytes.Buffer
	if code := dispatch(context.Background(), []string{"scan", "--data-dir", data}, &stdout, &stderr); code != exitOK {
		t.Fatalf("scan: exit %d: %s", code, stderr.String())
	}
	if err := os.RemoveAll(filepath.Join(data, "maps")); err != nil {
		t.Fatal(err)
	}
	raw := func(args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := dispatch(context.Background(), append([]string{"__complete"}, args...), &stdout, &stderr); code != exitOK {
			t.Fatalf("__complete %q: exit %d %s", args, code, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	started := func(i int) string {
		return time.Date(2026, 5, 1, 10, 10*i, 1, 0, time.UTC).Local().Format("2006-01-02 15:04")
	}
	newestFirst := []string{ids[2], ids[1], ids[0]}
	for _, args := range [][]string{
		{"--data-dir", data, "show", ""},
		{"show", "--data-dir", data, ""},
		{"show", "--json", "--data-dir=" + data, ""},
		{"--data-dir", data, "flush", ""},
	} {
		if got, d := completions(t, args...); !slices.Equal(got, newestFirst) || d != cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder {
			t.Errorf("__complete %q: %q, directive %d; want %q", args, got, d, newestFirst)
		}
	}
	out, _ := raw("show", "--data-dir", data, "")
	if want := ids[2] + "\tclaude, proj, " + started(2) + "\n"; !strings.HasPrefix(out, want) {
		t.Errorf("descriptions:\n%s\nwant the first line %q", out, want)
	}
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"aaaa", []string{ids[1], ids[0]}},
		{"claude/a", []string{"claude/" + ids[1], "claude/" + ids[0]}},
		{"claude-code/b", []string{"claude-code/" + ids[2]}},
		{"codex/", nil},
		{"x", nil},
	} {
		if got, _ := completions(t, "show", "--data-dir", data, tc.typed); !slices.Equal(got, tc.want) {
			t.Errorf("__complete show %q: %q, want %q", tc.typed, got, tc.want)
		}
	}
	// At most completionSessions, the newest.
	defer func(n int) { completionSessions = n }(completionSessions)
	completionSessions = 2
	if got, _ := completions(t, "show", "--data-dir", data, ""); !slices.Equal(got, newestFirst[:2]) {
		t.Errorf("bounded to 2: %q", got)
	}
	// Nothing after the id, nor beside --all.
	for _, args := range [][]string{{"show", "--data-dir", data, ids[0], ""}, {"flush", "--all", "--data-dir", data, ""}} {
		if got, _ := completions(t, args...); len(got) != 0 {
			t.Errorf("__complete %q: %q, want nothing", args, got)
		}
	}
	// A store that is not there, or whose state cannot be read: nothing,
	// and no word of ours on stderr (the scripts drop cobra's line there,
	// but a shell without them would show ours).
	damaged := t.TempDir()
	if err := os.WriteFile(filepath.Join(damaged, "state.db"), []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), "none"), damaged} {
		for _, args := range [][]string{{"show", "--data-dir", dir, ""}, {"--data-dir", dir, "flush", ""}, {"show", ""}} {
			if out, errOut := raw(args...); out != fmt.Sprintf(":%d\n", cobra.ShellCompDirectiveNoFileComp) || errOut != "Completion ended with directive: ShellCompDirectiveNoFileComp\n" {
				t.Errorf("__complete %q: stdout %q, stderr %q; want the directive alone", args, out, errOut)
			}
		}
	}
}
