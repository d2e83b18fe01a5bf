package report

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	bev "github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/export/mapfile"
)

// TestUsageTotalsEqualTheMaps: on the corpus, every grouping's totals row
// is the sum of the maps' totals, and its rows add up to it.
func TestUsageTotalsEqualTheMaps(t *testing.T) {
	bin, err := agentmapBinary()
	if err != nil {
		t.Fatal(err)
	}
	maps, errs := Collect(t.Context(), Dir(corpusMaps(t, bin)), Filter{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var tokens, output int64
	var cost float64
	for _, m := range maps {
		tokens += m.Totals.Tokens
		output += m.Totals.OutputTokens
		cost += m.Totals.CostUSD
	}
	if tokens == 0 {
		t.Fatal("the corpus maps count no tokens")
	}
	for _, p := range Periods() {
		tab := Usage(maps, p, time.UTC)
		if tab.Totals.Total != tokens || tab.Totals.Output != output || math.Abs(tab.Totals.CostUSD-cost) > 1e-5 {
			t.Errorf("%s: totals %d tokens (%d output), $%f; the maps %d (%d), $%f", p, tab.Totals.Total, tab.Totals.Output, tab.Totals.CostUSD, tokens, output, cost)
		}
		var sum UsageRow
		for _, r := range tab.Rows {
			sum.Total += r.Total
			sum.Input += r.Input
			sum.CacheRead += r.CacheRead
			if r.Total != r.Input+r.Output+r.CacheCreate+r.CacheRead+r.Beyond {
				t.Errorf("%s %s: columns do not add up to the total", p, r.Key)
			}
			var bd int64
			for _, b := range r.Breakdown {
				bd += b.Total
			}
			if bd != r.Total {
				t.Errorf("%s %s: breakdown adds up to %d of %d", p, r.Key, bd, r.Total)
			}
		}
		if sum.Total != tokens || sum.Input != tab.Totals.Input || sum.CacheRead != tab.Totals.CacheRead {
			t.Errorf("%s: rows add up to %d tokens, the maps %d", p, sum.Total, tokens)
		}
	}
	var out bytes.Buffer
	WriteUsageTable(&out, Usage(maps, Daily, time.UTC), false)
	if !strings.Contains(out.String(), "unpriced") {
		t.Errorf("the corpus has models without a price, the table shows none as unpriced:\n%s", out.String())
	}
}

func llm(t int64, model string, in, cw, cr, out int64, cost float64) mapfile.Event {
	return mapfile.Event{T: t, Kind: "llm", Model: model, In: in, CW: cw, CR: cr, Out: out, Cost: cost}
}

// TestUsageGrouping: requests are dated by their own time, a model
// without a price is unpriced, and what a map cut at its event cap counts
// beyond its events lands in the total.
func TestUsageGrouping(t *testing.T) {
	a := &Map{Session: mapfile.Session{ID: "local:claude-code:a", AgentTool: "claude-code", StartedAt: "2026-03-01T23:30:00Z"},
		Totals: mapfile.Totals{Tokens: 1000 + 2000, OutputTokens: 100 + 200, CostUSD: 0.5},
		Events: []mapfile.Event{llm(0, "claude-sonnet-4-5", 100, 300, 500, 100, 0.5), llm(int64(time.Hour/time.Millisecond), "mystery-model", 1000, 0, 800, 200, 0)}}
	b := &Map{Session: mapfile.Session{ID: "local:codex:b", AgentTool: "codex", StartedAt: "2026-03-02T10:00:00Z", Truncated: true},
		Totals: mapfile.Totals{Tokens: 5000, OutputTokens: 700, CostUSD: 1.25},
		Events: []mapfile.Event{llm(0, "gpt-5", 1000, 0, 1000, 500, 1)}}
	tab := Usage([]*Map{a, b}, Daily, time.UTC)
	if len(tab.Rows) != 2 || tab.Rows[0].Key != "2026-03-01" || tab.Rows[1].Key != "2026-03-02" {
		t.Fatalf("rows %+v", tab.Rows)
	}
	day2 := tab.Rows[1]
	if day2.Total != 2000+5000 || day2.Sessions != 2 || strings.Join(day2.Unpriced, ",") != "mystery-model" {
		t.Errorf("second day %+v", day2)
	}
	if day2.Beyond != 5000-2500-200 || day2.Output != 200+700 {
		t.Errorf("beyond the cap: %d beyond, %d output", day2.Beyond, day2.Output)
	}
	if tab.Totals.Total != 8000 || math.Abs(tab.Totals.CostUSD-1.75) > 1e-9 || tab.Truncated != 1 {
		t.Errorf("totals %+v", tab.Totals)
	}
	var out bytes.Buffer
	WriteUsageTable(&out, tab, true)
	text := out.String()
	for _, want := range []string{"2026-03-02", "$1.25 +unpriced", "  - mystery-model", "unpriced", "Total", "8,000", "event cap"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	// A model's line sits in the MODELS column: the dates' column is as
	// wide as a date, with or without the breakdown.
	if !strings.HasPrefix(text, "DATE        MODELS") {
		t.Errorf("the breakdown widened the date column:\n%s", text)
	}
	out.Reset()
	if err := WriteUsageJSON(&out, Usage([]*Map{a, b}, ByModel, time.UTC), false); err != nil {
		t.Fatal(err)
	}
	var doc UsageTable
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != 3 || doc.Rows[0].Key != "gpt-5" {
		t.Errorf("by model: %+v", doc.Rows)
	}
}

// TestUsageWindowCountsRequestsByTheirTime: a window keeps, for every day
// inside it and in any zone, the row of the table without one, as the
// rows are grouped by the time the window selects by (each request's
// own): a session that straddles a bound counts only its requests inside,
// and what a map cut at its event cap counts beyond its events counts
// where its last request does. Every grouping counts the same requests,
// so each one's totals over a day are that day's row.
func TestUsageWindowCountsRequestsByTheirTime(t *testing.T) {
	hour := int64(time.Hour / time.Millisecond)
	long := &Map{Session: mapfile.Session{ID: "local:claude-code:long", AgentTool: "claude-code", StartedAt: "2026-02-27T20:00:00Z"},
		Totals: mapfile.Totals{Tokens: 4 * 1500, OutputTokens: 4 * 100, CostUSD: 4 * 0.25},
		Events: []mapfile.Event{llm(0, "claude-opus-4-8", 100, 300, 1000, 100, 0.25), llm(26*hour, "claude-opus-4-8", 100, 300, 1000, 100, 0.25),
			llm(50*hour, "claude-opus-4-8", 100, 300, 1000, 100, 0.25), llm(74*hour, "claude-opus-4-8", 100, 300, 1000, 100, 0.25)}}
	maps := []*Map{
		{Session: mapfile.Session{ID: "local:claude-code:a", AgentTool: "claude-code", StartedAt: "2026-03-01T23:30:00Z"},
			Totals: mapfile.Totals{Tokens: 1000 + 2000, OutputTokens: 100 + 200, CostUSD: 0.5},
			Events: []mapfile.Event{llm(0, "claude-sonnet-4-5", 100, 300, 500, 100, 0.5), llm(hour, "mystery-model", 1000, 0, 800, 200, 0)}},
		{Session: mapfile.Session{ID: "local:codex:b", AgentTool: "codex", StartedAt: "2026-03-02T10:00:00Z", Truncated: true},
			Totals: mapfile.Totals{Tokens: 5000, OutputTokens: 700, CostUSD: 1.25},
			Events: []mapfile.Event{llm(0, "gpt-5", 1000, 0, 1000, 500, 1)}},
		long,
	}
	selected := func(f Filter) []*Map {
		var out []*Map
		for _, m := range maps {
			if f.Keep(m) {
				out = append(out, m)
			}
		}
		return out
	}
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("JST", 9*3600), time.FixedZone("PDT", -7*3600), time.FixedZone("IST", 5*3600+1800)} {
		full := Usage(maps, Daily, loc)
		if len(full.Rows) < 4 {
			t.Fatalf("%s: %d days", loc, len(full.Rows))
		}
		for _, r := range full.Rows {
			since, _ := time.ParseInLocation(time.DateOnly, r.Key, loc)
			f, w := UsageFilter(Filter{Since: since, Until: since.AddDate(0, 0, 1)})
			for _, p := range Periods() {
				tab := UsageWithin(selected(f), p, loc, w)
				tot := tab.Totals
				tot.Key = r.Key
				if !reflect.DeepEqual(tot, r) {
					t.Errorf("%s: %s over %s: totals %+v, want the day's row %+v", loc, p, r.Key, tot, r)
				}
				if p == Daily && (len(tab.Rows) != 1 || !reflect.DeepEqual(tab.Rows[0], r)) {
					t.Errorf("%s: daily over %s: %+v, want %+v", loc, r.Key, tab.Rows, r)
				}
			}
		}
	}
	// A session started before the window shows its part inside, with its
	// own start; the sessions cut at the event cap are those whose
	// remainder the window counts.
	day := func(d string) (Filter, Window) {
		since, _ := time.Parse(time.DateOnly, d)
		return UsageFilter(Filter{Since: since, Until: since.AddDate(0, 0, 1)})
	}
	f, w := day("2026-02-28")
	tab := UsageWithin(selected(f), BySess, time.UTC, w)
	if len(tab.Rows) != 1 || tab.Rows[0].Key != "long" || tab.Rows[0].Start != "2026-02-27T20:00:00Z" || tab.Rows[0].Total != 1500 {
		t.Errorf("sessions of 2026-02-28: %+v", tab.Rows)
	}
	for d, cut := range map[string]int{"2026-03-01": 0, "2026-03-02": 1} {
		f, w := day(d)
		if n := UsageWithin(selected(f), Daily, time.UTC, w).Truncated; n != cut {
			t.Errorf("%s: %d sessions cut at the event cap, want %d", d, n, cut)
		}
	}
	// A window with an open end, and one before every request.
	since, _ := time.Parse(time.RFC3339, "2026-03-02T00:00:00Z")
	f, w = UsageFilter(Filter{Since: since})
	if got := UsageWithin(selected(f), ByModel, time.UTC, w).Totals.Total; got != 2000+5000+1500 {
		t.Errorf("since 2026-03-02: %d tokens", got)
	}
	f, w = UsageFilter(Filter{Until: since.AddDate(0, 0, -5)})
	if got := UsageWithin(selected(f), Daily, time.UTC, w); len(got.Rows) != 0 || got.Totals.Total != 0 {
		t.Errorf("until 2026-02-25: %+v", got)
	}
}

// builtMap is a session of the given requests as the builder writes it
// (with the [prices] overrides over), read back as the report reads it.
func builtMap(t *testing.T, id, agent string, over map[string]builder.Price, reqs ...bev.Event) *Map {
	t.Helper()
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC).UnixMilli()
	evs := []bev.Event{{Kind: bev.KindSession, T: start, Session: &bev.Session{NativeID: id, AgentTool: agent}}}
	for i, r := range reqs {
		r.Kind, r.T = bev.KindLLM, start+int64(i+1)*1000
		evs = append(evs, r)
	}
	b, err := builder.Build(evs, builder.Options{Prices: over})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := b.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUsageCountsRequestsThatRecordedNoUsage: a request whose log gave no
// token usage (Cursor's) is counted, in its row and session, and reads as
// "usage not recorded", never as nothing or as $0; a session of nothing
// else has its row, so the rows add up to the totals, sessions included.
func TestUsageCountsRequestsThatRecordedNoUsage(t *testing.T) {
	used := bev.Event{Model: "claude-sonnet-4-5", LLM: &bev.LLM{In: 1000, CW: 2000, CR: 30000, Out: 500, LatencyMs: -1}}
	none := func(model string) bev.Event { return bev.Event{Model: model, LLM: &bev.LLM{LatencyMs: -1}} }
	maps := []*Map{
		builtMap(t, "cur-1", "cursor", nil, none(""), none(""), none("")),
		builtMap(t, "cur-2", "cursor", nil, none("")),
		builtMap(t, "mixed", "claude-code", nil, used, none("claude-sonnet-4-5")),
	}
	for _, p := range Periods() {
		tab := Usage(maps, p, time.UTC)
		if tab.Totals.NoUsage != 5 || tab.NotRecorded == nil || tab.NotRecorded.Requests != 5 || tab.NotRecorded.Sessions != 3 || tab.NotRecorded.Entirely != 2 ||
			!slices.Equal(tab.NotRecorded.Agents, []string{"claude", "cursor"}) {
			t.Errorf("%s: totals count %d requests without usage, note %+v", p, tab.Totals.NoUsage, tab.NotRecorded)
		}
		var none, sessions int
		var total int64
		for _, r := range tab.Rows {
			none += r.NoUsage
			sessions += r.Sessions
			total += r.Total
		}
		if none != tab.Totals.NoUsage || total != tab.Totals.Total {
			t.Errorf("%s: rows add up to %d requests without usage and %d tokens, the totals %d and %d", p, none, total, tab.Totals.NoUsage, tab.Totals.Total)
		}
		if p == BySess && (len(tab.Rows) != 3 || sessions != tab.Totals.Sessions) {
			t.Errorf("session rows: %d rows of %d sessions, the totals %d", len(tab.Rows), sessions, tab.Totals.Sessions)
		}
	}

	cursor := Usage(maps[:2], Daily, time.UTC)
	if len(cursor.Rows) != 1 || cursor.Rows[0].NoUsage != 4 || cursor.Rows[0].Sessions != 2 || !slices.Equal(cursor.Rows[0].Models, []string{"unknown"}) {
		t.Fatalf("Cursor's day: %+v", cursor.Rows)
	}
	var out bytes.Buffer
	WriteUsageTable(&out, cursor, false)
	text := out.String()
	if strings.Contains(text, "no model requests") || strings.Contains(text, "$0.00") || strings.Count(text, "usage not recorded") != 2 ||
		!strings.Contains(text, "4 model requests in 2 sessions (cursor) recorded no token usage") {
		t.Errorf("Cursor's day:\n%s", text)
	}
	out.Reset()
	if err := WriteUsageJSON(&out, cursor, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows   []map[string]any `json:"rows"`
		Totals map[string]any   `json:"totals"`
		Note   *NotRecorded     `json:"usageNotRecorded"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != 1 || doc.Rows[0]["requestsWithoutUsage"] != 4.0 || doc.Totals["requestsWithoutUsage"] != 4.0 ||
		doc.Totals["sessions"] != 2.0 || doc.Note == nil || doc.Note.Sessions != 2 {
		t.Errorf("JSON of Cursor's day: %s", out.String())
	}

	// A row with tokens keeps its figures; the note says what they leave out.
	out.Reset()
	WriteUsageTable(&out, Usage(maps[2:], BySess, time.UTC), false)
	if text := out.String(); strings.Contains(text, "usage not recorded") || !strings.Contains(text, "1 model request in 1 session (claude) recorded no token usage:") {
		t.Errorf("a session with one request without usage:\n%s", text)
	}
	// All three: the sessions that recorded none at all (the report's
	// count) are said apart from those with some requests without usage.
	out.Reset()
	WriteUsageTable(&out, Usage(maps, BySess, time.UTC), false)
	if text := out.String(); !strings.Contains(text, "5 model requests in 3 sessions (claude, cursor) recorded no token usage (2 of these sessions recorded none at all)") {
		t.Errorf("sessions with and without usage:\n%s", text)
	}
}

// TestUsageShowsFastMode: requests served in fast mode, billed at a
// multiple of the list price, are the rows of "MODEL (fast)", apart from
// the model's standard requests, whichever cache-write lifetime they paid.
func TestUsageShowsFastMode(t *testing.T) {
	req := func(fast bool, cw1h int64) bev.Event {
		return bev.Event{Model: "claude-opus-4-8", LLM: &bev.LLM{In: 1000, CW: 20000, CW1h: cw1h, CR: 300000, Out: 4000, Fast: fast, LatencyMs: -1}}
	}
	m := builtMap(t, "fast", "claude-code", nil, req(true, 0), req(true, 20000), req(false, 0), req(false, 20000))
	for i := range m.Events {
		e := &m.Events[i]
		if e.Kind != "llm" {
			continue
		}
		if x, fast := ServedFast(e); fast != (i < 2+firstLLM(m)) || fast && x != 2 {
			t.Errorf("request %d: fast %v (x%v)", i, fast, x)
		}
	}
	tab := Usage([]*Map{m}, ByModel, time.UTC)
	got := map[string]UsageRow{}
	for _, r := range tab.Rows {
		got[r.Key] = r
	}
	fast, std := got["claude-opus-4-8"+FastSuffix], got["claude-opus-4-8"]
	if len(tab.Rows) != 2 || fast.Total != std.Total || math.Abs(fast.CostUSD-2*std.CostUSD) > 1e-5 {
		t.Fatalf("by model: %+v", tab.Rows)
	}
	daily := Usage([]*Map{m}, Daily, time.UTC)
	if !slices.Equal(daily.Rows[0].Models, []string{"claude-opus-4-8", "claude-opus-4-8 (fast)"}) {
		t.Errorf("the day's models: %q", daily.Rows[0].Models)
	}
	// A price of the config that is not the list price is no fast mode
	// (one that is the fast multiple of it cannot be told from fast mode).
	over := map[string]builder.Price{"claude-opus-4-8": {Input: 7.5, CacheWrite: 9.375, CacheWrite1h: 15, CacheRead: 0.75, Output: 37.5}}
	dear := builtMap(t, "dear", "claude-code", over, req(false, 0), req(false, 20000))
	if rows := Usage([]*Map{dear}, ByModel, time.UTC).Rows; len(rows) != 1 || rows[0].Key != "claude-opus-4-8" {
		t.Errorf("requests priced at 1.5 times the list price by the config: %+v", rows)
	}

	// The report names them so too: the session's models (its header, the
	// model filter) and its tokens and cost by model (the By model table),
	// whose rows are the usage table's.
	allFast := builtMap(t, "allfast", "claude-code", nil, req(true, 0))
	for m, want := range map[*Map][]string{m: {"claude-opus-4-8", "claude-opus-4-8 (fast)"}, allFast: {"claude-opus-4-8 (fast)"}, dear: {"claude-opus-4-8"}} {
		st := newStrtab()
		var names []string
		for _, id := range sessionRow(st, m, len(m.Events))[3].([]int) {
			names = append(names, st.list[id])
		}
		if !slices.Equal(names, want) {
			t.Errorf("report: models of session %s %q, want %q", m.Session.NativeID(), names, want)
		}
	}
	st := newStrtab()
	a := sessionAgg(st, m)
	byModel := map[string]float64{}
	for i := 0; i < len(a.Models); i += 5 {
		byModel[st.list[a.Models[i]]] = a.ModelCost[i/5]
	}
	if len(byModel) != 2 || math.Abs(byModel["claude-opus-4-8 (fast)"]-fast.CostUSD) > 1e-6 || math.Abs(byModel["claude-opus-4-8"]-std.CostUSD) > 1e-6 {
		t.Errorf("report: cost by model %v, want the usage rows' %v and %v", byModel, fast.CostUSD, std.CostUSD)
	}
}

func firstLLM(m *Map) int {
	for i := range m.Events {
		if m.Events[i].Kind == "llm" {
			return i
		}
	}
	return -1
}

// TestUsageNoteOfPricesSetSince: a model unpriced in its maps that the
// prices in effect now price is not said to have no price: the note says
// the config prices it and how to write the maps again.
func TestUsageNoteOfPricesSetSince(t *testing.T) {
	m := builtMap(t, "zeta", "claude-code", nil, bev.Event{Model: "claude-zeta-1", LLM: &bev.LLM{In: 1000, Out: 100, LatencyMs: -1}},
		bev.Event{Model: "mystery-9", LLM: &bev.LLM{In: 1000, Out: 100, LatencyMs: -1}})
	tab := Usage([]*Map{m}, ByModel, time.UTC)
	var out bytes.Buffer
	WriteUsageTable(&out, tab, false)
	if text := out.String(); strings.Contains(text, "no price known") || !strings.Contains(text, "agentmap flush --all --rewrite") {
		t.Errorf("told nothing of the prices in effect, the note claims to know them:\n%s", text)
	}
	tab.NotePrices(func(model string) bool { return model == "claude-zeta-1" })
	out.Reset()
	WriteUsageTable(&out, tab, false)
	text := out.String()
	if !strings.Contains(text, "no price known for mystery-9: ") || strings.Contains(text, "no price known for claude-zeta-1") ||
		!strings.Contains(text, "claude-zeta-1 is priced in the config since the maps that leave it out were written: the service reprices them once it has read the config, and so does the next agentmap scan") {
		t.Errorf("claude-zeta-1 priced in the config since:\n%s", text)
	}
}

// A map with no start time (its log gave none) has its requests in a row
// of their own, "undated", after the dates: not in a row of year 1.
func TestUsageOfAMapWithNoStartTime(t *testing.T) {
	req := bev.Event{Model: "claude-sonnet-4-5", LLM: &bev.LLM{In: 1000, Out: 100, LatencyMs: -1}}
	dated := builtMap(t, "dated", "claude-code", nil, req)
	undated := builtMap(t, "undated", "claude-code", nil, req)
	undated.Session.StartedAt = ""
	for _, p := range []Period{Daily, Weekly, Monthly} {
		tab := Usage([]*Map{undated, dated}, p, time.UTC)
		if len(tab.Rows) != 2 || tab.Rows[1].Key != Undated || strings.HasPrefix(tab.Rows[0].Key, "0001") || tab.Rows[1].Total != 1100 {
			t.Errorf("%s: rows %+v", p, tab.Rows)
		}
	}
	for _, r := range Usage([]*Map{undated}, BySess, time.UTC).Rows {
		if r.Start != "" {
			t.Errorf("session row of a map with no start time: startedAt %q", r.Start)
		}
	}
	var out bytes.Buffer
	WriteUsageTable(&out, Usage([]*Map{undated}, Daily, time.UTC), false)
	if text := out.String(); strings.Contains(text, "0001-01-01") || !strings.Contains(text, "\nundated ") {
		t.Errorf("table of a map with no start time:\n%s", text)
	}
}

// A row some of whose requests recorded no usage shows the others' tokens
// and cost marked *, as show and list mark them, the digits of its columns
// still aligned; the note under the table says what the mark is.
func TestUsageRowsPartlyRecordedAreMarked(t *testing.T) {
	tab := UsageTable{Period: Daily,
		Rows: []UsageRow{
			{Key: "2026-06-01", Models: []string{"m"}, Input: 10, Output: 5, Total: 15, CostUSD: 0.5},
			{Key: "2026-06-02", Models: []string{"m"}, Input: 100, Output: 50, Total: 150, CostUSD: 2, NoUsage: 3},
			{Key: "2026-06-03", Models: []string{"unknown"}, NoUsage: 2},
		},
		Totals:      UsageRow{Key: "Total", Input: 110, Output: 55, Total: 165, CostUSD: 2.5, NoUsage: 5},
		NotRecorded: &NotRecorded{Requests: 5, Sessions: 2, Entirely: 1, Agents: []string{"cursor"}},
	}
	var out strings.Builder
	WriteUsageTable(&out, tab, false)
	lines := strings.Split(out.String(), "\n")
	var one, two string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "2026-06-01"):
			one = l
		case strings.HasPrefix(l, "2026-06-02"):
			two = l
		}
	}
	end := func(l, s string) int { return strings.Index(l, s) + len(s) }
	if !strings.HasSuffix(two, "$2.00*") || !strings.Contains(two, " 150* ") || strings.Contains(one, "*") ||
		end(one, " 15 ") != end(two, " 150*") || end(one, "$0.50") != end(two, "$2.00") {
		t.Errorf("rows:\n%q\n%q", one, two)
	}
	if !strings.Contains(out.String(), "(the rows they are in beside requests that did are marked *)") {
		t.Errorf("note:\n%s", out.String())
	}
}
