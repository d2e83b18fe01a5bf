package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// passwordEnv carries the team database's password in these tests, as
// sink.postgres.password_env does on a team's machines.
const passwordEnv = "AGENTMAP_TEST_PG_PASSWORD"

// machine is one simulated developer machine: a data dir, a config with
// the team database, and the path mode its maps leave in.
type machine struct {
	name, dataDir, config string
	sinkMode              redact.Mode
	hashKey               []byte
}

// newMachine writes a config for one machine; extra lines go into
// [sink.postgres] (after url, device, every, batch) or, before a table,
// at the top.
func newMachine(t *testing.T, srv *pgtest.Server, db, name, top, sink string) *machine {
	t.Helper()
	dir := t.TempDir()
	m := &machine{name: name, dataDir: filepath.Join(dir, "data"), config: filepath.Join(dir, "config.toml")}
	doc := fmt.Sprintf("version = 1\ndata_dir = %q\n%s\n[sink.postgres]\nurl = %q\npassword_env = %q\ndevice = %q\nevery = \"1s\"\n%s\n",
		m.dataDir, top, fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", pgtest.Admin, srv.Port, db),
		passwordEnv, name, sink)
	if err := os.WriteFile(m.config, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(m.config)
	if err != nil {
		t.Fatalf("config of %s: %v", name, err)
	}
	o := sinkOptions(c)
	if o.Unusable != nil {
		t.Fatal(o.Unusable)
	}
	m.sinkMode, m.hashKey = o.PathMode, o.HashKey
	return m
}

// deviceID reads the machine's device id from `sink status --json`.
func (m *machine) deviceID(t *testing.T) daemon.SinkStatus {
	t.Helper()
	code, out, errb := run(t, "sink", "status", "--json", "--data-dir", m.dataDir)
	if code != exitOK {
		t.Fatalf("sink status: %d %s", code, errb)
	}
	var st daemon.SinkStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.DeviceID == "" {
		t.Fatalf("sink status of %s: %q %v", m.name, out, err)
	}
	return st
}

// sessionFigures are what one session contributes to the totals.
type sessionFigures struct {
	hash          string
	tokens        int64
	cost          float64
	events, files int
	calls, errors int
}

// localSessions reads a machine's map store as its maps leave it: each map
// rendered in the sink's path mode, keyed by device and session id.
func (m *machine) localSessions(t *testing.T, device string) map[string]sessionFigures {
	t.Helper()
	out := map[string]sessionFigures{}
	err := filepath.WalkDir(daemon.MapsDir(m.dataDir), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json.gz") {
			return err
		}
		doc, err := mapfile.ReadFile(p)
		if err != nil {
			return err
		}
		if doc, err = postgres.Render(doc, m.sinkMode, m.hashKey); err != nil {
			return err
		}
		mp := doc.Map
		out[device+" "+mp.Session.ID] = sessionFigures{hash: mp.ContentHash, tokens: mp.Totals.Tokens, cost: mp.Totals.CostUSD,
			events: len(mp.Events), files: len(mp.Files), calls: mp.Totals.Calls, errors: mp.Totals.Errors}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// teamSessions reads the same figures from the team database.
func teamSessions(t *testing.T, pool *pgxpool.Pool) map[string]sessionFigures {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT s.device_id::text, s.session_id, s.content_hash, s.tokens, s.cost_usd,
		(SELECT count(*) FROM agentmap.events e WHERE e.session = s.id),
		(SELECT count(*) FROM agentmap.files f WHERE f.session = s.id), s.calls, s.errors
		FROM agentmap.sessions s`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]sessionFigures{}
	for rows.Next() {
		var dev, id string
		var f sessionFigures
		if err := rows.Scan(&dev, &id, &f.hash, &f.tokens, &f.cost, &f.events, &f.files, &f.calls, &f.errors); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[dev+" "+id]; dup {
			t.Fatalf("session %s of device %s is in the team database twice", id, dev)
		}
		out[dev+" "+id] = f
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkTeamEqualsLocal asserts that the team database holds exactly the
// machines' maps, each once, in its current version, and that its totals
// are the sums of theirs.
func checkTeamEqualsLocal(t *testing.T, pool *pgxpool.Pool, ms []*machine) {
	t.Helper()
	want := map[string]sessionFigures{}
	for _, m := range ms {
		for k, v := range m.localSessions(t, m.deviceID(t).DeviceID) {
			want[k] = v
		}
	}
	got := teamSessions(t, pool)
	var missing, extra, stale []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case g != w && !(g.hash == w.hash && math.Abs(g.cost-w.cost) < 1e-9):
			stale = append(stale, fmt.Sprintf("%s: %+v, want %+v", k, g, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra)+len(stale) > 0 {
		t.Fatalf("team database differs from the local stores: %d missing %v, %d extra %v, %d stale %v",
			len(missing), head(missing), len(extra), head(extra), len(stale), head(stale))
	}
	var sum, dbSum sessionFigures
	for _, w := range want {
		sum.tokens, sum.cost, sum.events, sum.files = sum.tokens+w.tokens, sum.cost+w.cost, sum.events+w.events, sum.files+w.files
	}
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*), coalesce(sum(tokens), 0), coalesce(sum(cost_usd), 0),
		(SELECT count(*) FROM agentmap.events), (SELECT count(*) FROM agentmap.files) FROM agentmap.sessions`).
		Scan(&n, &dbSum.tokens, &dbSum.cost, &dbSum.events, &dbSum.files); err != nil {
		t.Fatal(err)
	}
	if int(n) != len(want) || dbSum.tokens != sum.tokens || dbSum.events != sum.events || dbSum.files != sum.files ||
		math.Abs(dbSum.cost-sum.cost) > 1e-6 {
		t.Fatalf("team totals %d sessions %+v, local %d sessions %+v", n, dbSum, len(want), sum)
	}
	// Each machine's sink status counts the sessions the database holds
	// of it, each once, not the versions it sent.
	for _, m := range ms {
		st := m.deviceID(t)
		var held int64
		if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM agentmap.sessions WHERE device_id = $1", st.DeviceID).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if st.Sent != uint64(held) {
			t.Fatalf("sink status of %s: %d sessions sent, the database holds %d of it", m.name, st.Sent, held)
		}
	}
	t.Logf("team database equals the local stores: %d sessions, %d tokens, %d events, %d files, $%.4f",
		n, sum.tokens, sum.events, sum.files, sum.cost)
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func openTeam(t *testing.T, srv *pgtest.Server, db string) *pgxpool.Pool {
	t.Helper()
	pool, err := postgres.Open(context.Background(), srv.AdminURL(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
