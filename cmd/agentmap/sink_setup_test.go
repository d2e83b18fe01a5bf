package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// docsSetupSQL is the administrator's SQL of docs/team-database.md (the
// first sql block of "Setting it up"), with each role's password '…' made
// "pw-of-<role>".
func docsSetupSQL(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "team-database.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```sql\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/team-database.md has no sql block")
	}
	var lines []string
	for _, l := range strings.Split(string(m[1]), "\n") {
		l = strings.TrimSpace(l)
		if r := regexp.MustCompile(`^CREATE ROLE (\w+)\s+LOGIN PASSWORD '…'`).FindStringSubmatch(l); r != nil {
			l = strings.Replace(l, "'…'", "'pw-of-"+r[1]+"'", 1)
		}
		if strings.Contains(l, "…") {
			t.Fatalf("a line of the setup the test cannot run as written: %q", l)
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// TestDocumentedTeamDatabaseSetup follows "Setting it up" of
// docs/team-database.md as written, with roles that are not superusers: the
// administrator's SQL, `agentmap sink migrate` as the owner, the grants
// file run as the owner, pushes as agentmap_alice and agentmap_bob (as a
// daemon does: open, check the schema, push), neither of which reads a map
// or changes the other's rows, a resend and a retraction, and `usage
// --from` and `report --from` as agentmap_reader.
func TestDocumentedTeamDatabaseSetup(t *testing.T) {
	srv := pgtest.New(t) // a server of its own: the roles' names are the docs'
	setup := docsSetupSQL(t)
	for _, want := range []string{"CREATE DATABASE agentmap;", "CREATE SCHEMA agentmap AUTHORIZATION agentmap_owner;", "CREATE ROLE agentmap_reader"} {
		if !strings.Contains(setup, want) {
			t.Fatalf("the documented setup lacks %q:\n%s", want, setup)
		}
	}
	if out, err := srv.Script(pgtest.Admin, "postgres", setup); err != nil {
		t.Fatalf("the administrator's SQL: %v: %s", err, out)
	}
	url := func(role string) string { return srv.URL(role, "pw-of-"+role, "agentmap") }

	dir := t.TempDir()
	owner := filepath.Join(dir, "owner.toml")
	if err := os.WriteFile(owner, []byte(fmt.Sprintf("version = 1\ndata_dir = %q\n[sink.postgres]\nurl = %q\npassword_env = %q\n",
		filepath.Join(dir, "data"), fmt.Sprintf("postgres://agentmap_owner@127.0.0.1:%d/agentmap?sslmode=disable", srv.Port),
		passwordEnv)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(passwordEnv, "pw-of-agentmap_owner")
	code, out, errb := run(t, "sink", "migrate", "--config", owner)
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("schema at version %d", postgres.SchemaVersion())) {
		t.Fatalf("sink migrate as the owner: exit %d\n%s%s", code, out, errb)
	}

	grants, err := os.ReadFile(filepath.Join("..", "..", "docs", "team-database-grants.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := srv.Script("agentmap_owner", "agentmap", string(grants)); err != nil {
		t.Fatalf("the grants file as the owner: %v: %s", err, out)
	}

	ctx := context.Background()
	machine := func(role string) *pgxpool.Pool {
		t.Helper()
		p, err := postgres.Open(ctx, url(role))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		if err := postgres.Migrate(ctx, p); err != nil {
			t.Fatalf("%s's start-up check: %v", role, err)
		}
		return p
	}
	alice, bob := machine("agentmap_alice"), machine("agentmap_bob")
	read := func(name string) *mapfile.Doc {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "builder", name+".map.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := mapfile.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	doc, other := read("claude_session"), read("codex_session")
	devA := postgres.Device{ID: "0a0a0a0a-0000-4000-8000-0000000000d0", Label: "alice-laptop"}
	devB := postgres.Device{ID: "0a0a0a0a-0000-4000-8000-0000000000d1", Label: "bob-desktop"}
	t0 := time.Now()
	if res, err := postgres.Push(ctx, alice, devA, []postgres.Upload{{Doc: doc, FlushedAt: t0}, {Doc: other, FlushedAt: t0}}); err != nil || res.Stored != 2 {
		t.Fatalf("push as agentmap_alice: %+v %v", res, err)
	}
	if res, err := postgres.Push(ctx, bob, devB, []postgres.Upload{{Doc: other, FlushedAt: t0}}); err != nil || res.Stored != 1 {
		t.Fatalf("push as agentmap_bob: %+v %v", res, err)
	}
	if _, err := alice.Exec(ctx, "CREATE TABLE agentmap.x (i int)"); err == nil {
		t.Fatal("a machine's role can create tables")
	}
	// Bob reads no map, and changes and removes nothing of alice's.
	if _, err := bob.Exec(ctx, "SELECT map FROM agentmap.sessions"); err == nil {
		t.Fatal("agentmap_bob reads the maps")
	}
	if tag, err := bob.Exec(ctx, "UPDATE agentmap.sessions SET tokens = 0 WHERE device_id = $1", devA.ID); err != nil || tag.RowsAffected() != 0 {
		t.Fatalf("agentmap_bob updates alice's sessions: %v %v", tag, err)
	}
	if n, err := postgres.Retract(ctx, bob, devA.ID, []string{doc.Map.Session.ID}); err != nil || n != 0 {
		t.Fatalf("agentmap_bob removes alice's session: %d %v", n, err)
	}
	if _, err := postgres.Push(ctx, bob, devA, []postgres.Upload{{Doc: doc, FlushedAt: t0.Add(time.Minute)}}); err == nil {
		t.Fatal("agentmap_bob pushes under alice's device")
	}
	if _, err := bob.Exec(ctx, "DELETE FROM agentmap.events"); err == nil {
		t.Fatal("agentmap_bob deletes events")
	}
	// Alice's own: the same maps again (a resend), and a retraction.
	if res, err := postgres.Push(ctx, alice, devA, []postgres.Upload{{Doc: doc, FlushedAt: t0}, {Doc: other, FlushedAt: t0}}); err != nil || res.Rewritten != 2 {
		t.Fatalf("resend as agentmap_alice: %+v %v", res, err)
	}
	if n, err := postgres.Retract(ctx, alice, devA.ID, []string{other.Map.Session.ID}); err != nil || n != 1 {
		t.Fatalf("retraction as agentmap_alice: %d %v", n, err)
	}

	code, out, errb = run(t, "usage", "session", "--json", "--from", url("agentmap_reader"))
	var tab struct {
		Totals struct {
			Sessions int   `json:"sessions"`
			Tokens   int64 `json:"tokens"`
		} `json:"totals"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &tab) != nil || tab.Totals.Sessions != 2 {
		t.Fatalf("usage --from as agentmap_reader: exit %d\n%s%s", code, out, errb)
	}
	// A machine's role reads nothing of the kind.
	if code, out, errb := run(t, "usage", "session", "--json", "--from", url("agentmap_alice")); code != exitFailure || out != "" || !strings.Contains(errb, "permission denied") {
		t.Fatalf("usage --from as agentmap_alice: exit %d\n%s%s", code, out, errb)
	}
	html := filepath.Join(dir, "team.html")
	if code, _, errb := run(t, "report", "--from", url("agentmap_reader"), "-o", html); code != exitOK {
		t.Fatalf("report --from as agentmap_reader: exit %d\n%s", code, errb)
	}
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), "the team database agentmap on 127.0.0.1:") || strings.Contains(string(page), "pw-of-") {
		t.Fatal("the report's scope does not name the database, or names a password")
	}
	// The reader reads the views too, and writes nothing.
	reader, err := postgres.Open(ctx, url("agentmap_reader"))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var n int
	if err := reader.QueryRow(ctx, "SELECT count(*) FROM agentmap.outcomes_per_agent").Scan(&n); err != nil || n != 2 {
		t.Fatalf("a view as agentmap_reader: %d %v", n, err)
	}
	if _, err := reader.Exec(ctx, "DELETE FROM agentmap.sessions"); err == nil {
		t.Fatal("agentmap_reader can delete")
	}
}
