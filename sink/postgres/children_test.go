package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/export/mapfile"
)

// childLane is the lane a spawned Codex agent has in its parent's map.
const childLane = "sa-0123456789ab"

// family is a parent session whose map holds a spawned agent's lane, that
// agent's own map (role subagent, parentSessionId the parent's id), and an
// orphan: a subagent whose parent has no map (its log was gone).
type family struct {
	parent, child, orphan *mapfile.Doc
}

// newFamily makes a family from the Codex golden map: the parent is the
// map with its exec and MCP events moved to the child's lane; the child's
// own map holds those events in its main lane and tokens and cost of its
// own; the orphan is a child of a parent no device sent.
func newFamily(t *testing.T) family {
	t.Helper()
	base := fixture(t, "codex_session")
	parentID := base.Map.Session.ID
	parent := reshaped(t, base, func(tree map[string]any) {
		for _, e := range tree["events"].([]any) {
			if ev := e.(map[string]any); ev["kind"] == "exec" || ev["kind"] == "mcp" {
				ev["agent"] = childLane
			}
		}
		// its agents list the lane, as a parent's map does
		lane := map[string]any{}
		for k, v := range tree["agents"].([]any)[0].(map[string]any) {
			lane[k] = v
		}
		lane["id"] = childLane
		tree["agents"] = append(tree["agents"].([]any), lane)
		tree["contentHash"] = "parent-with-a-lane"
	})
	child := func(id, parentOf string, tokens int64) *mapfile.Doc {
		return reshaped(t, base, func(tree map[string]any) {
			s := tree["session"].(map[string]any)
			s["id"], s["role"], s["parentSessionId"] = id, "subagent", parentOf
			var own []any
			for _, e := range tree["events"].([]any) {
				if ev := e.(map[string]any); ev["kind"] == "exec" || ev["kind"] == "mcp" {
					own = append(own, ev)
				}
			}
			tree["events"] = own
			totals := tree["totals"].(map[string]any)
			totals["tokens"], totals["costUsd"] = tokens, 0.0125
			tree["contentHash"] = "child-" + id
		})
	}
	f := family{
		parent: parent,
		child:  child("local:codex:019a2b3c-0000-7000-8000-0123456789ab", parentID, 4000),
		orphan: child("local:codex:019a2b3c-0000-7000-8000-0000000000ff", "local:codex:019a2b3c-gone", 5000),
	}
	if f.child.Map.Session.Role != "subagent" || f.child.Map.Session.ParentSessionID != parentID || len(f.child.Map.Events) != 3 {
		t.Fatalf("the child's map is not a subagent of %s: %+v", parentID, f.child.Map.Session)
	}
	return f
}

// reshaped is d with change applied to its JSON tree.
func reshaped(t *testing.T, d *mapfile.Doc, change func(tree map[string]any)) *mapfile.Doc {
	t.Helper()
	var tree map[string]any
	dec := json.NewDecoder(bytes.NewReader(d.Canonical))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		t.Fatal(err)
	}
	change(tree)
	raw, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mapfile.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// push sends the family, the child's map from another device than its
// parent's (a subagent's map and its parent's need not come from the same
// machine to count once).
func (f family) push(t *testing.T, pool *pgxpool.Pool, at time.Time) {
	t.Helper()
	ctx := context.Background()
	one := Device{ID: "7b6f3a4e-1111-4222-8333-444455556666", Label: "laptop"}
	two := Device{ID: "7b6f3a4e-2222-4222-8333-444455556666", Label: "desktop"}
	if _, err := Push(ctx, pool, one, []Upload{{Doc: f.parent, FlushedAt: at}, {Doc: f.orphan, FlushedAt: at}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, pool, two, []Upload{{Doc: f.child, FlushedAt: at}}); err != nil {
		t.Fatal(err)
	}
}

// viewCounts is what the four views count.
type viewCounts struct {
	sessions, tokens, shell, mcps, outcomes int64
	cost                                    float64
}

func countViews(t *testing.T, pool *pgxpool.Pool) viewCounts {
	t.Helper()
	var c viewCounts
	if err := pool.QueryRow(context.Background(), `SELECT
		(SELECT coalesce(sum(sessions), 0) FROM agentmap.cost_per_repo_week),
		(SELECT coalesce(sum(tokens), 0) FROM agentmap.cost_per_repo_week),
		(SELECT coalesce(sum(cost_usd), 0) FROM agentmap.cost_per_repo_week),
		(SELECT coalesce(sum(calls), 0) FROM agentmap.failing_verbs),
		(SELECT coalesce(sum(calls), 0) FROM agentmap.mcp_failure_rates),
		(SELECT coalesce(sum(sessions), 0) FROM agentmap.outcomes_per_agent)`).
		Scan(&c.sessions, &c.tokens, &c.cost, &c.shell, &c.mcps, &c.outcomes); err != nil {
		t.Fatal(err)
	}
	return c
}

// counted is what the views must count of maps, each once.
func counted(maps ...*mapfile.Doc) viewCounts {
	var c viewCounts
	for _, d := range maps {
		c.sessions++
		c.outcomes++
		c.tokens += d.Map.Totals.Tokens
		c.cost += d.Map.Totals.CostUSD
		for i, e := range d.Map.Events {
			if shellCommand(&d.Map.Events[i]) {
				c.shell++
			}
			if e.Kind == "mcp" {
				c.mcps++
			}
		}
	}
	return c
}

func sameCounts(got, want viewCounts) bool {
	d := got.cost - want.cost
	got.cost, want.cost = 0, 0
	return got == want && d < 1e-9 && d > -1e-9
}

// TestSubagentCountsOnce: a spawned agent's own map beside its parent's,
// which holds its work as a lane, counts once in every view (the parent's
// map holds it); a subagent whose parent has no map counts, its map being
// the only record; and once its parent's row is gone, the child counts. Read
// returns every session, the child too: `report` and `usage --from` leave it
// out themselves, as they do on the local store.
func TestSubagentCountsOnce(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	f := newFamily(t)
	f.push(t, pool, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))

	if got, want := countViews(t, pool), counted(f.parent, f.orphan); !sameCounts(got, want) {
		t.Fatalf("the views count %+v, want the parent and the orphan once each, not the child: %+v", got, want)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.counted_sessions"); n != 2 {
		t.Fatalf("counted_sessions: %d rows, want the parent and the orphan", n)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.counted_sessions WHERE session_id = $1", f.orphan.Map.Session.ID); n != 1 {
		t.Fatal("the orphan is not counted")
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.latest_sessions"); n != 3 {
		t.Fatalf("latest_sessions: %d rows, want every session", n)
	}
	read := 0
	if err := ReadPool(ctx, pool, Filter{}, func(Stored) error { read++; return nil }); err != nil || read != 3 {
		t.Fatalf("Read: %d maps, %v; want every session, the child's too", read, err)
	}

	// A subagent of the same parent that the parent's map has no lane of
	// (a Cursor sub-composer is a session of its own) counts.
	stray := reshaped(t, f.child, func(tree map[string]any) {
		tree["session"].(map[string]any)["id"] = "local:codex:019a2b3c-0000-7000-8000-00000000beef"
		tree["contentHash"] = "child-without-a-lane"
	})
	if _, err := Push(ctx, pool, Device{ID: "7b6f3a4e-2222-4222-8333-444455556666", Label: "desktop"},
		[]Upload{{Doc: stray, FlushedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.counted_sessions WHERE session_id = $1", stray.Map.Session.ID); n != 1 {
		t.Fatal("a subagent its parent's map has no lane of is not counted")
	}

	// The parent's device retracts it: the child's map is then the only
	// record of its work.
	if _, err := Retract(ctx, pool, "7b6f3a4e-1111-4222-8333-444455556666", []string{f.parent.Map.Session.ID}); err != nil {
		t.Fatal(err)
	}
	if got, want := countViews(t, pool), counted(f.child, f.orphan, stray); !sameCounts(got, want) {
		t.Fatalf("without the parent, the views count %+v, want the child and the orphan: %+v", got, want)
	}
}
