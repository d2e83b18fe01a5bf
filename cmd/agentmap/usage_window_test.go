package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/report"
	"github.com/agentmap/agentmap/sink/postgres"
)

// usageTable runs `agentmap usage --json` with args, and --breakdown but
// for usage model, whose rows are models already (it refuses it).
func usageTable(t *testing.T, args ...string) report.UsageTable {
	t.Helper()
	flags := []string{"usage", "--json", "--breakdown"}
	if slices.Contains(args, string(report.ByModel)) {
		flags = flags[:2]
	}
	code, out, errb := run(t, append(flags, args...)...)
	if code != exitOK {
		t.Fatalf("usage %v: exit %d\n%s", args, code, errb)
	}
	var tab report.UsageTable
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("usage %v: %v\n%s", args, err, out)
	}
	return tab
}

// TestUsageWindowKeepsTheRowsOfItsDays: on the corpus, in several zones,
// `usage --since D --until D` has for day D the row `usage` has, as
// ccusage's tables do: --since and --until select model requests by the
// time the rows are grouped by (each request's own), so a session that
// straddles midnight counts its part of the day in both. Every grouping
// over a window counts the same requests (its totals are the day's row,
// `usage model`'s rows are the row's breakdown), and a whole week or month
// is its row of `usage weekly` or `usage monthly`.
func TestUsageWindowKeepsTheRowsOfItsDays(t *testing.T) {
	data, _ := corpusStore(t, builder.Options{Producer: "agentmap test"})
	maps := filepath.Join(data, "maps")
	table := func(args ...string) report.UsageTable {
		return usageTable(t, append([]string{"--maps", maps}, args...)...)
	}
	zones := []*time.Location{time.UTC, time.FixedZone("JST", 9*3600), time.FixedZone("IST", 5*3600+1800)}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		zones = append(zones, ny) // weeks and months over a change of daylight saving time
	}
	old := time.Local
	defer func() { time.Local = old }()
	straddling := 0
	for z, loc := range zones {
		time.Local = loc
		daily := table("daily")
		if len(daily.Rows) < 10 {
			t.Fatalf("%s: only %d days in the corpus", loc, len(daily.Rows))
		}
		for _, r := range daily.Rows {
			day := []string{"--since", r.Key, "--until", r.Key}
			got := table(append([]string{"daily"}, day...)...)
			if len(got.Rows) != 1 || !reflect.DeepEqual(got.Rows[0], r) {
				t.Errorf("%s: usage --since %s --until %s:\n%s\nwant the row of usage:\n%s", loc, r.Key, r.Key, rowsOf(got.Rows), rowsOf([]report.UsageRow{r}))
				continue
			}
			if z >= 2 {
				continue // the other groupings in two zones are enough, and each run reads every map
			}
			since, _ := time.ParseInLocation(time.DateOnly, r.Key, loc)
			sess := table(append([]string{"session"}, day...)...)
			for _, s := range sess.Rows {
				if start, _ := time.Parse(time.RFC3339, s.Start); start.Before(since) {
					straddling++
				}
			}
			models := table(append([]string{"model"}, day...)...)
			for name, tab := range map[string]report.UsageTable{"session": sess, "model": models} {
				tot := tab.Totals
				tot.Key = r.Key
				want := r
				if name == "model" {
					want.Breakdown = nil // usage model takes no --breakdown: its rows are (below)
				}
				if !reflect.DeepEqual(tot, want) {
					t.Errorf("%s: usage %s of %s: totals\n%s\nwant the day's row\n%s", loc, name, r.Key, rowsOf([]report.UsageRow{tot}), rowsOf([]report.UsageRow{want}))
				}
			}
			var byModel []report.UsageRow
			for _, m := range models.Rows {
				m.Breakdown = nil
				byModel = append(byModel, m)
			}
			if !sameRows(byModel, r.Breakdown) {
				t.Errorf("%s: usage model of %s:\n%s\nwant the day's breakdown\n%s", loc, r.Key, rowsOf(byModel), rowsOf(r.Breakdown))
			}
		}
		for _, r := range table("weekly").Rows {
			monday, _ := time.ParseInLocation(time.DateOnly, r.Key, loc)
			got := table("weekly", "--since", r.Key, "--until", monday.AddDate(0, 0, 6).Format(time.DateOnly))
			if len(got.Rows) != 1 || !reflect.DeepEqual(got.Rows[0], r) {
				t.Errorf("%s: the week of %s:\n%s\nwant the row of usage weekly:\n%s", loc, r.Key, rowsOf(got.Rows), rowsOf([]report.UsageRow{r}))
			}
		}
		for _, r := range table("monthly").Rows {
			first, _ := time.ParseInLocation("2006-01", r.Key, loc)
			got := table("monthly", "--since", first.Format(time.DateOnly), "--until", first.AddDate(0, 1, -1).Format(time.DateOnly))
			if len(got.Rows) != 1 || !reflect.DeepEqual(got.Rows[0], r) {
				t.Errorf("%s: the month %s:\n%s\nwant the row of usage monthly:\n%s", loc, r.Key, rowsOf(got.Rows), rowsOf([]report.UsageRow{r}))
			}
		}
	}
	if straddling == 0 {
		t.Error("no day of the corpus has requests of a session started the day before: the test proves nothing")
	}
}

// sameRows compares rows by key, whatever their order (rows of equal
// totals may come in either).
func sameRows(a, b []report.UsageRow) bool {
	if len(a) != len(b) {
		return false
	}
	byKey := map[string]report.UsageRow{}
	for _, r := range b {
		byKey[r.Key] = r
	}
	for _, r := range a {
		if w, ok := byKey[r.Key]; !ok || !reflect.DeepEqual(r, w) {
			return false
		}
	}
	return true
}

func rowsOf(rows []report.UsageRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %s: %d sessions, %d tokens (%d in, %d out, %d cw, %d cr), $%f, models %v, unpriced %v\n",
			r.Key, r.Sessions, r.Total, r.Input, r.Output, r.CacheCreate, r.CacheRead, r.CostUSD, r.Models, r.Unpriced)
	}
	if len(rows) == 0 {
		return "  (no rows)\n"
	}
	return b.String()
}

// TestUsageWindowOnTheTeamDatabase: usage --from over a window is usage of
// the same maps on disk over it, a session started before --since
// included for its requests after: the database is asked for the sessions
// that went on past --since, not for those started after it.
func TestUsageWindowOnTheTeamDatabase(t *testing.T) {
	_, url, pool := teamDB(t)
	dir := t.TempDir()
	ups := builderMaps(t, dir, "claude_session", "codex_session", "cursor_transcript")
	if _, err := postgres.Push(context.Background(), pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-000000000003", Label: "carol"}, ups); err != nil {
		t.Fatal(err)
	}
	old := time.Local
	time.Local = time.UTC
	defer func() { time.Local = old }()
	// The Claude session runs from 08:53:20 to 09:02:45 and the Codex one
	// from 22:40:00 to 22:43:50 (UTC); the Cursor transcript's requests
	// recorded no tokens, a row of its own all the same (usage not
	// recorded), later than both.
	for _, w := range []struct {
		since, until string
		rows         int
	}{
		{"2025-10-09T09:00:00Z", "2025-10-09T09:05:00Z", 1},
		{"2025-10-09T09:00:00Z", "", 3},
		{"2025-10-20T22:42:00Z", "2025-10-20", 1},
		{"2025-10-09T09:03:00Z", "2025-10-10", 0},
	} {
		args := []string{"session", "--since", w.since}
		if w.until != "" {
			args = append(args, "--until", w.until)
		}
		local := usageTable(t, append([]string{"--maps", dir}, args...)...)
		team := usageTable(t, append([]string{"--from", url}, args...)...)
		if !reflect.DeepEqual(team, local) {
			t.Errorf("usage %v --from the team database:\n%s\nwant the maps on disk:\n%s", args, rowsOf(team.Rows), rowsOf(local.Rows))
		}
		if len(local.Rows) != w.rows {
			t.Errorf("usage %v: %d sessions, want %d:\n%s", args, len(local.Rows), w.rows, rowsOf(local.Rows))
		}
	}
}
