package postgres

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
	"github.com/agentmap/agentmap/state"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var fixtures = []string{"claude_session", "codex_session", "cursor_transcript"}

func fixture(t *testing.T, name string) *mapfile.Doc { return mustFixture(t, name) }

func mustFixture(t testing.TB, name string) *mapfile.Doc {
	t.Helper()
	d, err := mapfile.ReadFile(filepath.Join("..", "..", "testdata", "builder", name+".map.json"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newDB(t *testing.T) (*pgtest.Server, *pgxpool.Pool) {
	t.Helper()
	srv := pgtest.Shared(t)
	url := srv.NewDatabase(t)
	ctx := context.Background()
	pool, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return srv, pool
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestMigrateConcurrentlyAppliesEachMigrationOnce(t *testing.T) {
	srv := pgtest.Shared(t)
	url := srv.NewDatabase(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := Open(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			defer pool.Close()
			errs <- Migrate(ctx, pool)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	pool, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if n := count(t, pool, "SELECT count(*) FROM agentmap.schema_migrations"); n != int64(SchemaVersion()) {
		t.Fatalf("%d migrations recorded, want %d", n, SchemaVersion())
	}
	// A newer schema is refused, not written over.
	if _, err := pool.Exec(ctx, "INSERT INTO agentmap.schema_migrations (version, name) VALUES (999, 'future')"); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err == nil {
		t.Fatal("a newer schema was accepted")
	}
}

func TestPushIsIdempotentAndKeepsTheLatestVersion(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	dev := Device{ID: "7b6f3a4e-1111-4222-8333-444455556666", Label: "laptop", Producer: "agentmap test"}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var ups []Upload
	var events, files int
	var tokens int64
	for _, f := range fixtures {
		d := fixture(t, f)
		ups = append(ups, Upload{Doc: d, FlushedAt: t0})
		events += len(d.Map.Events)
		files += len(d.Map.Files)
		tokens += d.Map.Totals.Tokens
	}
	res, err := Push(ctx, pool, dev, ups)
	if err != nil || res.Stored != 3 || res.Unchanged != 0 {
		t.Fatalf("first push: %+v %v", res, err)
	}
	// The same batch again (a send whose acknowledgement was lost).
	res, err = Push(ctx, pool, dev, ups)
	if err != nil || res.Stored != 0 || res.Unchanged != 3 || res.Rewritten != 3 {
		t.Fatalf("duplicate push: %+v %v", res, err)
	}
	check := func(wantEvents, wantFiles int) {
		t.Helper()
		if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions"); n != 3 {
			t.Fatalf("%d sessions", n)
		}
		if n := count(t, pool, "SELECT count(*) FROM agentmap.events"); n != int64(wantEvents) {
			t.Fatalf("%d events, want %d", n, wantEvents)
		}
		if n := count(t, pool, "SELECT count(*) FROM agentmap.files"); n != int64(wantFiles) {
			t.Fatalf("%d files, want %d", n, wantFiles)
		}
	}
	check(events, files)
	if n := count(t, pool, "SELECT sum(tokens) FROM agentmap.sessions"); n != tokens {
		t.Fatalf("tokens %d, want %d", n, tokens)
	}
	// A new version (here: the paths in dirs_only) replaces the row, its
	// events and its files; the older version sent late changes nothing.
	newer, err := mapfile.Rerender(ups[0].Doc, redact.ModeDirsOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err = Push(ctx, pool, dev, []Upload{{Doc: newer, FlushedAt: t0.Add(time.Minute)}})
	if err != nil || res.Stored != 1 {
		t.Fatalf("new version: %+v %v", res, err)
	}
	res, err = Push(ctx, pool, dev, []Upload{ups[0]})
	if err != nil || res.Stored != 0 || res.Unchanged != 1 || res.Rewritten != 0 {
		t.Fatalf("late old version: %+v %v", res, err)
	}
	check(events, files)
	var hash, mode string
	if err := pool.QueryRow(ctx, "SELECT content_hash, path_mode FROM agentmap.sessions WHERE session_id = $1",
		newer.Map.Session.ID).Scan(&hash, &mode); err != nil {
		t.Fatal(err)
	}
	if hash != newer.Map.ContentHash || mode != "dirs_only" {
		t.Fatalf("row holds %s %s, want the new version %s", hash, mode, newer.Map.ContentHash)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.files f JOIN agentmap.sessions s ON s.id = f.session WHERE s.session_id = $1 AND f.path LIKE '%•%'",
		newer.Map.Session.ID); n != int64(len(newer.Map.Files)) {
		t.Fatalf("files of the new version: %d of %d", n, len(newer.Map.Files))
	}
	// The same session from another device is another row.
	other := Device{ID: "7b6f3a4e-2222-4222-8333-444455556666", Label: "desktop"}
	if res, err = Push(ctx, pool, other, ups[:1]); err != nil || res.Stored != 1 {
		t.Fatalf("other device: %+v %v", res, err)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions"); n != 4 {
		t.Fatalf("%d sessions after a second device", n)
	}
}

// TestPushStoresASessionTwiceInABatchOnce: a batch holding one session id
// twice (a caller's duplicate, or a session queued under two keys) stores
// it once, as the last of them, instead of failing whole on its events
// written twice (23505).
func TestPushStoresASessionTwiceInABatchOnce(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	dev := Device{ID: "7b6f3a4e-9191-4222-8333-444455556666"}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	u := Upload{Doc: fixture(t, "claude_session"), FlushedAt: t0}
	other := Upload{Doc: fixture(t, "codex_session"), FlushedAt: t0}
	res, err := Push(ctx, pool, dev, []Upload{u, other, u})
	if err != nil || res.Stored != 2 || res.Unchanged != 1 {
		t.Fatalf("a batch with a session twice: %+v %v", res, err)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.events e JOIN agentmap.sessions s ON s.id = e.session WHERE s.session_id = $1",
		u.Doc.Map.Session.ID); n != int64(len(u.Doc.Map.Events)) {
		t.Fatalf("%d events of the session, want %d", n, len(u.Doc.Map.Events))
	}
	// The last of them is what is stored, whatever the order of versions.
	later := Upload{Doc: withMoreTokens(t, u.Doc, 500), FlushedAt: t0.Add(time.Minute)}
	if _, err := Push(ctx, pool, dev, []Upload{u, later}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT tokens FROM agentmap.sessions WHERE session_id = $1", u.Doc.Map.Session.ID); n != later.Doc.Map.Totals.Tokens {
		t.Fatalf("the session holds %d tokens, want the last upload's %d", n, later.Doc.Map.Totals.Tokens)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions"); n != 2 {
		t.Fatalf("%d sessions", n)
	}
}

func TestViewsAnswer(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	var ups []Upload
	for _, f := range fixtures {
		ups = append(ups, Upload{Doc: fixture(t, f), FlushedAt: time.Now()})
	}
	if _, err := Push(ctx, pool, Device{ID: "7b6f3a4e-3333-4222-8333-444455556666"}, ups); err != nil {
		t.Fatal(err)
	}
	var cost float64
	if err := pool.QueryRow(ctx, "SELECT sum(cost_usd) FROM agentmap.cost_per_repo_week").Scan(&cost); err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for _, u := range ups {
		want += u.Doc.Map.Totals.CostUSD
	}
	if diff := cost - want; diff > 1e-9 || diff < -1e-9 {
		t.Fatalf("cost per repo per week sums to %v, want %v", cost, want)
	}
	// Shell commands as the report counts them: test commands too.
	shell := 0
	for _, u := range ups {
		for i := range u.Doc.Map.Events {
			if shellCommand(&u.Doc.Map.Events[i]) {
				shell++
			}
		}
	}
	if n := count(t, pool, "SELECT coalesce(sum(calls), 0) FROM agentmap.failing_verbs"); n != int64(shell) {
		t.Fatalf("failing_verbs counts %d calls, want %d", n, shell)
	}
	if n := count(t, pool, "SELECT sum(sessions) FROM agentmap.outcomes_per_agent"); n != 3 {
		t.Fatalf("outcomes_per_agent counts %d sessions", n)
	}
	count(t, pool, "SELECT count(*) FROM agentmap.mcp_failure_rates")
}

func TestReadFilters(t *testing.T) {
	srv, pool := newDB(t)
	_ = srv
	ctx := context.Background()
	// Alice sends the three sessions, bob two of them, later: bob's rows
	// are the latest of those two, and one session id is one session.
	devs := []Device{{ID: "7b6f3a4e-4444-4222-8333-444455556666", Label: "alice"}, {ID: "7b6f3a4e-5555-4222-8333-444455556666", Label: "bob"}}
	t0 := time.Now()
	for i, dev := range devs {
		var ups []Upload
		for _, f := range fixtures[i:] {
			ups = append(ups, Upload{Doc: fixture(t, f), FlushedAt: t0.Add(time.Duration(i) * time.Minute)})
		}
		if _, err := Push(ctx, pool, dev, ups); err != nil {
			t.Fatal(err)
		}
	}
	read := func(f Filter) []string {
		t.Helper()
		var out []string
		if err := ReadPool(ctx, pool, f, func(s Stored) error {
			d, err := mapfile.Parse(s.Map)
			if err != nil {
				return err
			}
			out = append(out, s.DeviceLabel+":"+d.Map.Session.AgentTool)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		f    Filter
		want int
	}{
		{Filter{}, 3},
		{Filter{Devices: []string{"alice"}}, 3},
		{Filter{Devices: []string{devs[1].ID}}, 2},
		{Filter{Devices: []string{"alice", "bob"}}, 3},
		{Filter{Repos: []string{"api"}}, 1},
		{Filter{Agents: []string{"codex"}}, 1},
		{Filter{Agents: []string{"cursor"}, Devices: []string{"bob"}}, 1},
		{Filter{Since: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}, 0},
		// ActiveSince keeps the sessions whose last event is at or after
		// it: Claude's runs until 09:02:45 on 2025-10-09, Codex's until
		// 22:43:50 on 2025-10-20, Cursor's until 12:33:40 on 2025-11-01.
		{Filter{ActiveSince: time.Date(2025, 10, 9, 9, 2, 45, 0, time.UTC)}, 3},
		{Filter{ActiveSince: time.Date(2025, 10, 9, 9, 2, 45, 1e6, time.UTC)}, 2},
		{Filter{ActiveSince: time.Date(2025, 10, 20, 22, 43, 50, 0, time.UTC), Until: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)}, 1},
		{Filter{ActiveSince: time.Date(2025, 11, 1, 12, 33, 41, 0, time.UTC)}, 0},
	} {
		if got := read(c.f); len(got) != c.want {
			t.Errorf("%+v: %v, want %d", c.f, got, c.want)
		}
	}
	// The map read back is the map sent.
	var back []byte
	ReadPool(ctx, pool, Filter{Repos: []string{"api"}}, func(s Stored) error { back = s.Map; return nil })
	d, err := mapfile.Parse(back)
	if err != nil {
		t.Fatal(err)
	}
	if orig := fixture(t, "claude_session"); string(d.Canonical) != string(orig.Canonical) {
		t.Fatal("the map read back differs from the map sent")
	}
}

// TestRestrictedRolePushes: a role with only the privileges the README grants
// pushes into a database an owner migrated.
func TestRestrictedRolePushes(t *testing.T) {
	srv, pool := newDB(t)
	ctx := context.Background()
	db := pgtest.Database(pool.Config().ConnString())
	role := "sink_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	grants, err := os.ReadFile(filepath.Join("..", "..", "docs", "team-database-grants.sql"))
	if err != nil {
		t.Fatal(err)
	}
	sql := "CREATE ROLE " + role + " LOGIN PASSWORD 'pw-of-the-test';\n" + replaceRole(string(grants), role)
	if out, err := srv.Psql(db, sql); err != nil {
		t.Fatalf("grants: %v: %s", err, out)
	}
	rp, err := Open(ctx, srv.URL(role, "pw-of-the-test", db))
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	if err := Migrate(ctx, rp); err != nil {
		t.Fatalf("a migrated schema needs no DDL: %v", err)
	}
	d := fixture(t, "claude_session")
	dev := Device{ID: "7b6f3a4e-6666-4222-8333-444455556666"}
	if _, err := Push(ctx, rp, dev, []Upload{{Doc: d, FlushedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	newer, _ := mapfile.Rerender(d, redact.ModeDirsOnly, nil)
	if res, err := Push(ctx, rp, dev, []Upload{{Doc: newer, FlushedAt: time.Now().Add(time.Second)}}); err != nil || res.Stored != 1 {
		t.Fatalf("new version as the restricted role: %+v %v", res, err)
	}
	if n, err := Retract(ctx, rp, dev.ID, []string{d.Map.Session.ID}); err != nil || n != 1 {
		t.Fatalf("retraction as the restricted role: %d %v", n, err)
	}
	if _, err := rp.Exec(ctx, "DROP TABLE agentmap.files"); err == nil {
		t.Fatal("the restricted role can drop tables")
	}
	// A role granted before retractions existed still pushes; a
	// retraction fails with what to grant. It is another role: the device
	// the first one sent is not its to write.
	op, err := Open(ctx, roleGrantedBeforeRetractions(t, srv, db))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if _, err := Push(ctx, op, dev, []Upload{{Doc: d, FlushedAt: time.Now().Add(2 * time.Second)}}); !Refused(err) || !strings.Contains(err.Error(), "belong to another role") {
		t.Fatalf("push as another role into the first one's device: %v", err)
	}
	own := Device{ID: "7b6f3a4e-6667-4222-8333-444455556666"}
	if _, err := Push(ctx, op, own, []Upload{{Doc: d, FlushedAt: time.Now().Add(2 * time.Second)}}); err != nil {
		t.Fatalf("push as a role granted before: %v", err)
	}
	if _, err := Retract(ctx, op, own.ID, []string{d.Map.Session.ID}); !errors.Is(err, ErrRetractRefused) || !strings.Contains(err.Error(), "grant DELETE ON agentmap.sessions") {
		t.Fatalf("retraction without DELETE on the sessions: %v", err)
	}
}

// replaceRole makes the grants file's roles role (the sink's) and
// role+"_r" (the reporting role's), which it creates without login.
func replaceRole(sql, role string) string {
	return "CREATE ROLE " + role + "_r;\n" + strings.NewReplacer("agentmap_sink", role, "agentmap_reader", role+"_r").Replace(sql)
}

// A retraction that does not know the id a map was stored under (sent by
// an older build) removes the row of the id the builder gives a session of
// its agent and native id, and that device's alone.
func TestRetractWithoutTheStoredID(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	dev := Device{ID: "7b6f3a4e-7777-4222-8333-444455556666"}
	other := Device{ID: "7b6f3a4e-8888-4222-8333-444455556666"}
	d := fixture(t, "claude_session")
	for _, dv := range []Device{dev, other} {
		if _, err := Push(ctx, pool, dv, []Upload{{Doc: d, FlushedAt: time.Now()}}); err != nil {
			t.Fatal(err)
		}
	}
	id := d.Map.Session.ID
	native := id[strings.LastIndex(id, ":")+1:]
	if got := storedID(state.Queued{Key: "claude/" + native, Retract: true, Native: native}); got != id {
		t.Fatalf("the id of a Claude session %q: %q, the builder gives %q", native, got, id)
	}
	if n, err := Retract(ctx, pool, dev.ID, []string{storedID(state.Queued{Key: "claude/" + native, Native: native})}); err != nil || n != 1 {
		t.Fatalf("%d rows removed, %v", n, err)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions WHERE session_id = $1", id); n != 1 {
		t.Fatalf("%d rows of the session left, want the other device's", n)
	}
}

// roleGrantedBeforeRetractions makes a role with the grants of before
// retractions (no DELETE on agentmap.sessions) and returns its URL.
func roleGrantedBeforeRetractions(t *testing.T, srv *pgtest.Server, db string) string {
	t.Helper()
	grants, err := os.ReadFile(filepath.Join("..", "..", "docs", "team-database-grants.sql"))
	if err != nil {
		t.Fatal(err)
	}
	before := strings.Replace(string(grants), "GRANT DELETE ON agentmap.sessions TO agentmap_sink;", "", 1)
	if before == string(grants) {
		t.Fatal("the grants no longer give DELETE on agentmap.sessions in one line")
	}
	role := "old_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	if out, err := srv.Psql(db, "CREATE ROLE "+role+" LOGIN PASSWORD 'pw-of-the-test';\n"+replaceRole(before, role)); err != nil {
		t.Fatalf("grants: %v: %s", err, out)
	}
	return srv.URL(role, "pw-of-the-test", db)
}

// TestReadNamesUnknownDevices: a device filter naming a device the team
// database has none of (a label mistyped) is an error naming it and the
// labels there are, not a read that chooses no session; a device id
// matches as a label does.
func TestReadNamesUnknownDevices(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	for _, dev := range []Device{{ID: "7b6f3a4e-d1d1-4222-8333-444455556666", Label: "alice-laptop"},
		{ID: "7b6f3a4e-d2d2-4222-8333-444455556666", Label: "bob-desktop"}, {ID: "7b6f3a4e-d3d3-4222-8333-444455556666"}} {
		if _, err := Push(ctx, pool, dev, []Upload{{Doc: fixture(t, "claude_session"), FlushedAt: time.Now()}}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(devices ...string) (int, error) {
		n := 0
		err := ReadPool(ctx, pool, Filter{Devices: devices}, func(Stored) error { n++; return nil })
		return n, err
	}
	n, err := read("alice-laptpo")
	var ue *UnknownDevicesError
	if !errors.As(err, &ue) || n != 0 || !slices.Equal(ue.Unknown, []string{"alice-laptpo"}) ||
		err.Error() != `no device "alice-laptpo" in the team database (its devices: alice-laptop, bob-desktop; a device id matches too)` {
		t.Fatalf("read of a device there is none of: %d maps, %v", n, err)
	}
	if _, err := read("bob-desktop", "carol", "alice-laptop", "dave"); !errors.As(err, &ue) || !slices.Equal(ue.Unknown, []string{"carol", "dave"}) ||
		!strings.HasPrefix(err.Error(), `no devices "carol", "dave" in the team database`) {
		t.Fatalf("read of two devices there are none of among two there are: %v", err)
	}
	if n, err := read("bob-desktop", "7b6f3a4e-d3d3-4222-8333-444455556666"); err != nil || n != 1 {
		t.Fatalf("read of a label and an id: %d %v", n, err)
	}
}
