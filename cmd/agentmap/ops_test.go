package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/watchers"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestListFilter(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 5, d, 12, 0, 0, 0, time.UTC) }
	es := []daemon.Entry{
		{Key: "claude/a", ID: "a", Agent: "claude", Repos: []string{"api"}, Start: day(10), Outcome: "completed"},
		{Key: "codex/b", ID: "b", Agent: "codex", Repos: []string{"web", "api-docs"}, Start: day(5), Outcome: "errored"},
		{Key: "cursor/c", ID: "c", Agent: "cursor", Start: day(1), Outcome: "completed"},
		{Key: "claude/d", ID: "d", Agent: "claude"}, // no time at all
	}
	for _, tc := range []struct {
		name string
		f    listFilter
		want []string
	}{
		{"none", listFilter{}, []string{"a", "b", "c", "d"}},
		{"agent", listFilter{agent: "Claude"}, []string{"a", "d"}},
		{"since", listFilter{window: window{since: day(4)}}, []string{"a", "b"}},
		{"until", listFilter{window: window{until: day(4)}}, []string{"c"}},
		{"repo exact", listFilter{repo: "api"}, []string{"a"}},
		{"repo glob", listFilter{repo: "api*"}, []string{"a", "b"}},
		{"outcome", listFilter{outcome: "completed"}, []string{"a", "c"}},
		{"all", listFilter{agent: "codex", window: window{since: day(2)}, repo: "web", outcome: "errored"}, []string{"b"}},
		{"nothing", listFilter{agent: "codex", outcome: "completed"}, nil},
	} {
		var got []string
		for _, e := range tc.f.apply(es) {
			got = append(got, e.ID)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseWindow(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"2w":                   now.Add(-14 * 24 * time.Hour),
		"12h":                  now.Add(-12 * time.Hour),
		"1.5d":                 now.Add(-36 * time.Hour),
		"2026-05-01T00:00:00Z": time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
	} {
		got, err := parseWindow(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("%s: got %v %v, want %v", in, got, err, want)
		}
	}
	if got, err := parseWindow("2026-05-01", now); err != nil || got.Day() != 1 || got.Hour() != 0 {
		t.Errorf("date: %v %v", got, err)
	}
	for _, bad := range []string{"", "soon", "-3d", "d", "7x", "-1h"} {
		if _, err := parseWindow(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A date or a time that is not one says why.
	for in, why := range map[string]string{
		"2026-13-01":           "not a date",
		"2026-02-30":           "not a date",
		"2026-06-01T10:00:00":  "a time needs its zone",
		"2026-06-01 10:00":     "has a T between the date and the time",
		"2026-06-01T25:00:00Z": "an RFC 3339 time such as",
	} {
		if _, err := parseWindow(in, now); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want it to say %q", in, err, why)
		}
	}
}

func TestFindEntry(t *testing.T) {
	es := []daemon.Entry{{Key: "claude/abc1", ID: "abc1"}, {Key: "codex/abc2", ID: "abc2"}, {Key: "claude/abc", ID: "abc"}}
	for id, want := range map[string]string{"abc1": "abc1", "abc": "abc", "codex/": "abc2", "claude/abc1": "abc1"} {
		if e, err := findEntry(es, id); err != nil || e.ID != want {
			t.Errorf("%s: got %q %v, want %q", id, e.ID, err, want)
		}
	}
	if _, err := findEntry(es, "ab"); err == nil || !strings.Contains(err.Error(), "matches 3") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := findEntry(es, "zz"); err == nil {
		t.Error("unknown id found")
	}
	// The agent's name at the start of a key is no id: "c" names none.
	if _, err := findEntry(es, "c"); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Errorf("c matched the agents' names: %v", err)
	}
}

func TestInterspersed(t *testing.T) {
	fl := flag.NewFlagSet("x", flag.ContinueOnError)
	fl.Bool("json", false, "")
	fl.String("data-dir", "", "")
	got := interspersed(fl, []string{"ID", "--json", "--data-dir", "D", "--", "-odd"})
	want := []string{"--json", "--data-dir", "D", "--", "ID", "-odd"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	// A value flag given last has no value: the flag package must say so,
	// not take the "--" that ends the flags for it.
	args := interspersed(fl, []string{"ID", "--data-dir"})
	if err := fl.Parse(args); err == nil || !strings.Contains(err.Error(), "flag needs an argument") {
		t.Fatalf("%q parsed: %v (data-dir %q)", args, err, fl.Lookup("data-dir").Value)
	}
}

// The summary of show, rendered from a map built from our own fixture, is
// compared with a golden file.
func TestShowGolden(t *testing.T) {
	m := fixtureMap(t, "../../testdata/claude/basic.jsonl")
	sum := summarize(m, 3)
	sum.Path = "maps/claude/2026/05/x.json.gz"
	var b bytes.Buffer
	writeSummary(&b, sum)
	// Local times depend on the zone the test runs in.
	got := strings.ReplaceAll(b.String(), startLocal(sum.Start), "<start>")
	golden := filepath.Join("..", "..", "testdata", "ops", "show.golden")
	if *update {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Fatalf("show output differs from %s:\n%s", golden, got)
	}
	if len(sum.Files) != 3 || sum.Files[0].Reads+sum.Files[0].Edits < sum.Files[2].Reads+sum.Files[2].Edits {
		t.Errorf("files not the most touched first: %+v", sum.Files)
	}
	total := 0
	for _, e := range sum.Errors {
		total += e.Count
	}
	if total == 0 || len(sum.Lanes) == 0 {
		t.Errorf("errors %+v lanes %+v", sum.Errors, sum.Lanes)
	}
}

func startLocal(s string) string {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return formatTime(t)
}

func fixtureMap(t *testing.T, path string) *mapfile.Map {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.json.gz")
	if code, _, errb := run(t, "build", "-o", out, path); code != exitOK {
		t.Fatalf("build: %s", errb)
	}
	doc, err := mapfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return doc.Map
}

func TestDataDirCheck(t *testing.T) {
	dir := t.TempDir()
	priv := filepath.Join(dir, "p")
	open := filepath.Join(dir, "o")
	os.Mkdir(priv, 0o700)
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	group := filepath.Join(dir, "g")
	os.Mkdir(group, 0o700)
	os.Chmod(group, 0o770)
	world := filepath.Join(dir, "w")
	os.Mkdir(world, 0o700)
	os.Chmod(world, 0o777)
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	stateDir := filepath.Join(dir, "s")
	os.MkdirAll(filepath.Join(stateDir, "state.db"), 0o700)
	os.Chmod(stateDir, 0o700)
	for _, tc := range []struct {
		dir, goos, level, has string
	}{
		{priv, "linux", levelOK, "0700"},
		{open, "linux", levelWarn, "0755"},
		// What scan and run refuse fails, naming who may write.
		{group, "linux", levelFail, "writable by its group (mode 0770)"},
		{world, "linux", levelFail, "writable by its group and others (mode 0777)"},
		{open, "windows", levelOK, "exists"},
		{filepath.Join(dir, "missing"), "linux", levelInfo, "creates it"},
		{file, "linux", levelFail, "not a directory"},
		{stateDir, "linux", levelFail, "state.db is not a regular file: scan and run refuse to start"},
	} {
		c := dataDirCheck(tc.dir, tc.goos)
		if c.Level != tc.level || !strings.Contains(c.Msg, tc.has) {
			t.Errorf("%s on %s: %+v", tc.dir, tc.goos, c)
		}
	}
}

func TestCleanupCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name, "settings.json")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	set := write("a", `{"cleanupPeriodDays": 90, "apiKeyHelper": "CANARY-secret"}`)
	unset := write("b", `{"model": "x"}`)
	short := write("s", `{"cleanupPeriodDays": 7}`)
	long := write("l", `{"cleanupPeriodDays": 100000}`)
	broken := write("c", `{"cleanupPeriodDays": `)
	missing := filepath.Join(dir, "none", "settings.json")
	for _, tc := range []struct {
		files   []string
		enabled bool
		level   string
		has     string
	}{
		{[]string{set}, true, levelInfo, "older than 90 days (cleanupPeriodDays in " + set},
		{[]string{unset}, true, levelInfo, "older than 30 days (the default)"},
		{[]string{missing, set}, true, levelInfo, "older than 90 days"},
		{[]string{missing}, true, levelInfo, "30 days"},
		{[]string{short}, true, levelWarn, "older than 7 days (cleanupPeriodDays in " + short + "): sessions from a time agentmap was not running are lost; set cleanupPeriodDays to 30 or more"},
		{[]string{long}, true, levelOK, "Claude Code keeps transcripts for 100000 days"},
		{[]string{broken}, true, levelWarn, "not valid JSON"},
		{[]string{set}, false, levelInfo, "disabled"},
	} {
		c := cleanupCheck(tc.files, tc.enabled)
		if c.Level != tc.level || !strings.Contains(c.Msg, tc.has) || strings.Contains(c.Msg, "CANARY") {
			t.Errorf("%v: %+v", tc.files, c)
		}
	}
	if got := claudeSettings("/h", "/a, /b"); !reflect.DeepEqual(got, []string{"/a/settings.json", "/b/settings.json"}) {
		t.Errorf("CLAUDE_CONFIG_DIR: %v", got)
	}
	if got := claudeSettings("/h", ""); !reflect.DeepEqual(got, []string{filepath.Join("/h", ".claude", "settings.json")}) {
		t.Errorf("default: %v", got)
	}
}

func TestRootAndServiceAndDiskChecks(t *testing.T) {
	dir := t.TempDir()
	there := filepath.Join(dir, "claude")
	os.Mkdir(there, 0o700)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	c := config.Default()
	c.Agents.Codex.Enabled = false
	checks := rootChecks([]watchers.Root{
		{Agent: "claude", Dir: there}, {Agent: "claude", Dir: filepath.Join(dir, "nope")}, {Agent: "cursor", Dir: file},
	}, c)
	want := []string{"info codex disabled", "ok claude readable", "info claude does not exist", "warn cursor not a directory"}
	if len(checks) != len(want) {
		t.Fatalf("checks: %+v", checks)
	}
	for i, w := range want {
		f := strings.Fields(w)
		if checks[i].Level != f[0] || checks[i].Topic != f[1] || !strings.Contains(checks[i].Msg, strings.Join(f[2:], " ")) {
			t.Errorf("check %d: %+v, want %s", i, checks[i], w)
		}
	}
	for st, level := range map[string]string{"running": levelOK, "not installed": levelWarn, "stopped": levelWarn,
		"not supported on plan9": levelInfo,
		"running (the package's unit /usr/lib/systemd/user/agentmap.service, enabled)":                                               levelOK,
		"stopped (the package's unit /usr/lib/systemd/user/agentmap.service, not enabled: systemctl --user enable --now agentmap …)": levelWarn} {
		if c := serviceCheck(st, nil, false, nil); c.Level != level {
			t.Errorf("service %q: %+v", st, c)
		}
	}
	if c := serviceCheck("", errors.New("no bus"), false, nil); c.Level != levelWarn {
		t.Errorf("service error: %+v", c)
	}
	// No user systemd: install is not the advice; the manager's error is.
	noManager := errors.New("systemd --user is not running for this user ($XDG_RUNTIME_DIR is not set), so a user unit would never start. Either: ...")
	if c := serviceCheck("not installed", nil, false, noManager); c.Level != levelWarn ||
		strings.Contains(c.Msg, "agentmap install sets it up") || !strings.Contains(c.Msg, "agentmap install cannot start it here: systemd --user is not running") {
		t.Errorf("no user systemd: %+v", c)
	}
	// A daemon run by hand is as good as the service: green.
	for _, st := range []string{"not installed", "installed, but systemd --user is not running"} {
		if c := serviceCheck(st, nil, true, noManager); c.Level != levelOK {
			t.Errorf("daemon running, service %q: %+v", st, c)
		}
	}
	if v := verdict([]check{{levelOK, "a", ""}, {levelInfo, "b", ""}}); v != "all good: no warnings, no failures" {
		t.Errorf("verdict: %q", v)
	}
	if v := verdict([]check{{levelOK, "a", ""}, {levelWarn, "b", ""}}); v != "1 warning, 0 failures" {
		t.Errorf("verdict: %q", v)
	}
	if c := diskCheck(lowDisk-1, nil); c.Level != levelWarn {
		t.Errorf("low disk: %+v", c)
	}
	if c := diskCheck(100*lowDisk, nil); c.Level != levelOK {
		t.Errorf("disk: %+v", c)
	}
	if free, err := freeDisk(existingAncestor(filepath.Join(dir, "a", "b"))); err != nil || free == 0 {
		t.Errorf("free disk: %d %v", free, err)
	}
}

// The daemon with no config file builds maps with build's defaults: the
// same bytes for the same logs.
func TestDefaultMapOptionsAreBuilds(t *testing.T) {
	c := config.Default()
	got, err := builderOptions(c, c.Maps.PathMode)
	if err != nil {
		t.Fatal(err)
	}
	want := builder.Options{PathMode: redact.ModeRelative, EventCap: builder.DefaultEventCap, Producer: producer()}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("daemon defaults %+v, build's %+v", got, want)
	}
	c.Prices = map[string]config.Price{"Claude-Opus": {Input: 1, Output: 2}}
	c.Maps.HashKeyFile = filepath.Join(t.TempDir(), "k", "hash.key")
	got, err = builderOptions(c, "hashed")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.HashKey) != config.HashKeySize || got.Prices["claude-opus"] != (builder.Price{Input: 1, Output: 2}) {
		t.Fatalf("options %+v", got)
	}
	if fi, err := os.Stat(c.Maps.HashKeyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
}

// Flags given override the file; those not given leave it alone.
func TestRunOverrides(t *testing.T) {
	c := config.Default()
	c.Flush.Idle.Duration = time.Hour
	c.Watch.RetireAfter.Duration = 2 * time.Hour
	c.Log.Level = "debug"
	ov := runOverrides{set: map[string]bool{"data-dir": true, "path-mode": true}, dataDir: "/d", pathMode: "dirs_only",
		idle: time.Second, retireAfter: time.Minute}
	e, err := ov.apply(c)
	if err != nil {
		t.Fatal(err)
	}
	if e.dataDir != "/d" || e.live.Idle != time.Hour || e.retireAfter != 2*time.Hour || e.level.String() != "DEBUG" ||
		e.live.Exclude != nil {
		t.Fatalf("effective %+v", e)
	}
	c.Privacy.Exclude = []string{"/secret"}
	ov.set["idle"], ov.set["retire-after"], ov.set["log-level"], ov.level = true, true, true, "error"
	if e, _ = ov.apply(c); e.live.Idle != time.Second || e.retireAfter != time.Minute || e.level.String() != "ERROR" ||
		e.live.Exclude == nil || !e.live.Exclude("/secret/x") || e.live.Exclude("/public") {
		t.Fatalf("effective %+v", e)
	}
}

// list and show write durations and token counts as the report does: a
// tenth of a second under ten seconds (a 68 ms session is not 0s, 2.8 s
// not 2s), and thousands as 4.1k beside 16k, not 4124; each unit for the
// figure as rounded (59.7 s is 1m00s, 999,700 tokens 1.0M).
func TestDurationsAndTokensAsTheReportWritesThem(t *testing.T) {
	for ms, want := range map[int64]string{0: "-", 68: "0.1s", 2800: "2.8s", 9940: "9.9s", 12_400: "12s", 61_000: "1m01s", 3_720_000: "1h02m",
		9_970: "10s", 59_700: "1m00s", 3_599_600: "1h00m", 59_499: "59s",
		251621665404380: "69894907h03m"} { // beyond a time.Duration: not negative
		if got := formatDuration(ms); got != want {
			t.Errorf("formatDuration(%d) = %q, want %q", ms, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 4124: "4.1k", 16_422: "16k", 2_800_000: "2.8M",
		9_960: "10k", 999_700: "1.0M", 999_499: "999k", 999_960_000: "1.0G", 1_400_000_000: "1.4G"} {
		if got := formatTokens(n); got != want {
			t.Errorf("formatTokens(%d) = %q, want %q", n, got, want)
		}
	}
}

// list --json prints, an entry at a time, the bytes an indenting
// json.Encoder prints for the whole array.
func TestListJSONIsTheEncodersArray(t *testing.T) {
	day := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	all := []daemon.Entry{
		{Key: "claude/a", ID: "a", Agent: "claude", Repos: []string{"api", "<web>"}, Start: day, Outcome: "completed", Recorded: true},
		{Key: "codex/b", ID: "b", Agent: "codex", Tokens: 12, CostUSD: 0.25, Unpriced: []string{"m&m"}},
		{Key: "codex/c", ID: "c", Agent: "codex", Live: true},
	}
	parents := map[string]string{"codex/c": "codex/b"}
	for n := 0; n <= len(all); n++ {
		es := all[:n]
		out := make([]listEntry, len(es))
		for i, e := range es {
			out[i] = listEntry{Entry: e, Parent: parents[e.Key]}
		}
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		writeListJSON(&got, es, parents)
		if got.String() != want.String() {
			t.Errorf("%d entries:\n%s\nwant\n%s", n, got.String(), want.String())
		}
	}
}

// run --once has no reload loop: a hangup ends it, as it ends scan; only a
// following run holds the hangups from its start.
func TestOnceIsReadAsRunReadsIt(t *testing.T) {
	for args, want := range map[string]bool{
		"--once": true, "-once": true, "--once=true": true, "--once=1": true, "--config c --once": true,
		"": false, "--once=false": false, "--log-file f": false, "-- --once": false, "--config --once=0": false,
		"--once --once=false": false, "--once=false --once": true, "--once=TRUE": true,
	} {
		if got := once(strings.Fields(args)); got != want {
			t.Errorf("once(%q) = %v, want %v", args, got, want)
		}
	}
}
