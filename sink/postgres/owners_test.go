package postgres

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// machineRoles sets up a migrated database as docs/team-database.md does
// with a login role per machine: the grants file's machines' role, without
// login, and two login roles in it, alice and bob; and the reporting role
// with login. It returns their pools and the superuser's.
func machineRoles(t *testing.T) (admin, alice, bob, reader *pgxpool.Pool) {
	t.Helper()
	srv, admin := newDB(t)
	db := pgtest.Database(admin.Config().ConnString())
	group := uniqueRole("machines")
	grants, err := os.ReadFile(filepath.Join("..", "..", "docs", "team-database-grants.sql"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := group+"_alice", group+"_bob"
	sql := "CREATE ROLE " + group + ";\n" + replaceRole(string(grants), group) +
		"CREATE ROLE " + a + " LOGIN PASSWORD 'pw-of-alice' IN ROLE " + group + ";\n" +
		"CREATE ROLE " + b + " LOGIN PASSWORD 'pw-of-bob' IN ROLE " + group + ";\n" +
		"ALTER ROLE " + group + "_r LOGIN PASSWORD 'pw-of-the-reader';\n"
	if out, err := srv.Script(pgtest.Admin, db, sql); err != nil {
		t.Fatalf("roles and grants: %v: %s", err, out)
	}
	open := func(role, pw string) *pgxpool.Pool {
		p, err := Open(context.Background(), srv.URL(role, pw, db))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	return admin, open(a, "pw-of-alice"), open(b, "pw-of-bob"), open(group+"_r", "pw-of-the-reader")
}

// refusedFor reports whether err is the server's refusal for want of a
// privilege (42501).
func refusedFor(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42501"
}

// TestMachineRolesKeepToTheirOwnRows: with the documented grants, a
// machine's role reads no map (not even its own), sees only its own
// devices' rows, and cannot change or remove another device's session,
// events, files or device row; pushing, sending the same maps again (which
// repairs lost rows), a new version and a retraction still work; the
// reporting role reads everything.
func TestMachineRolesKeepToTheirOwnRows(t *testing.T) {
	admin, alice, bob, reader := machineRoles(t)
	ctx := context.Background()
	devA := Device{ID: "7b6f3a4e-a11c-4222-8333-444455556666", Label: "alice-laptop"}
	devB := Device{ID: "7b6f3a4e-b0b0-4222-8333-444455556666", Label: "bob-desktop"}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var ups []Upload
	events, tokens := 0, int64(0)
	for _, f := range fixtures {
		d := fixture(t, f)
		ups = append(ups, Upload{Doc: d, FlushedAt: t0})
		events += len(d.Map.Events)
		tokens += d.Map.Totals.Tokens
	}
	if _, err := Prepare(ctx, alice); err != nil {
		t.Fatalf("a machine's start-up check: %v", err)
	}
	if res, err := Push(ctx, alice, devA, ups); err != nil || res.Stored != 3 {
		t.Fatalf("push as alice: %+v %v", res, err)
	}
	if res, err := Push(ctx, bob, devB, ups[:2]); err != nil || res.Stored != 2 {
		t.Fatalf("push as bob: %+v %v", res, err)
	}
	alicesEvents := func() int64 {
		return count(t, admin, "SELECT count(*) FROM agentmap.events e JOIN agentmap.sessions s ON s.id = e.session WHERE s.device_id = $1", devA.ID)
	}
	if n := alicesEvents(); n != int64(events) {
		t.Fatalf("alice's events: %d, want %d", n, events)
	}

	// Bob reads no map, no summary, no label: only the keys the upsert
	// reads, of his own device's rows.
	for _, q := range []string{
		"SELECT map FROM agentmap.sessions",
		"SELECT tokens FROM agentmap.sessions",
		"SELECT repo FROM agentmap.sessions",
		"SELECT label FROM agentmap.devices",
		"SELECT count(*) FROM agentmap.events",
		"SELECT path FROM agentmap.files",
		"SELECT count(*) FROM agentmap.latest_sessions",
		"SELECT count(*) FROM agentmap.cost_per_repo_week",
	} {
		if _, err := bob.Exec(ctx, q); !refusedFor(err) {
			t.Errorf("bob: %s: %v, want permission denied", q, err)
		}
	}
	var rowsSeen int
	if err := bob.QueryRow(ctx, "SELECT count(*) FROM agentmap.sessions WHERE device_id = $1", devA.ID).Scan(&rowsSeen); err != nil || rowsSeen != 0 {
		t.Errorf("bob sees %d of alice's sessions (%v)", rowsSeen, err)
	}
	if err := bob.QueryRow(ctx, "SELECT count(*) FROM agentmap.devices").Scan(&rowsSeen); err != nil || rowsSeen != 1 {
		t.Errorf("bob sees %d devices (%v), want his own", rowsSeen, err)
	}
	if err := ReadPool(ctx, bob, Filter{}, func(Stored) error { return nil }); err == nil {
		t.Error("bob reads the maps")
	}

	// Bob changes and removes nothing of alice's.
	var aliceID int64
	if err := admin.QueryRow(ctx, "SELECT min(id) FROM agentmap.sessions WHERE device_id = $1", devA.ID).Scan(&aliceID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"UPDATE agentmap.sessions SET tokens = 0, map = '{}' WHERE device_id = '" + devA.ID + "'",
		"DELETE FROM agentmap.sessions WHERE device_id = '" + devA.ID + "'",
		"UPDATE agentmap.devices SET label = 'taken' WHERE device_id = '" + devA.ID + "'",
	} {
		if tag, err := bob.Exec(ctx, q); err == nil && tag.RowsAffected() != 0 {
			t.Errorf("bob: %s: %d rows", q, tag.RowsAffected())
		}
	}
	for _, q := range []string{
		"DELETE FROM agentmap.events",
		"DELETE FROM agentmap.files",
		"UPDATE agentmap.events SET err = true",
		"INSERT INTO agentmap.events (session, seq, t, kind, lane) VALUES (" + strconv.FormatInt(aliceID, 10) + ", 9999, 0, 'exec', 'main')",
		"INSERT INTO agentmap.files (session, file_id, path) VALUES (" + strconv.FormatInt(aliceID, 10) + ", 9999, 'x')",
		"INSERT INTO agentmap.sessions (device_id, session_id, agent, content_hash, flushed_at, map) VALUES ('" + devA.ID + "', 'planted', 'x', 'h', now(), '{}')",
		"UPDATE agentmap.sessions SET device_id = '" + devA.ID + "'",
		"INSERT INTO agentmap.devices (device_id, owner_role) VALUES ('7b6f3a4e-0000-4222-8333-444455556666', 'someone')",
		"UPDATE agentmap.devices SET owner_role = NULL",
		"TRUNCATE agentmap.events",
	} {
		if _, err := bob.Exec(ctx, q); !refusedFor(err) {
			t.Errorf("bob: %s: %v, want permission denied", q, err)
		}
	}
	// Through the sink's own statements: a push under alice's device id,
	// and a retraction of her sessions.
	if _, err := Push(ctx, bob, devA, ups[:1]); !Refused(err) || !strings.Contains(err.Error(), "belong to another role") {
		t.Errorf("bob pushes under alice's device: %v", err)
	}
	if n, err := Retract(ctx, bob, devA.ID, []string{ups[0].Doc.Map.Session.ID}); err != nil || n != 0 {
		t.Errorf("bob retracts alice's session: %d rows, %v", n, err)
	}
	if n := count(t, admin, "SELECT count(*) FROM agentmap.sessions WHERE device_id = $1 AND map <> '{}'", devA.ID); n != 3 {
		t.Fatalf("alice's sessions after bob: %d", n)
	}
	if n := count(t, admin, "SELECT sum(tokens) FROM agentmap.sessions WHERE device_id = $1", devA.ID); n != tokens {
		t.Fatalf("alice's sessions hold %d tokens after bob, want %d", n, tokens)
	}
	if n := alicesEvents(); n != int64(events) {
		t.Fatalf("alice's events after bob: %d, want %d", n, events)
	}
	if n := count(t, admin, "SELECT count(*) FROM agentmap.devices WHERE device_id = $1 AND label = $2", devA.ID, devA.Label); n != 1 {
		t.Fatal("alice's device changed")
	}

	// Alice's own work goes on: the same maps again (a resend) rewrite
	// her rows, lost events come back, a new version replaces its events,
	// a retraction removes a session with its events and files.
	if _, err := admin.Exec(ctx, "DELETE FROM agentmap.events WHERE session = $1", aliceID); err != nil {
		t.Fatal(err)
	}
	if res, err := Push(ctx, alice, devA, ups); err != nil || res.Rewritten != 3 {
		t.Fatalf("alice sends the same maps again: %+v %v", res, err)
	}
	if n := alicesEvents(); n != int64(events) {
		t.Fatalf("alice's events after the resend: %d, want %d", n, events)
	}
	newer := Upload{Doc: withMoreTokens(t, ups[0].Doc, 7), FlushedAt: t0.Add(time.Minute)}
	if res, err := Push(ctx, alice, devA, []Upload{newer}); err != nil || res.Stored != 1 {
		t.Fatalf("a new version as alice: %+v %v", res, err)
	}
	if n := alicesEvents(); n != int64(events) {
		t.Fatalf("alice's events after a new version: %d, want %d", n, events)
	}
	if n, err := Retract(ctx, alice, devA.ID, []string{ups[0].Doc.Map.Session.ID}); err != nil || n != 1 {
		t.Fatalf("alice retracts her session: %d %v", n, err)
	}
	if n := alicesEvents(); n != int64(events-len(ups[0].Doc.Map.Events)) {
		t.Fatalf("alice's events after the retraction: %d", n)
	}
	if n := count(t, admin, "SELECT count(*) FROM agentmap.files f JOIN agentmap.sessions s ON s.id = f.session WHERE s.device_id = $1", devA.ID); n != int64(len(ups[1].Doc.Map.Files)+len(ups[2].Doc.Map.Files)) {
		t.Fatalf("alice's files after the retraction: %d", n)
	}

	// The reporting role reads every device's rows and maps.
	read := 0
	if err := ReadPool(ctx, reader, Filter{Devices: []string{devA.Label, devB.Label}}, func(s Stored) error {
		if _, err := mapfile.Parse(s.Map); err != nil {
			return err
		}
		read++
		return nil
	}); err != nil || read != 3 {
		t.Fatalf("the reader reads %d maps (%v), want 3 (alice's two, bob's one left of the same sessions)", read, err)
	}
	if n := count(t, reader, "SELECT count(*) FROM agentmap.sessions"); n != 4 {
		t.Fatalf("the reader sees %d session rows, want 4", n)
	}
	if n := count(t, reader, "SELECT count(*) FROM agentmap.devices"); n != 2 {
		t.Fatalf("the reader sees %d devices", n)
	}
}

// TestMigrateFindsTheReplacingTriggerMissing: from schema 6 a push leaves
// the removal of a session's old events and files to a trigger; a schema
// without it is damaged, and says which, rather than failing each new
// version's push on a duplicate key.
func TestMigrateFindsTheReplacingTriggerMissing(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "DROP TRIGGER replace_rows ON agentmap.sessions"); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); !errors.Is(err, ErrSchemaDamaged) || !strings.Contains(err.Error(), "the trigger replace_rows of agentmap.sessions is missing") {
		t.Fatalf("migrate without the trigger: %v", err)
	}
	if _, err := Prepare(ctx, pool); !errors.Is(err, ErrSchemaDamaged) {
		t.Fatalf("a sender's start without the trigger: %v", err)
	}
}
