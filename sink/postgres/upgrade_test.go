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

// documentedRoles makes a database set up as docs/team-database.md says:
// an owner that owns the schema (whose tables it makes, to version v, as
// an older build would), a machines' role and a reporting role with the
// grants file's privileges. It returns the owner's and the machines' pools
// and the database's name.
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
	if st, _ := sdb.Outbox(Name).Stats(); st.Len != 0 || st.State.Sent != 3 || st.State.LastError != "" {
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
	if got, twice := countViews(t, pool), counted(f.parent, f.child, f.orphan); !sameCounts(got, twice) {
		t.Fatalf("schema 3 counts %+v, want the child twice: %+v", got, twice)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate schema 3 with a subagent and its parent: %v", err)
	}
	want := counted(f.parent, f.orphan)
	if got := countViews(t, pool); !sameCounts(got, want) {
		t.Fatalf("after migration 4 the views count %+v, want the parent and the orphan once each: %+v", got, want)
	}
	if n := count(t, pool, "SELECT max(version) FROM agentmap.schema_migrations"); n != 4 {
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
