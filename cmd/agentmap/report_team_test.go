package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/report"
	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// TestReportAndUsageFromTeamDatabase: usage and report over the team
// database are the same as over the same maps on disk, and --device and
// --repo choose what they say.
func TestReportAndUsageFromTeamDatabase(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.NewDatabase(t)
	ctx := context.Background()
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	names := []string{"claude_session", "codex_session", "cursor_transcript"}
	all, alice := t.TempDir(), t.TempDir()
	var docs []postgres.Upload
	for i, n := range names {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "builder", n+".map.json"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(all, n+".json"), raw, 0o600)
		if i < 2 {
			os.WriteFile(filepath.Join(alice, n+".json"), raw, 0o600)
		}
		d, err := mapfile.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, postgres.Upload{Doc: d, FlushedAt: time.Now()})
	}
	if _, err := postgres.Push(ctx, pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-000000000001", Label: "alice"}, docs[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Push(ctx, pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-000000000002", Label: "bob"}, docs[2:]); err != nil {
		t.Fatal(err)
	}
	usage := func(args ...string) string {
		t.Helper()
		code, out, errb := run(t, append([]string{"usage", "session", "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("usage %v: exit %d\n%s", args, code, errb)
		}
		return out
	}
	if team, local := usage("--from", url), usage("--maps", all); team != local {
		t.Errorf("usage of the team database differs from the same maps on disk:\n%s\nwant\n%s", team, local)
	}
	if team, local := usage("--from", url, "--device", "alice"), usage("--maps", alice); team != local {
		t.Errorf("usage --device alice:\n%s\nwant\n%s", team, local)
	}
	if team, local := usage("--from", url, "--repo", "api"), usage("--maps", all, "--repo", "api"); team != local || !strings.Contains(team, "claude") {
		t.Errorf("usage --repo api:\n%s\nwant\n%s", team, local)
	}
	if team, local := usage("--from", url, "--repo", "s*"), usage("--maps", all, "--repo", "s*"); team != local {
		t.Errorf("usage --repo s*:\n%s\nwant\n%s", team, local)
	}
	out := filepath.Join(t.TempDir(), "team.html")
	code, _, errb := run(t, "report", "--from", url, "--device", "bob,alice", "-o", out)
	if code != exitOK || !strings.Contains(errb, "3 sessions") {
		t.Fatalf("report --from: exit %d\n%s", code, errb)
	}
	html, _ := os.ReadFile(out)
	if strings.Contains(string(html), srv.Password()) || strings.Contains(errb, srv.Password()) {
		t.Fatal("the report shows the database password")
	}
	checkFailingVerbsEqualReport(t, url, pool)
	if code, _, errb := run(t, "usage", "--device", "bob"); code != exitUsage {
		t.Fatalf("--device without --from: exit %d %s", code, errb)
	}
}

// teamDB is a server of the test's own with one migrated database; it
// returns the server, the database's superuser URL and a pool on it.
func teamDB(t *testing.T) (*pgtest.Server, string, *pgxpool.Pool) {
	t.Helper()
	srv := pgtest.New(t)
	url := srv.NewDatabase(t)
	ctx := context.Background()
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return srv, url, pool
}

// builderMaps reads the golden maps and writes them into a directory.
func builderMaps(t *testing.T, dir string, names ...string) []postgres.Upload {
	t.Helper()
	var ups []postgres.Upload
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "builder", n+".map.json"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n+".json"), raw, 0o600)
		d, err := mapfile.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		ups = append(ups, postgres.Upload{Doc: d, FlushedAt: time.Now()})
	}
	return ups
}

// TestTeamSourceThatCannotBeReadWritesNothing: a team database that refuses
// the connection (a wrong password) or the query (a role without grants)
// is an error, not a source with no maps: report leaves the file there as
// it was and usage prints no table, both exit 1, and nothing says
// "skipped" or shows the password.
func TestTeamSourceThatCannotBeReadWritesNothing(t *testing.T) {
	srv, url, pool := teamDB(t)
	if _, err := postgres.Push(context.Background(), pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-0000000000e1"},
		builderMaps(t, t.TempDir(), "claude_session")); err != nil {
		t.Fatal(err)
	}
	db := pgtest.Database(url)
	if out, err := srv.Psql(db, "CREATE ROLE nogrants LOGIN PASSWORD 'pw-no-grants'"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	out := filepath.Join(t.TempDir(), "r4.html")
	const before = "<html>the report of last week</html>"
	for name, from := range map[string]string{
		"wrong password": srv.URL(pgtest.Admin, "not-the-password", db),
		"no grants":      srv.URL("nogrants", "pw-no-grants", db),
		// A URL pasted after key=value pairs: pgx would send it to the
		// server as a setting, whose refusal quotes it.
		"a URL after key=value pairs": fmt.Sprintf("host=127.0.0.1 port=%d user=nogrants password=pw-no-grants dbname=%s postgres://u:not-the-password@h/db?sslmode=disable",
			srv.Port, db),
	} {
		os.WriteFile(out, []byte(before), 0o600)
		code, stdout, errb := run(t, "report", "--from", from, "-o", out)
		t.Logf("report --from (%s): exit %d: %s", name, code, strings.TrimSpace(errb))
		if got, _ := os.ReadFile(out); code != exitFailure || string(got) != before {
			t.Errorf("report --from (%s): exit %d, file now %d bytes\n%s", name, code, len(got), errb)
		}
		if !strings.Contains(errb, "cannot read the team database") || strings.Contains(errb, "skipped") ||
			strings.Contains(errb, "sessions ->") || strings.Contains(errb+stdout, "not-the-password") || strings.Contains(errb+stdout, "pw-no-grants") {
			t.Errorf("report --from (%s) says:\n%s%s", name, stdout, errb)
		}
		code, stdout, errb = run(t, "usage", "--json", "--from", from)
		if code != exitFailure || stdout != "" || !strings.Contains(errb, "cannot read the team database") || strings.Contains(errb, "skipped") {
			t.Errorf("usage --from (%s): exit %d\n%s%s", name, code, stdout, errb)
		}
		// A role without grants is told a way to the grants that a
		// package has too: the command that prints them, not a file of
		// the source.
		if name == "no grants" && (!strings.Contains(errb, "`agentmap sink grants` prints the grants") || strings.Contains(errb, "docs/")) {
			t.Errorf("usage --from (%s) names no way to the grants a package has:\n%s", name, errb)
		}
	}
}

// TestSinkGrantsPrintsTheGrantsFile: `agentmap sink grants` prints the
// grants file this build carries, byte for byte, without a config or a
// data directory, and connects nowhere.
func TestSinkGrantsPrintsTheGrantsFile(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "team-database-grants.sql"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTMAP_CONFIG", filepath.Join(t.TempDir(), "none.toml"))
	code, stdout, stderr := run(t, "sink", "grants")
	if code != exitOK || stdout != string(want) || stderr != "" {
		t.Fatalf("sink grants: exit %d, %d bytes (the file has %d), stderr %q", code, len(stdout), len(want), stderr)
	}
	if code, _, stderr := run(t, "sink", "grants", "x"); code != exitUsage || !strings.Contains(stderr, "unexpected argument") {
		t.Errorf("sink grants x: exit %d %q", code, stderr)
	}
}

// TestTeamReportNamesNoPassword: whatever form --from takes, the report
// (made to be shared) names the database, host, port and user it read,
// and neither the password nor the rest of the connection string.
func TestTeamReportNamesNoPassword(t *testing.T) {
	srv, url, pool := teamDB(t)
	if _, err := postgres.Push(context.Background(), pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-0000000000e2"},
		builderMaps(t, t.TempDir(), "claude_session")); err != nil {
		t.Fatal(err)
	}
	db, pw := pgtest.Database(url), srv.Password()
	quoted := "owner pw with spaces"
	if out, err := srv.Psql(db, "CREATE ROLE spaced LOGIN SUPERUSER PASSWORD '"+quoted+"'"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, c := range []struct{ from, secret, user string }{
		{fmt.Sprintf("host=127.0.0.1 port=%d user=%s password = %s dbname=%s sslmode=disable", srv.Port, pgtest.Admin, pw, db), pw, pgtest.Admin},
		{fmt.Sprintf("host=127.0.0.1 port=%d user=spaced password='%s' dbname=%s sslmode=disable", srv.Port, quoted, db), "with spaces", "spaced"},
		{fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&password=%s", pgtest.Admin, srv.Port, db, pw), pw, pgtest.Admin},
		{url, pw, pgtest.Admin},
	} {
		out := filepath.Join(t.TempDir(), "team.html")
		code, stdout, errb := run(t, "report", "--from", c.from, "-o", out)
		if code != exitOK {
			t.Fatalf("report --from %s: exit %d\n%s", config.MaskPassword(c.from), code, errb)
		}
		html, _ := os.ReadFile(out)
		for _, bad := range []string{c.secret, "password", "sslmode"} {
			if strings.Contains(string(html), bad) || strings.Contains(stdout+errb, c.secret) {
				t.Errorf("report --from %s: the report or its output holds %q", config.MaskPassword(c.from), bad)
			}
		}
		want := fmt.Sprintf("the team database %s on 127.0.0.1:%d as %s", db, srv.Port, c.user)
		if !strings.Contains(string(html), want) {
			t.Errorf("report --from %s: the report does not say %q", config.MaskPassword(c.from), want)
		}
	}
}

// TestTeamUsageCountsASessionSentTwiceOnce: a machine whose state was
// rebuilt (a new device id) sends its history again; usage and report
// --from count each session once, with its tokens once, as the same maps
// on disk, and --device still gives one device's own rows.
func TestTeamUsageCountsASessionSentTwiceOnce(t *testing.T) {
	_, url, pool := teamDB(t)
	ctx := context.Background()
	all := t.TempDir()
	ups := builderMaps(t, all, "claude_session", "codex_session", "cursor_transcript")
	if _, err := postgres.Push(ctx, pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-0000000000f1", Label: "laptop"}, ups); err != nil {
		t.Fatal(err)
	}
	var again []postgres.Upload
	for _, u := range ups[:2] {
		again = append(again, postgres.Upload{Doc: u.Doc, FlushedAt: u.FlushedAt.Add(time.Hour)})
	}
	if _, err := postgres.Push(ctx, pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-0000000000f2", Label: "laptop-rebuilt"}, again); err != nil {
		t.Fatal(err)
	}
	usage := func(args ...string) string {
		t.Helper()
		code, out, errb := run(t, append([]string{"usage", "session", "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("usage %v: exit %d\n%s", args, code, errb)
		}
		return out
	}
	local := usage("--maps", all)
	if team := usage("--from", url); team != local {
		t.Errorf("usage of a team database with sessions sent twice differs from the maps on disk:\n%s\nwant\n%s", team, local)
	}
	if team := usage("--from", url, "--device", "laptop"); team != local {
		t.Errorf("usage --device laptop:\n%s\nwant\n%s", team, local)
	}
	if team := usage("--from", url, "--device", "laptop,laptop-rebuilt"); team != local {
		t.Errorf("usage --device of both:\n%s\nwant\n%s", team, local)
	}
	out := filepath.Join(t.TempDir(), "team.html")
	if code, _, errb := run(t, "report", "--from", url, "-o", out); code != exitOK || !strings.Contains(errb, "3 sessions") {
		t.Fatalf("report --from: exit %d\n%s", code, errb)
	}
}

// TestTeamUsageOfAnUnknownDevice: --device naming a device the team
// database has none of (a label mistyped) is an error naming it and the
// devices there are, exit 1, not a table that says nothing was used.
func TestTeamUsageOfAnUnknownDevice(t *testing.T) {
	_, url, pool := teamDB(t)
	ctx := context.Background()
	for _, dev := range []postgres.Device{{ID: "0a0a0a0a-0000-4000-8000-0000000000a1", Label: "alice-laptop"}, {ID: "0a0a0a0a-0000-4000-8000-0000000000b1", Label: "bob-desktop"}} {
		if _, err := postgres.Push(ctx, pool, dev, builderMaps(t, t.TempDir(), "claude_session")); err != nil {
			t.Fatal(err)
		}
	}
	const want = `--device: no device "alice-laptpo" in the team database (its devices: alice-laptop, bob-desktop; a device id matches too)`
	code, out, errb := run(t, "usage", "--from", url, "--device", "alice-laptpo")
	if code != exitFailure || out != "" || !strings.Contains(errb, want) || strings.Contains(errb, "cannot read") {
		t.Errorf("usage --device with a device there is none of: exit %d\n%s%s", code, out, errb)
	}
	html := filepath.Join(t.TempDir(), "team.html")
	if code, _, errb := run(t, "report", "--from", url, "--device", "bob-desktop,alice-laptpo", "-o", html); code != exitFailure || !strings.Contains(errb, want) {
		t.Errorf("report --device with a device there is none of: exit %d\n%s", code, errb)
	}
	if _, err := os.Stat(html); err == nil {
		t.Error("report --device with a device there is none of wrote a report")
	}
	if code, out, errb := run(t, "usage", "--json", "--from", url, "--device", "alice-laptop"); code != exitOK || !strings.Contains(out, `"sessions": 1`) {
		t.Errorf("usage --device with a device there is: exit %d\n%s%s", code, out, errb)
	}
}

// checkFailingVerbsEqualReport: the team database's failing_verbs view
// counts the shell verbs the report over the same database counts in its
// "Shell verbs that fail or are retried" (every verb's runs, failures and
// retries, and the sessions that ran it), the report read with --from url.
func checkFailingVerbsEqualReport(t *testing.T, url string, pool *pgxpool.Pool) {
	t.Helper()
	type counts struct{ calls, failures, retries, sessions int64 }
	out := filepath.Join(t.TempDir(), "verbs.html")
	if code, _, errb := run(t, "report", "--from", url, "-o", out); code != exitOK {
		t.Fatalf("report --from: exit %d\n%s", code, errb)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := report.Unpack(page)
	if err != nil || len(docs) == 0 {
		t.Fatalf("the report's data: %d documents, %v", len(docs), err)
	}
	var overview struct {
		Str  []string `json:"str"`
		Aggs []struct {
			Verbs []int64 `json:"v"` // verb, runs, failed, retried
		} `json:"a"`
	}
	if err := json.Unmarshal(docs[0], &overview); err != nil {
		t.Fatal(err)
	}
	want := map[string]counts{}
	for _, a := range overview.Aggs {
		for i := 0; i+3 < len(a.Verbs); i += 4 {
			v := overview.Str[a.Verbs[i]]
			c := want[v]
			c.calls, c.failures, c.retries, c.sessions = c.calls+a.Verbs[i+1], c.failures+a.Verbs[i+2], c.retries+a.Verbs[i+3], c.sessions+1
			want[v] = c
		}
	}
	got := map[string]counts{}
	rows, err := pool.Query(context.Background(), "SELECT verb, calls, failures, retries, sessions FROM agentmap.failing_verbs")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		var c counts
		if err := rows.Scan(&v, &c.calls, &c.failures, &c.retries, &c.sessions); err != nil {
			t.Fatal(err)
		}
		got[v] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the report counts no shell verb")
	}
	var differ []string
	for v, w := range want {
		if got[v] != w {
			differ = append(differ, fmt.Sprintf("%q: view %+v, report %+v", v, got[v], w))
		}
	}
	for v, g := range got {
		if _, ok := want[v]; !ok {
			differ = append(differ, fmt.Sprintf("%q: view %+v, not in the report", v, g))
		}
	}
	sort.Strings(differ)
	if len(differ) > 0 {
		t.Fatalf("failing_verbs differs from the report's shell verbs in %d verbs of %d: %v", len(differ), len(want), head(differ))
	}
	t.Logf("failing_verbs equals the report's shell verbs: %d verbs", len(want))
}
