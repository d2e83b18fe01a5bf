package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// withUnpricedModels is the Codex golden map with gpt-5's two requests
// served by models no price table knows, costing nothing as the builder
// writes them: one named "house-model-7", one that names no model
// ("unknown" where costs are shown).
func withUnpricedModels(t *testing.T) *mapfile.Doc {
	t.Helper()
	d := reshaped(t, fixture(t, "codex_session"), func(tree map[string]any) {
		names := []string{"house-model-7", ""}
		var dropped float64
		for _, e := range tree["events"].([]any) {
			ev := e.(map[string]any)
			if ev["kind"] != "llm" || ev["model"] != "gpt-5" || len(names) == 0 {
				continue
			}
			c, _ := ev["cost"].(json.Number).Float64()
			dropped += c
			ev["model"], ev["cost"], names = names[0], 0, names[1:]
		}
		totals := tree["totals"].(map[string]any)
		c, _ := totals["costUsd"].(json.Number).Float64()
		totals["costUsd"] = c - dropped
		tree["contentHash"] = "with-unpriced-models"
	})
	if got := d.Map.UnpricedModels(""); !slices.Equal(got, []string{"house-model-7", ""}) {
		t.Fatalf("the map's unpriced models: %q", got)
	}
	return d
}

// unpricedOf is the unpriced_models of a session's row ("NULL" when NULL).
func unpricedOf(t *testing.T, pool *pgxpool.Pool, sessionID string) string {
	t.Helper()
	var v *[]string
	if err := pool.QueryRow(context.Background(), "SELECT unpriced_models FROM agentmap.sessions WHERE session_id = $1", sessionID).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return "NULL"
	}
	b, _ := json.Marshal(*v)
	return string(b)
}

// TestUnpricedSessionsAreMarked: a session whose tokens include a model
// with no price is stored with those models named, and the cost view
// counts it as unpriced beside its cost, instead of passing its $0 part
// for a session that cost nothing; a new version with every model priced
// is not.
func TestUnpricedSessionsAreMarked(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	dev := Device{ID: "7b6f3a4e-0ace-4222-8333-444455556666"}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	unpriced := withUnpricedModels(t)
	priced, noTokens := fixture(t, "claude_session"), fixture(t, "cursor_transcript")
	if _, err := Push(ctx, pool, dev, []Upload{{Doc: unpriced, FlushedAt: t0}, {Doc: priced, FlushedAt: t0}, {Doc: noTokens, FlushedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		unpriced.Map.Session.ID: `["house-model-7","unknown"]`,
		priced.Map.Session.ID:   `[]`,
		noTokens.Map.Session.ID: `[]`,
	} {
		if got := unpricedOf(t, pool, id); got != want {
			t.Errorf("unpriced_models of %s: %s, want %s", id, got, want)
		}
	}
	var sessions, unpricedSessions int64
	var cost float64
	if err := pool.QueryRow(ctx, "SELECT sum(sessions), sum(unpriced_sessions), sum(cost_usd) FROM agentmap.cost_per_repo_week").
		Scan(&sessions, &unpricedSessions, &cost); err != nil {
		t.Fatal(err)
	}
	if want := unpriced.Map.Totals.CostUSD + priced.Map.Totals.CostUSD + noTokens.Map.Totals.CostUSD; sessions != 3 || unpricedSessions != 1 || cost-want > 1e-9 || want-cost > 1e-9 {
		t.Fatalf("cost_per_repo_week: %d sessions, %d unpriced, $%v; want 3, 1, $%v", sessions, unpricedSessions, cost, want)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.counted_sessions WHERE cardinality(unpriced_models) > 0"); n != 1 {
		t.Fatalf("counted_sessions: %d unpriced", n)
	}
	// The session again, every request priced (the config priced the model
	// meanwhile): no longer unpriced.
	if _, err := Push(ctx, pool, dev, []Upload{{Doc: withMoreTokens(t, fixture(t, "codex_session"), 1), FlushedAt: t0.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if got := unpricedOf(t, pool, unpriced.Map.Session.ID); got != "[]" {
		t.Fatalf("unpriced_models after a priced version: %s", got)
	}
	if n := count(t, pool, "SELECT sum(unpriced_sessions) FROM agentmap.cost_per_repo_week"); n != 0 {
		t.Fatalf("%d unpriced sessions after the priced version", n)
	}
}

// TestUpgradeMarksTheUnpricedSessionsHeld: a schema 4 database holding an
// unpriced session (written by a build that did not know the column)
// names its models once migrated, and the cost view counts it.
func TestUpgradeMarksTheUnpricedSessionsHeld(t *testing.T) {
	ctx := context.Background()
	srvPool, err := Open(ctx, pgtest.Shared(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srvPool.Close()
	migrateTo(t, srvPool, 4)
	dev := Device{ID: "7b6f3a4e-0ace-4222-8333-444455556667"}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	unpriced, priced := withUnpricedModels(t), fixture(t, "claude_session")
	if _, err := Push(ctx, srvPool, dev, []Upload{{Doc: unpriced, FlushedAt: t0}, {Doc: priced, FlushedAt: t0}}); err != nil {
		t.Fatalf("push into schema 4: %v", err)
	}
	if err := Migrate(ctx, srvPool); err != nil {
		t.Fatal(err)
	}
	if got := unpricedOf(t, srvPool, unpriced.Map.Session.ID); got != `["house-model-7","unknown"]` {
		t.Errorf("unpriced_models of the unpriced session after the migration: %s", got)
	}
	if got := unpricedOf(t, srvPool, priced.Map.Session.ID); got != `[]` {
		t.Errorf("unpriced_models of the priced session after the migration: %s", got)
	}
	if n := count(t, srvPool, "SELECT sum(unpriced_sessions) FROM agentmap.cost_per_repo_week"); n != 1 {
		t.Fatalf("cost_per_repo_week counts %d unpriced sessions after the migration, want 1", n)
	}
}
