package postgres

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// repoWeek is a row's key in cost_per_repo_week: a repository name and an
// ISO week's Monday (UTC), as YYYY-MM-DD.
type repoWeek struct{ repo, week string }

// repoCounts is a row of cost_per_repo_week.
type repoCounts struct {
	sessions, tokens, durationMs, unpriced, shared int64
	cost                                           float64
}

func (c repoCounts) String() string {
	return fmt.Sprintf("%d sessions (%d unpriced, %d shared), %d tokens, $%.6f, %d ms", c.sessions, c.unpriced, c.shared, c.tokens, c.cost, c.durationMs)
}

func (c repoCounts) equal(o repoCounts) bool {
	d := c
	d.cost = o.cost
	return d == o && math.Abs(c.cost-o.cost) < 1e-9
}

// repositoryRows is what cost_per_repo_week must hold of maps, by the
// report's rule for its table by repository (report/assets/report.js,
// aggregate): a session counts whole in each name its repositories have,
// once however many of them have that name, and under "" when it has
// none; it is shared in a repository when it also counts in another.
func repositoryRows(t *testing.T, maps ...*mapfile.Doc) map[repoWeek]repoCounts {
	t.Helper()
	out := map[repoWeek]repoCounts{}
	for _, d := range maps {
		m := d.Map
		start, ok := m.Start()
		if !ok {
			t.Fatalf("the map %s has no start", m.Session.ID)
		}
		start = start.UTC()
		monday := time.Date(start.Year(), start.Month(), start.Day()-(int(start.Weekday())+6)%7, 0, 0, 0, 0, time.UTC)
		names := map[string]bool{}
		for _, r := range m.Repos {
			names[r.Name] = true
		}
		if len(names) == 0 {
			names[""] = true
		}
		for name := range names {
			k := repoWeek{name, monday.Format(time.DateOnly)}
			c := out[k]
			c.sessions++
			c.tokens += m.Totals.Tokens
			c.cost += m.Totals.CostUSD
			c.durationMs += m.Session.DurationMs
			if len(unpricedModels(m)) > 0 {
				c.unpriced++
			}
			if len(names) > 1 {
				c.shared++
			}
			out[k] = c
		}
	}
	return out
}

// costPerRepoWeek reads the view, by repository and week. Its
// shared_sessions column is read only from schema 8 on (withShared).
func costPerRepoWeek(t *testing.T, pool *pgxpool.Pool, withShared bool) map[repoWeek]repoCounts {
	t.Helper()
	shared := "0"
	if withShared {
		shared = "shared_sessions"
	}
	rows, err := pool.Query(context.Background(), "SELECT repo, week, sessions, tokens, cost_usd, duration_ms, unpriced_sessions, "+shared+
		" FROM agentmap.cost_per_repo_week")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[repoWeek]repoCounts{}
	for rows.Next() {
		var repo string
		var week time.Time
		var c repoCounts
		if err := rows.Scan(&repo, &week, &c.sessions, &c.tokens, &c.cost, &c.durationMs, &c.unpriced, &c.shared); err != nil {
			t.Fatal(err)
		}
		out[repoWeek{repo, week.Format(time.DateOnly)}] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRepositoryRows: the view holds exactly the rows the report's rule
// makes of maps.
func checkRepositoryRows(t *testing.T, got map[repoWeek]repoCounts, maps ...*mapfile.Doc) {
	t.Helper()
	want := repositoryRows(t, maps...)
	for k, w := range want {
		if g, ok := got[k]; !ok || !g.equal(w) {
			t.Errorf("cost_per_repo_week, %q in the week of %s: %v, the report counts %v", k.repo, k.week, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("cost_per_repo_week, %q in the week of %s: %v, not in the report", k.repo, k.week, g)
		}
	}
}

// withRepos is d under the session id id, started at start, in
// repositories named names (each a repository of its own, two of one
// name being two checkouts of one project).
func withRepos(t *testing.T, d *mapfile.Doc, id, start string, names ...string) *mapfile.Doc {
	t.Helper()
	return reshaped(t, d, func(tree map[string]any) {
		repos := []any{}
		for i, n := range names {
			repos = append(repos, map[string]any{"id": fmt.Sprintf("r%d", i), "name": n, "remote": "github.com/acme/" + n})
		}
		tree["repos"] = repos
		s := tree["session"].(map[string]any)
		s["id"], s["startedAt"] = id, start
		tree["contentHash"] = "repos-of-" + id
	})
}

// repositoryMaps are sessions of two weeks: in the first, one in two
// repositories (api and lib), one in none and one in lib alone; in the
// second, one in two checkouts both named site.
func repositoryMaps(t *testing.T) (two, none, lib, checkouts *mapfile.Doc) {
	t.Helper()
	claude, codex, cursor := fixture(t, "claude_session"), fixture(t, "codex_session"), fixture(t, "cursor_transcript")
	two = withRepos(t, claude, "local:claude:repos-two", "2025-10-09T08:53:20.000Z", "api", "lib")
	none = withRepos(t, codex, "local:codex:repos-none", "2025-10-08T10:00:00.000Z")
	lib = withRepos(t, claude, "local:claude:repos-lib", "2025-10-06T00:30:00.000Z", "lib")
	checkouts = withRepos(t, cursor, "local:cursor:repos-checkouts", "2025-11-01T12:26:40.000Z", "site", "site")
	return two, none, lib, checkouts
}

// TestCostPerRepoWeekCountsEachRepository: cost_per_repo_week counts a
// session in each repository it worked in (shared_sessions says which
// sessions of a row also count in another), a session with none under "",
// and a session whose two repositories share a name once in it: the rows
// the report's table by repository makes of the same maps.
func TestCostPerRepoWeekCountsEachRepository(t *testing.T) {
	_, pool := newDB(t)
	two, none, lib, checkouts := repositoryMaps(t)
	var ups []Upload
	for _, d := range []*mapfile.Doc{two, none, lib, checkouts} {
		ups = append(ups, Upload{Doc: d, FlushedAt: time.Now()})
	}
	if _, err := Push(context.Background(), pool, Device{ID: "7b6f3a4e-8888-4222-8333-000000000008"}, ups); err != nil {
		t.Fatal(err)
	}
	got := costPerRepoWeek(t, pool, true)
	week := "2025-10-06"
	for repo, want := range map[string][2]int64{"api": {1, 1}, "lib": {2, 1}, "": {1, 0}} {
		if c := got[repoWeek{repo, week}]; c.sessions != want[0] || c.shared != want[1] {
			t.Errorf("%q in the week of %s: %v, want %d sessions, %d shared", repo, week, c, want[0], want[1])
		}
	}
	if c := got[repoWeek{"site", "2025-10-27"}]; c.sessions != 1 || c.shared != 0 {
		t.Errorf("site, the session of two checkouts named site: %v, want 1 session, none shared", c)
	}
	checkRepositoryRows(t, got, two, none, lib, checkouts)
	// The week's totals count each session once (docs/team-database.md,
	// Views): three sessions, where the rows by repository count four.
	if n := count(t, pool, `SELECT sessions FROM (SELECT (date_trunc('week', started_at AT TIME ZONE 'UTC'))::date AS week, count(*) AS sessions
		FROM agentmap.counted_sessions GROUP BY 1) w WHERE week = '2025-10-06'`); n != 3 {
		t.Errorf("the week of %s has %d sessions, want 3", week, n)
	}
	if n := count(t, pool, "SELECT sum(sessions) FROM agentmap.cost_per_repo_week WHERE week = '2025-10-06'"); n != 4 {
		t.Errorf("the rows of the week of %s count %d sessions, want 4 (one in two repositories)", week, n)
	}
}

// TestUpgradeCountsSessionsInEachRepository: the machines write into
// schema 7 first (its cost_per_repo_week counts each session under its
// first repository alone, so lib misses the session that worked in api
// and lib), then the owner migrates to 8 and the view counts the rows
// already held in each of their repositories.
func TestUpgradeCountsSessionsInEachRepository(t *testing.T) {
	srv := pgtest.Shared(t)
	owner, sink, _ := documentedRoles(t, srv, 7)
	ctx := context.Background()
	if v, err := Prepare(ctx, sink); err != nil || v != 7 {
		t.Fatalf("this build as the machines' role on schema 7: %d %v", v, err)
	}
	two, none, lib, checkouts := repositoryMaps(t)
	var ups []Upload
	for _, d := range []*mapfile.Doc{two, none, lib, checkouts} {
		ups = append(ups, Upload{Doc: d, FlushedAt: time.Now()})
	}
	if _, err := Push(ctx, sink, Device{ID: "7b6f3a4e-8888-4222-8333-000000000009", Label: "laptop"}, ups); err != nil {
		t.Fatal(err)
	}
	before := costPerRepoWeek(t, owner, false)
	if c := before[repoWeek{"lib", "2025-10-06"}]; c.sessions != 1 {
		t.Fatalf("schema 7 counts %v in lib, want the session of lib alone: %v", c, before)
	}
	if err := Migrate(ctx, owner); err != nil {
		t.Fatalf("migrate schema 7 to 8 as the owner: %v", err)
	}
	checkRepositoryRows(t, costPerRepoWeek(t, owner, true), two, none, lib, checkouts)
}
