package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// shellCommand is the report's rule for what its "Shell verbs that fail or
// are retried" counts (report/data.go, sessionAgg): an event of kind exec
// or verify (a test, build, lint or type check) with a verb.
func shellCommand(e *mapfile.Event) bool {
	return e.Verb != "" && (e.Kind == "exec" || e.Kind == "verify")
}

// verbCounts is a row of failing_verbs.
type verbCounts struct {
	calls, failures, retries, sessions int64
}

// shellVerbs is what failing_verbs must hold of maps, by the report's rule.
func shellVerbs(maps ...*mapfile.Doc) map[string]verbCounts {
	out := map[string]verbCounts{}
	for _, d := range maps {
		seen := map[string]bool{}
		for i := range d.Map.Events {
			e := &d.Map.Events[i]
			if !shellCommand(e) {
				continue
			}
			c := out[e.Verb]
			c.calls++
			if e.Err {
				c.failures++
			}
			if e.RetryOf != nil {
				c.retries++
			}
			if !seen[e.Verb] {
				seen[e.Verb] = true
				c.sessions++
			}
			out[e.Verb] = c
		}
	}
	return out
}

// failingVerbs reads the view, by verb. Its retries column is read only
// from schema 7 on (withRetries).
func failingVerbs(t *testing.T, pool *pgxpool.Pool, withRetries bool) map[string]verbCounts {
	t.Helper()
	retries := "0"
	if withRetries {
		retries = "retries"
	}
	rows, err := pool.Query(context.Background(), "SELECT verb, calls, failures, "+retries+", sessions FROM agentmap.failing_verbs")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]verbCounts{}
	for rows.Next() {
		var verb string
		var c verbCounts
		if err := rows.Scan(&verb, &c.calls, &c.failures, &c.retries, &c.sessions); err != nil {
			t.Fatal(err)
		}
		out[verb] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// testCommands are two maps whose test commands fail: the Claude Code
// golden map with its `npm test` (failed, then retried and passed) made
// `go test`, and the Codex one with its passing `cargo test` made a
// `pytest` that failed.
func testCommands(t *testing.T) (goTest, pytest *mapfile.Doc) {
	t.Helper()
	rename := func(d *mapfile.Doc, from, to string, fail bool) *mapfile.Doc {
		n := 0
		out := reshaped(t, d, func(tree map[string]any) {
			for _, e := range tree["events"].([]any) {
				if ev := e.(map[string]any); ev["kind"] == "verify" && ev["verb"] == from {
					ev["verb"] = to
					if fail {
						ev["err"], ev["exitCode"], ev["errClass"] = true, 1, "exit_code"
					}
					n++
				}
			}
			tree["contentHash"] = "with-" + to
		})
		if n == 0 {
			t.Fatalf("the map %s has no %s", d.Map.Session.ID, from)
		}
		return out
	}
	return rename(fixture(t, "claude_session"), "npm test", "go test", false),
		rename(fixture(t, "codex_session"), "cargo test", "pytest", true)
}

// TestFailingVerbsCountTestCommands: a failing `go test` and a failing
// `pytest` (events of kind verify) are in failing_verbs, with the calls,
// failures and retries the report counts of them, beside the other shell
// commands (kind exec).
func TestFailingVerbsCountTestCommands(t *testing.T) {
	_, pool := newDB(t)
	goTest, pytest := testCommands(t)
	if _, err := Push(context.Background(), pool, Device{ID: "7b6f3a4e-7777-4222-8333-444455556666"},
		[]Upload{{Doc: goTest, FlushedAt: time.Now()}, {Doc: pytest, FlushedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	got := failingVerbs(t, pool, true)
	if c := got["go test"]; c != (verbCounts{calls: 2, failures: 1, retries: 1, sessions: 1}) {
		t.Errorf("go test: %+v, want 2 calls, 1 failure, 1 retry, 1 session", c)
	}
	if c := got["pytest"]; c != (verbCounts{calls: 1, failures: 1, sessions: 1}) {
		t.Errorf("pytest: %+v, want 1 call, 1 failure, 1 session", c)
	}
	want := shellVerbs(goTest, pytest)
	if len(got) != len(want) {
		t.Errorf("failing_verbs has %d verbs %v, the report %d %v", len(got), got, len(want), want)
	}
	for v, w := range want {
		if got[v] != w {
			t.Errorf("%s: %+v, the report counts %+v", v, got[v], w)
		}
	}
	var rate float64
	if err := pool.QueryRow(context.Background(), "SELECT failure_rate FROM agentmap.failing_verbs WHERE verb = 'go test'").Scan(&rate); err != nil || rate != 0.5 {
		t.Errorf("go test's failure rate: %v %v, want 0.5", rate, err)
	}
}

// TestUpgradeCountsTestCommandsAsShellVerbs: the machines write into
// schema 6 first (its failing_verbs counts exec events alone, so the test
// commands are not there), then the owner migrates to 7 and the view
// counts them from the rows already held.
func TestUpgradeCountsTestCommandsAsShellVerbs(t *testing.T) {
	srv := pgtest.Shared(t)
	owner, sink, _ := documentedRoles(t, srv, 6)
	ctx := context.Background()
	if v, err := Prepare(ctx, sink); err != nil || v != 6 {
		t.Fatalf("this build as the machines' role on schema 6: %d %v", v, err)
	}
	goTest, pytest := testCommands(t)
	if _, err := Push(ctx, sink, Device{ID: "7b6f3a4e-8888-4222-8333-444455556666", Label: "laptop"},
		[]Upload{{Doc: goTest, FlushedAt: time.Now()}, {Doc: pytest, FlushedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	before := failingVerbs(t, owner, false)
	if _, ok := before["go test"]; ok {
		t.Fatalf("schema 6 counts go test: %+v", before)
	}
	if err := Migrate(ctx, owner); err != nil {
		t.Fatalf("migrate schema 6 to 7 as the owner: %v", err)
	}
	got, want := failingVerbs(t, owner, true), shellVerbs(goTest, pytest)
	if len(got) != len(want) || got["go test"] != want["go test"] || got["pytest"] != want["pytest"] || got["cargo run"] != want["cargo run"] {
		t.Fatalf("after migration 7 failing_verbs holds %+v, want %+v", got, want)
	}
}
