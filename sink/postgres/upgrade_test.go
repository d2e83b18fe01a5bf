package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// migrateTo brings a database to schema v as the build of that schema
// left it: the migrations up to v, and a schema_migrations without the
// min_writer column (which builds before this one did not make).
func migrateTo(t *testing.T, pool *pgxpool.Pool, v int) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := migrate(ctx, pool, ms[:v]); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ALTER TABLE agentmap.schema_migrations DROP COLUMN min_writer"); err != nil {
		t.Fatal(err)
	}
}

// grantsBeforeDeviceOwners are the privileges the grants file gave before
// schema 6 (which named columns that schema added): what a database set up
// at an earlier schema was granted.
const grantsBeforeDeviceOwners = `
GRANT USAGE ON SCHEMA agentmap TO agentmap_sink;
GRANT SELECT ON agentmap.schema_migrations TO agentmap_sink;
GRANT SELECT, INSERT, UPDATE ON agentmap.devices, agentmap.sessions TO agentmap_sink;
GRANT DELETE ON agentmap.sessions TO agentmap_sink;
GRANT SELECT, INSERT, DELETE ON agentmap.events, agentmap.files TO agentmap_sink;
GRANT USAGE ON SCHEMA agentmap TO agentmap_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA agentmap TO agentmap_reader;
ALTER DEFAULT PRIVILEGES IN SCHEMA agentmap GRANT SELECT ON TABLES TO agentmap_reader;
`

// documentedRoles makes a database set up as docs/team-database.md says:
// an owner that owns the schema (whose tables it makes, to version v, as
// an older build would), a machines' role and a reporting role with the
// grants file's privileges (those of the time, at a schema before 6). It
// returns the owner's and the machines' pools and the database's name.
func documentedRoles(t *testing.T, srv *pgtest.Server, v int) (owner, sink *pgxpool.Pool, db string) {
	t.Helper()
	db = pgtest.Database(srv.NewDatabase(t))
	o, s := uniqueRole("owner"), uniqueRole("sink")
	if out, err := srv.Psql(db, "CREATE ROLE "+o+" LOGIN PASSWORD 'pw-of-the-owner'; CREATE ROLE "+s+" LOGIN PASSWORD 'pw-of-the-sink'; CREATE ROLE "+s+"_r;"+
		"CREATE SCHEMA agentmap AUTHORIZATION "+o); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ctx := context.Background()
	var err error
	if owner, err = Open(ctx, srv.URL(o, "pw-of-the-owner", db)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	migrateTo(t, owner, v)
	grants, err := os.ReadFile(filepath.Join("..", "..", "docs", "team-database-grants.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if v < replacingSchema {
		grants = []byte(grantsBeforeDeviceOwners)
	}
	if out, err := srv.Script(o, db, strings.NewReplacer("agentmap_sink", s, "agentmap_reader", s+"_r").Replace(string(grants))); err != nil {
		t.Fatalf("grants: %v: %s", err, out)
	}
	if sink, err = Open(ctx, srv.URL(s, "pw-of-the-sink", db)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Close)
	return owner, sink, db
}

// TestNewBuildWritesIntoTheSchemaBeforeIt: the upgrade order of
// docs/team-database.md. Machines upgrade first: a daemon of this build
// whose role is the machines' (no DDL) finds schema 2, whose migration to
// 3 keeps its writers, and pushes into it as it is, without trying the
// migration or waiting for the migrations' lock (which a push of another
// daemon holds shared). Then the owner migrates, and the same pool pushes
// on. A later migration that records that it keeps this build's writers
// is written into; one that does not is refused.
func TestNewBuildWritesIntoTheSchemaBeforeIt(t *testing.T) {
	srv := pgtest.Shared(t)
	owner, sink, db := documentedRoles(t, srv, 2)
	ctx := context.Background()

	// Another daemon's push in flight holds the migrations' lock shared.
	other, err := pgx.Connect(ctx, srv.AdminURL(db))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock_shared($1)", migrationLock); err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	v, err := Prepare(pctx, sink)
	cancel()
	if err != nil || v != 2 {
		t.Fatalf("a daemon of this build as the machines' role on schema 2: %d %v", v, err)
	}
	d := fixture(t, "claude_session")
	dev := Device{ID: "7b6f3a4e-cccc-4222-8333-444455556666", Label: "laptop"}
	if res, err := Push(ctx, sink, dev, []Upload{{Doc: d, FlushedAt: time.Now()}}); err != nil || res.Stored != 1 {
		t.Fatalf("push into schema 2: %+v %v", res, err)
	}
	if _, err := other.Exec(ctx, "SELECT pg_advisory_unlock_shared($1)", migrationLock); err != nil {
		t.Fatal(err)
	}
	if n := count(t, owner, "SELECT max(version) FROM agentmap.schema_migrations"); n != 2 {
		t.Fatalf("the machines' role moved the schema to %d", n)
	}
	if n := count(t, owner, "SELECT count(*) FROM pg_class WHERE relname = 'sessions_session'"); n != 0 {
		t.Fatal("the machines' role made an index")
	}
	// Reading works on schema 2 too.
	read := 0
	if err := ReadPool(ctx, owner, Filter{}, func(Stored) error { read++; return nil }); err != nil || read != 1 {
		t.Fatalf("read schema 2: %d %v", read, err)
	}

	// The owner migrates; the daemon's pool pushes on.
	if err := Migrate(ctx, owner); err != nil {
		t.Fatalf("migrate as the owner: %v", err)
	}
	if n := count(t, owner, "SELECT count(*) FROM agentmap.schema_migrations WHERE min_writer IS NOT NULL"); n != int64(SchemaVersion()) {
		t.Fatalf("%d migrations record their oldest writer, want every one", n)
	}
	newer := fixture(t, "codex_session")
	if _, err := Push(ctx, sink, dev, []Upload{{Doc: newer, FlushedAt: time.Now()}}); err != nil {
		t.Fatalf("push after the migration: %v", err)
	}
	if n := count(t, owner, "SELECT count(*) FROM agentmap.latest_sessions"); n != 2 {
		t.Fatalf("latest_sessions: %d", n)
	}

	// A newer build's migration that keeps this build's writers, and one
	// that does not.
	future := SchemaVersion() + 1
	if _, err := owner.Exec(ctx, "INSERT INTO agentmap.schema_migrations (version, name, min_writer) VALUES ($1, 'future', $2)", future, SchemaVersion()); err != nil {
		t.Fatal(err)
	}
	if v, err := Prepare(ctx, sink); err != nil || v != future {
		t.Fatalf("a newer schema that keeps this build's writers: %d %v", v, err)
	}
	if _, err := Push(ctx, sink, dev, []Upload{{Doc: d, FlushedAt: time.Now().Add(time.Minute)}}); err != nil {
		t.Fatalf("push into a newer schema that keeps this build's writers: %v", err)
	}
	if err := Migrate(ctx, owner); err != nil {
		t.Fatalf("migrate of a newer schema that keeps this build's writers: %v", err)
	}
	if _, err := owner.Exec(ctx, "INSERT INTO agentmap.schema_migrations (version, name, min_writer) VALUES ($1, 'breaking', $1)", future+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, sink, dev, []Upload{{Doc: d, FlushedAt: time.Now().Add(2 * time.Minute)}}); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("push into a newer schema that does not keep this build's writers: %v", err)
	}
	if _, err := Prepare(ctx, sink); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("start on a newer schema that does not keep this build's writers: %v", err)
	}
}

// TestSenderAsTheMachinesRoleOnTheSchemaBefore: the daemon's sender, as
// the machines' role, delivers into schema 2 and says the schema is not
// this build's; nothing is refused, nothing retried.
func TestSenderAsTheMachinesRoleOnTheSchemaBefore(t *testing.T) {
	srv := pgtest.Shared(t)
	_, sink, _ := documentedRoles(t, srv, 2)
	sdb, maps := storeFixtures(t, true)
	var logs syncBuffer
	s, err := NewSender(sdb.Outbox(Name), maps, Config{URL: sink.Config().ConnString()}, slogTo(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Drain(context.Background()); err != nil {
		t.Fatalf("drain into schema 2: %v", err)
	}
	if st, _ := sdb.Outbox(Name).Stats(); st.Len != 0 || st.Sent != 3 || st.State.LastError != "" {
		t.Fatalf("after the drain: %+v", st)
	}
	if !strings.Contains(logs.String(), "schema=2") || !strings.Contains(logs.String(), "sink migrate") {
		t.Fatalf("the log does not say the schema is behind:\n%s", logs.String())
	}
}

// TestMigrateNamesTheOwnerOfTablesAnotherRoleMade: a database whose tables
// a superuser made (the old migrate could not run as the documented
// owner, so people ran it as a superuser) cannot be migrated by the
// schema's owner; `agentmap sink migrate` names the tables' owner and what
// to do, instead of a permission error whose hint is to do what the user
// is doing, and takes no lock. The SQL of docs/team-database.md for it, run
// as a superuser, lets the owner migrate.
func TestMigrateNamesTheOwnerOfTablesAnotherRoleMade(t *testing.T) {
	srv := pgtest.Shared(t)
	db := pgtest.Database(srv.NewDatabase(t))
	o := uniqueRole("owner")
	if out, err := srv.Psql(db, "CREATE ROLE "+o+" LOGIN PASSWORD 'pw-of-the-owner'; CREATE SCHEMA agentmap AUTHORIZATION "+o); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ctx := context.Background()
	admin, err := Open(ctx, srv.AdminURL(db))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	migrateTo(t, admin, 2)
	madeBy(t, srv, db, pgtest.Admin)
	owner, err := Open(ctx, srv.URL(o, "pw-of-the-owner", db))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	// A push in flight holds the migrations' lock shared: the refusal
	// does not wait for it.
	other, err := pgx.Connect(ctx, srv.AdminURL(db))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock_shared($1)", migrationLock); err != nil {
		t.Fatal(err)
	}
	// Whether the owner may read the tables (granted by hand) or not.
	for _, grant := range []string{"", "GRANT SELECT ON ALL TABLES IN SCHEMA agentmap TO " + o} {
		if grant != "" {
			if out, err := srv.Psql(db, grant); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = Migrate(mctx, owner)
		cancel()
		t.Logf("migrate as the schema's owner (%q): %v", grant, err)
		// agentmap_admin is the bootstrap superuser (initdb -U): REASSIGN
		// OWNED would refuse its objects, so the error does not say it.
		if !errors.Is(err, ErrNotOwner) || !Refused(err) || !strings.Contains(err.Error(), "belong to "+pgtest.Admin) ||
			!strings.Contains(err.Error(), "OWNER TO "+o) || strings.Contains(err.Error(), "REASSIGN") ||
			strings.Contains(err.Error(), "pw-of-the-owner") {
			t.Fatalf("migrate as the schema's owner, with tables a superuser made (%q): %v", grant, err)
		}
		if grant == "" {
			if _, perr := Prepare(ctx, owner); perr == nil || perr.Error() != err.Error() {
				t.Fatalf("a daemon as the schema's owner: %v", perr)
			}
		}
	}
	if _, err := other.Exec(ctx, "SELECT pg_advisory_unlock_shared($1)", migrationLock); err != nil {
		t.Fatal(err)
	}

	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "team-database.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)### Tables another role owns\n.*?```sql\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/team-database.md has no SQL under \"Tables another role owns\"")
	}
	if out, err := srv.Psql(db, strings.ReplaceAll(string(m[1]), "agentmap_owner", o)); err != nil {
		t.Fatalf("the documented SQL: %v: %s", err, out)
	}
	if err := Migrate(ctx, owner); err != nil {
		t.Fatalf("migrate as the owner after the documented SQL: %v", err)
	}
	if n := count(t, owner, "SELECT max(version) FROM agentmap.schema_migrations"); n != int64(SchemaVersion()) {
		t.Fatalf("schema at %d", n)
	}
	if n := count(t, owner, "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'agentmap' AND pg_get_userbyid(c.relowner) <> $1", o); n != 0 {
		t.Fatalf("%d objects of the schema another role owns", n)
	}
}

// TestUpgradeWithASessionSentTwice: a schema 2 database holding the same
// session id from two devices (a machine whose state was rebuilt) migrates
// to 3, and the views count the session once, in its latest version.
func TestUpgradeWithASessionSentTwice(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	pool, err := Open(ctx, srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	migrateTo(t, pool, 2)
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var all []Upload
	for _, f := range fixtures {
		all = append(all, Upload{Doc: fixture(t, f), FlushedAt: t0})
	}
	if _, err := Push(ctx, pool, Device{ID: "7b6f3a4e-dddd-4222-8333-444455556666"}, all); err != nil {
		t.Fatal(err)
	}
	again := Upload{Doc: withMoreTokens(t, all[0].Doc, 1000), FlushedAt: t0.Add(time.Hour)}
	if _, err := Push(ctx, pool, Device{ID: "7b6f3a4e-eeee-4222-8333-444455556666"}, []Upload{again}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT sum(sessions) FROM agentmap.cost_per_repo_week"); n != 4 {
		t.Fatalf("schema 2 counts %d sessions (one row per device)", n)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate schema 2 with a session sent twice: %v", err)
	}
	var want int64
	for _, u := range append([]Upload{again}, all[1:]...) {
		want += u.Doc.Map.Totals.Tokens
	}
	if n := count(t, pool, "SELECT sum(sessions) FROM agentmap.cost_per_repo_week"); n != 3 {
		t.Fatalf("after migration 3: %d sessions", n)
	}
	if n := count(t, pool, "SELECT sum(tokens) FROM agentmap.cost_per_repo_week"); n != want {
		t.Fatalf("after migration 3: %d tokens, want %d (the later version's)", n, want)
	}
}

// TestUpgradeWithASubagentAndItsParent: a schema 3 database holding a
// spawned agent's map beside its parent's (which holds it as a lane) and
// an orphan subagent counts the child twice; migrated to 4, its views count
// it once and the orphan once, from rows a writer of schema 3 wrote, and a
// writer of schema 3 (rows pushed into schema 4 the way it writes them)
// keeps them counted so.
func TestUpgradeWithASubagentAndItsParent(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	pool, err := Open(ctx, srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	migrateTo(t, pool, 3)
	f := newFamily(t)
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	f.push(t, pool, t0)
	twice := counted(f.parent, f.child, f.orphan)
	for _, d := range []*mapfile.Doc{f.parent, f.child, f.orphan} {
		for _, e := range d.Map.Events {
			if e.Kind == "verify" {
				twice.shell-- // failing_verbs counts test commands from migration 7 on
			}
		}
	}
	if got := countViews(t, pool); !sameCounts(got, twice) {
		t.Fatalf("schema 3 counts %+v, want the child twice: %+v", got, twice)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate schema 3 with a subagent and its parent: %v", err)
	}
	want := counted(f.parent, f.orphan)
	if got := countViews(t, pool); !sameCounts(got, want) {
		t.Fatalf("after migration 4 the views count %+v, want the parent and the orphan once each: %+v", got, want)
	}
	if n := count(t, pool, "SELECT max(version) FROM agentmap.schema_migrations"); n != int64(SchemaVersion()) {
		t.Fatalf("schema at %d", n)
	}
	// A new version of the child, pushed with the writer's own columns
	// (the parent is the server's to fill): still left out.
	again := reshaped(t, f.child, func(tree map[string]any) { tree["contentHash"] = "child-again" })
	if _, err := Push(ctx, pool, Device{ID: "7b6f3a4e-2222-4222-8333-444455556666"}, []Upload{{Doc: again, FlushedAt: t0.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if got := countViews(t, pool); !sameCounts(got, want) {
		t.Fatalf("after a new version of the child the views count %+v, want %+v", got, want)
	}
}

// withMoreTokens is a later version of a map: n more tokens, another
// content hash.
func withMoreTokens(t *testing.T, d *mapfile.Doc, n int64) *mapfile.Doc {
	t.Helper()
	var tree map[string]any
	dec := json.NewDecoder(bytes.NewReader(d.Canonical))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		t.Fatal(err)
	}
	totals := tree["totals"].(map[string]any)
	totals["tokens"] = d.Map.Totals.Tokens + n
	tree["contentHash"] = fmt.Sprintf("%s-plus-%d", d.Map.ContentHash, n)
	raw, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mapfile.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if out.Map.Totals.Tokens != d.Map.Totals.Tokens+n || out.Map.Session.ID != d.Map.Session.ID {
		t.Fatal("the changed map is not the session with more tokens")
	}
	return out
}

// madeBy gives the schema's tables and views to role, as a build before
// migrations acted as the schema's owner left them when a superuser ran
// them.
func madeBy(t *testing.T, srv *pgtest.Server, db, role string) {
	t.Helper()
	if out, err := srv.Psql(db, `DO $$ DECLARE r record; BEGIN
		FOR r IN SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = 'agentmap' AND c.relkind IN ('r', 'v') LOOP
			EXECUTE format('ALTER %s agentmap.%I OWNER TO %I', CASE r.relkind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, r.relname, '`+role+`');
		END LOOP; END $$`); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// TestMigrateSaysReassignForARoleOfItsOwn: tables made by a superuser that
// is not the bootstrap one: the error also offers REASSIGN OWNED, which,
// as docs/team-database.md says, lets the owner migrate.
func TestMigrateSaysReassignForARoleOfItsOwn(t *testing.T) {
	srv := pgtest.Shared(t)
	db := pgtest.Database(srv.NewDatabase(t))
	o, maker := uniqueRole("owner"), uniqueRole("maker")
	if out, err := srv.Psql(db, "CREATE ROLE "+o+" LOGIN PASSWORD 'pw-of-the-owner'; CREATE ROLE "+maker+" LOGIN SUPERUSER PASSWORD 'pw-of-the-maker';"+
		"CREATE SCHEMA agentmap AUTHORIZATION "+o); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ctx := context.Background()
	mp, err := Open(ctx, srv.URL(maker, "pw-of-the-maker", db))
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Close()
	migrateTo(t, mp, 2)
	madeBy(t, srv, db, maker)
	owner, err := Open(ctx, srv.URL(o, "pw-of-the-owner", db))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	err = Migrate(ctx, owner)
	if !errors.Is(err, ErrNotOwner) || !strings.Contains(err.Error(), "REASSIGN OWNED BY "+maker+" TO "+o) {
		t.Fatalf("migrate as the owner, with tables a superuser of its own made: %v", err)
	}
	if out, err := srv.Psql(db, "REASSIGN OWNED BY "+maker+" TO "+o); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := Migrate(ctx, owner); err != nil {
		t.Fatalf("migrate after REASSIGN OWNED: %v", err)
	}
}

// TestMigrationGivesUpOnALongQuery: migration 3 replaces the views, which
// waits for the queries reading them, while every push waits for the
// migration: with lock_timeout it gives up (55P03, a conflict: tried
// again, it passes) instead of stalling the pushes behind a long report,
// and says to run it again.
func TestMigrationGivesUpOnALongQuery(t *testing.T) {
	srv := pgtest.Shared(t)
	url := srv.NewDatabase(t)
	ctx := context.Background()
	pool, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	migrateTo(t, pool, 2)
	report, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer report.Close(ctx)
	tx, err := report.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT * FROM agentmap.cost_per_repo_week"); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	start := time.Now()
	err = Migrate(mctx, pool)
	cancel()
	t.Logf("migrate behind a long query, after %s: %v", time.Since(start).Round(time.Second), err)
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "55P03" || !conflict(err) || !strings.Contains(err.Error(), "run `agentmap sink migrate` again") {
		t.Fatalf("migrate behind a long query: %v", err)
	}
	tx.Rollback(ctx)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate once the query ended: %v", err)
	}
	var def string
	if err := pool.QueryRow(ctx, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'agentmap' AND indexname = 'sessions_session'").Scan(&def); err != nil ||
		!strings.Contains(def, "(session_id, flushed_at, received_at, id)") {
		t.Fatalf("the index of a session id's newer rows: %q %v", def, err)
	}
}

// upsertSessionOfSchema4 is the session's upsert of the builds of schemas 1
// to 4, which read the new values from EXCLUDED.
const upsertSessionOfSchema4 = `
WITH held AS (SELECT content_hash FROM agentmap.sessions WHERE device_id = $1 AND session_id = $2)
INSERT INTO agentmap.sessions AS s (device_id, session_id, agent, repo, remote, repos, started_at, duration_ms,
	models, tokens, input_tokens, cache_write_tokens, cache_read_tokens, output_tokens, cost_usd, outcome,
	calls, requests, errors, user_turns, subagents, files_touched, commits, prs_created, truncated, path_mode,
	producer, content_hash, flushed_at, received_at, map)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
	$23, $24, $25, $26, $27, $28, $29, now(), $30)
ON CONFLICT (device_id, session_id) DO UPDATE SET
	agent = EXCLUDED.agent, repo = EXCLUDED.repo, remote = EXCLUDED.remote, repos = EXCLUDED.repos,
	started_at = EXCLUDED.started_at, duration_ms = EXCLUDED.duration_ms, models = EXCLUDED.models,
	tokens = EXCLUDED.tokens, input_tokens = EXCLUDED.input_tokens,
	cache_write_tokens = EXCLUDED.cache_write_tokens, cache_read_tokens = EXCLUDED.cache_read_tokens,
	output_tokens = EXCLUDED.output_tokens, cost_usd = EXCLUDED.cost_usd, outcome = EXCLUDED.outcome,
	calls = EXCLUDED.calls, requests = EXCLUDED.requests, errors = EXCLUDED.errors,
	user_turns = EXCLUDED.user_turns, subagents = EXCLUDED.subagents, files_touched = EXCLUDED.files_touched,
	commits = EXCLUDED.commits, prs_created = EXCLUDED.prs_created, truncated = EXCLUDED.truncated,
	path_mode = EXCLUDED.path_mode, producer = EXCLUDED.producer, content_hash = EXCLUDED.content_hash,
	flushed_at = EXCLUDED.flushed_at, map = EXCLUDED.map,
	received_at = CASE WHEN s.content_hash = EXCLUDED.content_hash THEN s.received_at ELSE now() END
WHERE s.flushed_at <= EXCLUDED.flushed_at
RETURNING id, coalesce((SELECT h.content_hash = $28 FROM held h), false)`

// pushAsSchema4Writer stores one map with the statements of a build of
// schema 4: the device and the session from EXCLUDED, then DELETE of the
// session's events and files and COPY of the new ones.
func pushAsSchema4Writer(t *testing.T, pool *pgxpool.Pool, dev Device, u Upload) {
	t.Helper()
	ctx := context.Background()
	r := rowOf(u.Doc.Map)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO agentmap.devices (device_id, label, producer) VALUES ($1, $2, $3)
			ON CONFLICT (device_id) DO UPDATE SET label = EXCLUDED.label, producer = EXCLUDED.producer, last_seen = now()`,
			dev.ID, dev.Label, dev.Producer); err != nil {
			return err
		}
		var id int64
		var held bool
		if err := tx.QueryRow(ctx, upsertSessionOfSchema4, dev.ID, r.sessionID, r.agent, r.repo, r.remote, r.repos, r.startedAt, r.durationMs,
			r.models, r.tokens, r.in, r.cw, r.cr, r.out, r.cost, r.outcome, r.calls, r.requests, r.errors,
			r.userTurns, r.subagents, r.filesTouched, r.commits, r.prs, r.truncated, r.pathMode, r.producer,
			r.contentHash, u.FlushedAt.UTC(), string(u.Doc.Canonical)).Scan(&id, &held); err != nil {
			return err
		}
		for _, table := range []string{"events", "files"} {
			if _, err := tx.Exec(ctx, "DELETE FROM agentmap."+table+" WHERE session = ANY($1)", []int64{id}); err != nil {
				return err
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"agentmap", "events"}, eventColumns,
			&eventSource{ids: []int64{id}, rows: []*sessionRow{&r}, i: 0, j: -1}); err != nil {
			return err
		}
		var files [][]any
		for _, f := range r.files {
			files = append(files, []any{id, f.ID, nullable(f.Repo), f.Path, f.Reads, f.Edits, nullable(f.Op)})
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"agentmap", "files"}, fileColumns, pgx.CopyFromRows(files))
		return err
	})
	if err != nil {
		t.Fatalf("push as a writer of schema 4: %v", err)
	}
}

// TestWriterOfSchema4WritesIntoTheDeviceOwnersSchema: migrations 5 and 6
// keep the writers before them (min_writer 1): a daemon of a schema 4 build,
// as the machines' role with the grants of its time, writes into the
// migrated schema, new versions of a device it sent before (which belongs
// to no role) and a device of its own, with its events and files replaced
// once; its rows say nothing of unpriced models (NULL), the rows it
// updates keep what they said. This build writes into schema 4 as it is.
func TestWriterOfSchema4WritesIntoTheDeviceOwnersSchema(t *testing.T) {
	srv := pgtest.Shared(t)
	owner, sink, _ := documentedRoles(t, srv, 4)
	ctx := context.Background()
	old := Device{ID: "7b6f3a4e-4444-4222-8333-000000000004", Label: "old-build"}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	d := fixture(t, "claude_session")
	pushAsSchema4Writer(t, sink, old, Upload{Doc: d, FlushedAt: t0})
	// This build, into schema 4, as the same role.
	this := Device{ID: "7b6f3a4e-4444-4222-8333-000000000005", Label: "this-build"}
	if _, err := Push(ctx, sink, this, []Upload{{Doc: fixture(t, "codex_session"), FlushedAt: t0}}); err != nil {
		t.Fatalf("this build into schema 4: %v", err)
	}
	if err := Migrate(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if n := count(t, owner, "SELECT count(*) FROM agentmap.devices WHERE owner_role IS NULL"); n != 2 {
		t.Fatalf("%d devices of no role after the migration, want the two sent before", n)
	}
	newer := withMoreTokens(t, d, 3)
	pushAsSchema4Writer(t, sink, old, Upload{Doc: newer, FlushedAt: t0.Add(time.Minute)})
	other := Device{ID: "7b6f3a4e-4444-4222-8333-000000000006", Label: "old-build-2"}
	pushAsSchema4Writer(t, sink, other, Upload{Doc: d, FlushedAt: t0})
	for dev, want := range map[string]int{old.ID: len(d.Map.Events), other.ID: len(d.Map.Events)} {
		if n := count(t, owner, "SELECT count(*) FROM agentmap.events e JOIN agentmap.sessions s ON s.id = e.session WHERE s.device_id = $1", dev); n != int64(want) {
			t.Fatalf("device %s: %d events, want %d", dev, n, want)
		}
	}
	if n := count(t, owner, "SELECT tokens FROM agentmap.sessions WHERE device_id = $1", old.ID); n != newer.Map.Totals.Tokens {
		t.Fatalf("the new version holds %d tokens", n)
	}
	if n := count(t, owner, "SELECT count(*) FROM agentmap.sessions WHERE device_id = $1 AND unpriced_models IS NULL", other.ID); n != 1 {
		t.Error("a row a writer of schema 4 inserted says which models had no price")
	}
	if n := count(t, owner, "SELECT count(*) FROM agentmap.devices WHERE device_id = $1 AND owner_role IS NOT NULL", other.ID); n != 1 {
		t.Error("a device a writer of schema 4 sent after the migration has no role")
	}
}
