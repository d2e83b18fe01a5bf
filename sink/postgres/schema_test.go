package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
	"github.com/agentmap/agentmap/state"
)

// uniqueRole is a role name of its own on the shared server.
func uniqueRole(prefix string) string {
	return prefix + "_" + strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
}

// TestMigrateAsTheOwnerOfASchemaAnAdministratorMade: the owner of a schema
// an administrator created (CREATE SCHEMA agentmap AUTHORIZATION owner, as
// docs/team-database.md says) has no CREATE on the database; PostgreSQL
// checks that privilege before IF NOT EXISTS, so Migrate must not ask for
// a schema that exists.
func TestMigrateAsTheOwnerOfASchemaAnAdministratorMade(t *testing.T) {
	srv := pgtest.Shared(t)
	db := pgtest.Database(srv.NewDatabase(t))
	owner := uniqueRole("owner")
	if out, err := srv.Psql(db, "CREATE ROLE "+owner+" LOGIN PASSWORD 'pw-of-the-owner'; CREATE SCHEMA agentmap AUTHORIZATION "+owner); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ctx := context.Background()
	pool, err := Open(ctx, srv.URL(owner, "pw-of-the-owner", db))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for range 2 {
		if err := Migrate(ctx, pool); err != nil {
			t.Fatalf("migrate as the schema's owner: %v", err)
		}
	}
	if n := count(t, pool, "SELECT max(version) FROM agentmap.schema_migrations"); n != int64(SchemaVersion()) {
		t.Fatalf("schema at %d, want %d", n, SchemaVersion())
	}
}

// A superuser migrating a schema another role owns makes its objects the
// owner's, so that the owner migrates the next version alone.
func TestMigrateAsASuperuserLeavesTheObjectsToTheSchemasOwner(t *testing.T) {
	srv := pgtest.Shared(t)
	db := pgtest.Database(srv.NewDatabase(t))
	owner := uniqueRole("owner")
	if out, err := srv.Psql(db, "CREATE ROLE "+owner+" LOGIN PASSWORD 'pw-of-the-owner'; CREATE SCHEMA agentmap AUTHORIZATION "+owner); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ctx := context.Background()
	admin, err := Open(ctx, srv.URL(pgtest.Admin, srv.Password(), db))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := Migrate(ctx, admin); err != nil {
		t.Fatalf("migrate as a superuser: %v", err)
	}
	if n := count(t, admin, "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "+
		"WHERE n.nspname = 'agentmap' AND c.relkind IN ('r', 'v') AND c.relowner <> n.nspowner"); n != 0 {
		t.Errorf("%d tables and views of the schema belong to another role than its owner", n)
	}
	own, err := Open(ctx, srv.URL(owner, "pw-of-the-owner", db))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := Migrate(ctx, own); err != nil {
		t.Errorf("the owner after a superuser's migration: %v", err)
	}
}

// TestSinkRoleBeforeTheSchemaIsToldWhatToDo: a machine's role that
// connects before the owner migrated (no schema yet, or a schema without
// its tables and grants) is told to run `agentmap sink migrate` as the
// owner and to apply the grants, whatever PostgreSQL refused.
func TestSinkRoleBeforeTheSchemaIsToldWhatToDo(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	sink, owner := uniqueRole("sink"), uniqueRole("owner")
	if out, err := srv.Psql("postgres", "CREATE ROLE "+sink+" LOGIN PASSWORD 'pw-of-the-sink'; CREATE ROLE "+owner+" LOGIN"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, setup := range []string{"", "CREATE SCHEMA agentmap AUTHORIZATION " + owner} {
		db := pgtest.Database(srv.NewDatabase(t))
		if setup != "" {
			if out, err := srv.Psql(db, setup); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		pool, err := Open(ctx, srv.URL(sink, "pw-of-the-sink", db))
		if err != nil {
			t.Fatal(err)
		}
		// `agentmap sink migrate` as the sink role, and a daemon's start.
		_, perr := Prepare(ctx, pool)
		for _, err := range []error{Migrate(ctx, pool), perr} {
			t.Logf("the sink role before the schema (%q) is told: %v", setup, err)
			if err == nil || !strings.Contains(err.Error(), "run `agentmap sink migrate` as the schema's owner") ||
				!strings.Contains(err.Error(), "`agentmap sink grants` prints them") || !Refused(err) {
				t.Errorf("the sink role before the schema (%q): %v", setup, err)
			}
			if err != nil && strings.Contains(err.Error(), "pw-of-the-sink") {
				t.Errorf("the error names the password: %v", err)
			}
		}
		pool.Close()
	}
}

// TestMigrateFindsMissingTablesAndViews: a schema at its version but with
// a table or a view dropped is damaged, and Migrate names what is missing.
func TestMigrateFindsMissingTablesAndViews(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "DROP TABLE agentmap.files"); err != nil {
		t.Fatal(err)
	}
	err := Migrate(ctx, pool)
	if !errors.Is(err, ErrSchemaDamaged) || !strings.Contains(err.Error(), "agentmap.files is missing") {
		t.Fatalf("migrate without agentmap.files: %v", err)
	}
	if _, err := pool.Exec(ctx, "DROP VIEW agentmap.failing_verbs"); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); !errors.Is(err, ErrSchemaDamaged) || !strings.Contains(err.Error(), "agentmap.files and agentmap.failing_verbs are missing") {
		t.Fatalf("migrate without agentmap.files and a view: %v", err)
	}
	// Every table and view the migrations create is checked: the list
	// kept in history is what the files create.
	want := []string{"agentmap.schema_migrations", "agentmap.devices", "agentmap.sessions", "agentmap.events", "agentmap.files",
		"agentmap.cost_per_repo_week", "agentmap.failing_verbs", "agentmap.mcp_failure_rates", "agentmap.outcomes_per_agent",
		"agentmap.latest_sessions", "agentmap.counted_sessions"}
	if got := objects(SchemaVersion()); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("objects checked: %v, want %v", got, want)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	created := regexp.MustCompile(`(?im)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(agentmap\.\w+)`)
	for _, m := range ms {
		var made []string
		for _, g := range created.FindAllStringSubmatch(m.sql, -1) {
			if name := strings.ToLower(g[1]); !slices.Contains(objects(m.version-1), name) && !slices.Contains(made, name) {
				made = append(made, name)
			}
		}
		if strings.Join(made, " ") != strings.Join(history[m.version].objects, " ") {
			t.Errorf("%s creates %v; history lists %v", m.name, made, history[m.version].objects)
		}
	}
}

// TestPushRefusesASchemaMigratedMeanwhile: a pool opened (and its schema
// checked) before a newer agentmap migrated the database, in a way this
// build cannot write into, refuses to write, with the error of the
// start-up check, at the next push or retraction; a schema set back below
// this build's is refused unless the migrations since keep its writers.
func TestPushRefusesASchemaMigratedMeanwhile(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	dev := Device{ID: "7b6f3a4e-9999-4222-8333-444455556666"}
	d := fixture(t, "claude_session")
	if _, err := Push(ctx, pool, dev, []Upload{{Doc: d, FlushedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO agentmap.schema_migrations (version, name) VALUES (999, 'future')"); err != nil {
		t.Fatal(err)
	}
	start := Migrate(ctx, pool)
	if !errors.Is(start, ErrSchemaTooNew) {
		t.Fatalf("start-up check: %v", start)
	}
	newer := fixture(t, "codex_session")
	_, err := Push(ctx, pool, dev, []Upload{{Doc: newer, FlushedAt: time.Now()}})
	if !errors.Is(err, ErrSchemaTooNew) || err.Error() != start.Error() {
		t.Fatalf("push into a newer schema: %v, want %v", err, start)
	}
	if _, err := Retract(ctx, pool, dev.ID, []string{d.Map.Session.ID}); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("retraction in a newer schema: %v", err)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions"); n != 1 {
		t.Fatalf("%d sessions after pushes into a newer schema, want the 1 from before", n)
	}
	// A schema set back below this build's: written into when the
	// migrations since keep its writers (schema 2: migration 3 adds an
	// index and views), refused where none is recorded.
	if _, err := pool.Exec(ctx, "DELETE FROM agentmap.schema_migrations WHERE version >= 3"); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, pool, dev, []Upload{{Doc: newer, FlushedAt: time.Now()}}); err != nil {
		t.Fatalf("push into schema 2: %v", err)
	}
	if _, err := pool.Exec(ctx, "DELETE FROM agentmap.schema_migrations"); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, pool, dev, []Upload{{Doc: newer, FlushedAt: time.Now()}}); !errors.Is(err, ErrSchemaOld) {
		t.Fatalf("push into a schema with no migration recorded: %v", err)
	}
}

// TestSenderRefusesASchemaMigratedMeanwhile: a sender whose pool is open
// when a newer agentmap migrates the database keeps its queue, says why,
// and logs a refusal, not an unreachable server.
func TestSenderRefusesASchemaMigratedMeanwhile(t *testing.T) {
	_, pool, db, maps, _ := drainedFixtures(t)
	var logs syncBuffer
	s, err := NewSender(db.Outbox(Name), maps, Config{URL: pool.Config().ConnString()}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	requeue(t, db, maps, fixtures[0], 2)
	if err := s.Drain(context.Background()); err != nil { // the pool is open, the schema checked
		t.Fatal(err)
	}
	if st, _ := db.Outbox(Name).Stats(); st.Len != 0 || st.State.LastError != "" {
		t.Fatalf("the sender sent nothing before the migration: %+v", st)
	}
	if _, err := pool.Exec(context.Background(), "INSERT INTO agentmap.schema_migrations (version, name) VALUES (999, 'future')"); err != nil {
		t.Fatal(err)
	}
	requeue(t, db, maps, fixtures[1], 3)
	err = s.Drain(context.Background())
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("drain into a newer schema: %v", err)
	}
	st, _ := db.Outbox(Name).Stats()
	if st.Len != 1 || st.State.Failures != 1 || !strings.Contains(st.State.LastError, "newer than this agentmap") {
		t.Fatalf("after the refused drain: %+v", st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "schema") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if out := logs.String(); !strings.Contains(out, "the team database refused the push") || strings.Contains(out, "cannot reach") {
		t.Fatalf("the log of a refused push:\n%s", out)
	}
}

// TestRefusedTellsARefusalFromAnOutage: what the daemon logs depends on
// whether the database answered.
func TestRefusedTellsARefusalFromAnOutage(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("store device: %w", &ServerError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"}), true},
		{&ServerError{Code: "42501", Message: "permission denied for table sessions"}, true},
		{&ServerError{Code: "28P01", Message: "password authentication failed"}, true},
		{tooNew(9, 3), true},
		{fmt.Errorf("x: %w", ErrSchemaDamaged), true},
		{&ServerError{Code: "57P01", Message: "terminating connection due to administrator command"}, false},
		{&ServerError{Code: "08006", Message: "connection failure"}, false},
		{&ServerError{Code: "53300", Message: "too many connections"}, false},
		// Conflicts: tried again, they pass.
		{fmt.Errorf("push: commit: %w", &ServerError{Code: "40001", Message: "could not serialize access"}), false},
		{&ServerError{Code: "40P01", Message: "deadlock detected"}, false},
		{&ServerError{Code: "55P03", Message: "canceling statement due to lock timeout"}, false},
		{fmt.Errorf("migrate: %w", ErrNotOwner), true},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{context.DeadlineExceeded, false},
	} {
		if got := Refused(c.err); got != c.want {
			t.Errorf("Refused(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestDamagedSchemaIsFoundAndResendRepairsIt: a table dropped and made
// again by hand leaves the sessions without their files; migrate says so
// while it is missing, and a resend writes every session's rows again,
// though the content hash the database holds is the one sent.
func TestDamagedSchemaIsFoundAndResendRepairsIt(t *testing.T) {
	_, pool, db, _, s := drainedFixtures(t)
	ctx := context.Background()
	var wantFiles, wantEvents int64
	for _, f := range fixtures {
		d := fixture(t, f)
		wantFiles += int64(len(d.Map.Files))
		wantEvents += int64(len(d.Map.Events))
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.files"); n != wantFiles || n == 0 {
		t.Fatalf("%d files rows, want %d", n, wantFiles)
	}
	var received time.Time
	if err := pool.QueryRow(ctx, "SELECT max(received_at) FROM agentmap.sessions").Scan(&received); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "DROP TABLE agentmap.files"); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); !errors.Is(err, ErrSchemaDamaged) || !strings.Contains(err.Error(), "agentmap.files") {
		t.Fatalf("migrate of the damaged schema: %v", err)
	}
	raw, err := migrationFiles.ReadFile("migrations/001_tables.sql")
	if err != nil {
		t.Fatal(err)
	}
	create := regexp.MustCompile(`(?s)CREATE TABLE agentmap\.files \(.*?\);`).Find(raw)
	if create == nil {
		t.Fatal("001_tables.sql creates no agentmap.files")
	}
	if _, err := pool.Exec(ctx, string(create)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "DELETE FROM agentmap.events WHERE seq % 2 = 0"); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate after the table is back: %v", err)
	}
	sent, _ := db.Outbox(Name).Stats()
	if _, err := db.Outbox(Name).Resend(time.Now()); err != nil { // what `agentmap sink resend` does
		t.Fatal(err)
	}
	if err := s.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.files"); n != wantFiles {
		t.Fatalf("%d files rows after the resend, want %d", n, wantFiles)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.events"); n != wantEvents {
		t.Fatalf("%d events after the resend, want %d", n, wantEvents)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions"); n != int64(len(fixtures)) {
		t.Fatalf("%d sessions after the resend", n)
	}
	var again time.Time
	if err := pool.QueryRow(ctx, "SELECT max(received_at) FROM agentmap.sessions").Scan(&again); err != nil {
		t.Fatal(err)
	}
	st, _ := db.Outbox(Name).Stats()
	if !again.Equal(received) || st.Sent != sent.Sent || st.Sent != len(fixtures) || st.Len != 0 {
		t.Fatalf("a resend of the same content counts as new: received %s → %s, sent %d → %d, queue %d",
			received, again, sent.Sent, st.Sent, st.Len)
	}
}

// TestOneSessionIDIsOneSession: a machine whose state was rebuilt (a new
// device id) sends its history again; the team views and Read count each
// session once, in the version flushed last, and a device filter still
// gives that device's own rows.
func TestOneSessionIDIsOneSession(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	old := Device{ID: "7b6f3a4e-aaaa-4222-8333-444455556666", Label: "laptop"}
	rebuilt := Device{ID: "7b6f3a4e-bbbb-4222-8333-444455556666", Label: "laptop"}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var all []Upload
	for _, f := range fixtures {
		all = append(all, Upload{Doc: fixture(t, f), FlushedAt: t0})
	}
	if _, err := Push(ctx, pool, old, all); err != nil {
		t.Fatal(err)
	}
	// The rebuilt machine sends a later version of two of them (the
	// sessions went on: more tokens): that is what counts, not the old
	// device's earlier version.
	var again []Upload
	for _, u := range all[:2] {
		again = append(again, Upload{Doc: withMoreTokens(t, u.Doc, 1000), FlushedAt: t0.Add(time.Hour)})
	}
	if _, err := Push(ctx, pool, rebuilt, again); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions"); n != 5 {
		t.Fatalf("%d rows, want one per device and session", n)
	}
	tokensRead := int64(0)
	read := func(f Filter) map[string]string {
		t.Helper()
		out := map[string]string{}
		tokensRead = 0
		if err := ReadPool(ctx, pool, f, func(s Stored) error {
			d, err := mapfile.Parse(s.Map)
			if err != nil {
				return err
			}
			id := d.Map.Session.ID
			if _, dup := out[id]; dup {
				t.Errorf("session %s read twice", id)
			}
			out[id] = s.DeviceID
			tokensRead += d.Map.Totals.Tokens
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var wantTokens, oldTokens int64
	var wantCost float64
	for i, u := range all {
		oldTokens += u.Doc.Map.Totals.Tokens
		if i < len(again) {
			u = again[i]
		}
		wantTokens += u.Doc.Map.Totals.Tokens
		wantCost += u.Doc.Map.Totals.CostUSD
	}
	got := read(Filter{})
	if len(got) != 3 || got[all[0].Doc.Map.Session.ID] != rebuilt.ID || got[all[2].Doc.Map.Session.ID] != old.ID || tokensRead != wantTokens {
		t.Fatalf("read: %v, %d tokens; want the rebuilt device's two sessions and the old one's third, %d tokens", got, tokensRead, wantTokens)
	}
	if got := read(Filter{Devices: []string{old.ID}}); len(got) != 3 || got[all[0].Doc.Map.Session.ID] != old.ID || tokensRead != oldTokens {
		t.Fatalf("read of the old device: %v, %d tokens, want its own %d", got, tokensRead, oldTokens)
	}
	if got := read(Filter{Devices: []string{"laptop"}}); len(got) != 3 {
		t.Fatalf("read of the label both share: %v", got)
	}
	var sessions, tokens int64
	var cost float64
	if err := pool.QueryRow(ctx, "SELECT sum(sessions), sum(tokens), sum(cost_usd) FROM agentmap.cost_per_repo_week").Scan(&sessions, &tokens, &cost); err != nil {
		t.Fatal(err)
	}
	shell, mcps := 0, 0
	for _, u := range all {
		for i, e := range u.Doc.Map.Events {
			if shellCommand(&u.Doc.Map.Events[i]) {
				shell++
			}
			if e.Kind == "mcp" {
				mcps++
			}
		}
	}
	if sessions != 3 || tokens != wantTokens || cost-wantCost > 1e-9 || wantCost-cost > 1e-9 {
		t.Fatalf("cost_per_repo_week: %d sessions, %d tokens, $%v; want 3, %d, $%v", sessions, tokens, cost, wantTokens, wantCost)
	}
	if n := count(t, pool, "SELECT sum(sessions) FROM agentmap.outcomes_per_agent"); n != 3 {
		t.Fatalf("outcomes_per_agent counts %d sessions", n)
	}
	if n := count(t, pool, "SELECT coalesce(sum(calls), 0) FROM agentmap.failing_verbs"); n != int64(shell) {
		t.Fatalf("failing_verbs counts %d calls, want %d", n, shell)
	}
	if n := count(t, pool, "SELECT coalesce(sum(calls), 0) FROM agentmap.mcp_failure_rates"); n != int64(mcps) {
		t.Fatalf("mcp_failure_rates counts %d calls, want %d", n, mcps)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.latest_sessions"); n != 3 {
		t.Fatalf("latest_sessions: %d rows", n)
	}
}

// requeue rewrites a stored map (so its content differs) and records its
// flush, which queues it.
func requeue(t *testing.T, db *state.DB, maps, f string, gen uint64) {
	t.Helper()
	raw, _ := os.ReadFile(filepath.Join(maps, f+".json"))
	os.WriteFile(filepath.Join(maps, f+".json"), append(raw, '\n'), 0o600)
	if err := db.PutSessions(&state.Session{Key: "x/" + f, Agent: "x", NativeID: f, Gen: gen,
		Flush: &state.Flush{Path: f + ".json", SHA256: fmt.Sprint("changed", gen), Gen: gen, AtMs: time.Now().UnixMilli()}}); err != nil {
		t.Fatal(err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
