package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/export/mapfile"
)

// Period is how usage rows are grouped.
type Period string

// The periods of `agentmap usage`.
const (
	Daily   Period = "daily"
	Weekly  Period = "weekly" // weeks start on Monday (ISO 8601)
	Monthly Period = "monthly"
	BySess  Period = "session"
	ByModel Period = "model"
)

// Periods lists the valid periods.
func Periods() []Period { return []Period{Daily, Weekly, Monthly, BySess, ByModel} }

// UsageRow is one line of a usage table: tokens by kind and cost.
type UsageRow struct {
	// Key is the date (2006-01-02), week (its Monday), month (2006-01),
	// session id or model of the row; "Total" for the totals row.
	Key         string   `json:"key"`
	Agent       string   `json:"agent,omitempty"`     // session rows: AgentName of the map's agentTool
	Start       string   `json:"startedAt,omitempty"` // session rows
	Models      []string `json:"models"`
	Sessions    int      `json:"sessions"`
	Input       int64    `json:"inputTokens"`
	Output      int64    `json:"outputTokens"`
	CacheCreate int64    `json:"cacheCreationTokens"`
	CacheRead   int64    `json:"cacheReadTokens"`
	// Beyond are tokens of sessions cut at the event cap that their
	// totals count but no kept request splits by kind: in Total only.
	Beyond  int64   `json:"beyondEventCapTokens,omitempty"`
	Total   int64   `json:"totalTokens"`
	CostUSD float64 `json:"costUsd"`
	// NoUsage counts the row's model requests whose log recorded no token
	// usage (Cursor writes none; a Codex response no token_count measured):
	// they are the row's, and its sessions', but what they used is not
	// known, so no token column and no cost counts them, and a row of
	// nothing else does not read 0 tokens at $0.
	NoUsage int `json:"requestsWithoutUsage,omitempty"`
	// Unpriced are the row's models with tokens but no price: their cost
	// is not in CostUSD.
	Unpriced  []string   `json:"unpricedModels,omitempty"`
	Breakdown []UsageRow `json:"breakdown,omitempty"`

	sessions map[string]bool
	models   map[string]*UsageRow
	unpriced bool // a model breakdown's: some of its tokens had no price
}

// UsageTable is the answer of `agentmap usage`.
type UsageTable struct {
	Period Period     `json:"period"`
	Rows   []UsageRow `json:"rows"`
	Totals UsageRow   `json:"totals"`
	// Truncated counts the sessions cut at the event cap (see Beyond).
	Truncated int `json:"truncatedSessions,omitempty"`
	// NotRecorded sums up the requests that recorded no token usage
	// (UsageRow.NoUsage), for the note under the table.
	NotRecorded *NotRecorded `json:"usageNotRecorded,omitempty"`
	// Repriceable are the unpriced models that the prices in effect now
	// price (a [prices] entry added to the config after their maps were
	// written): see NotePrices.
	Repriceable []string `json:"pricedSinceWritten,omitempty"`
	noted       bool     // NotePrices was told the prices in effect
}

// NotRecorded counts the model requests of a table whose log recorded no
// token usage, the sessions that hold them and those sessions' agents
// (their AgentName).
type NotRecorded struct {
	Requests int `json:"requests"`
	Sessions int `json:"sessions"`
	// Entirely counts those sessions none of whose requests (in the
	// table's window) recorded usage: the report's "N sessions recorded
	// no usage" counts these, where Sessions counts any such request.
	Entirely int      `json:"sessionsWithNone"`
	Agents   []string `json:"agents"`
}

// NotePrices records which of the table's unpriced models the prices in
// effect price now (priced reports whether a model has a price): a map
// keeps the cost it was written with, so those are priced in the maps
// written from now on, and the note under the table says how to write the
// others again rather than that no price is known.
func (t *UsageTable) NotePrices(priced func(model string) bool) {
	t.Repriceable, t.noted = nil, true
	for _, m := range t.Totals.Unpriced {
		if priced(m) {
			t.Repriceable = append(t.Repriceable, m)
		}
	}
}

// Window bounds the model requests a usage table counts, by each
// request's own time (session start + t): Since <= time < Until, a zero
// bound open. It is the time the rows are grouped by, so that a table
// over a window has, for each day inside it, the row the table without
// one has (a session that straddles a bound counts only its requests
// inside). A request of a map with no start time is inside only a window
// without bounds.
type Window struct{ Since, Until time.Time }

func (w Window) contains(at time.Time, dated bool) bool {
	if w.Since.IsZero() && w.Until.IsZero() {
		return true
	}
	return dated && !at.Before(w.Since) && (w.Until.IsZero() || at.Before(w.Until))
}

// UsageFilter splits the selection of a usage table: the filter of the
// sessions that may hold requests inside f's start window, and that
// window, to count the requests by. A session started before Since may go
// on past it, so Since no longer selects sessions; Until still does, as a
// request comes at or after its session's start (t >= 0).
func UsageFilter(f Filter) (Filter, Window) {
	w := Window{Since: f.Since, Until: f.Until}
	f.Since = time.Time{}
	return f, w
}

// Usage groups the model requests of maps by period. Requests are dated by
// their own time (session start + t) in loc, so a session over midnight
// counts on both days; session rows are keyed by the session. The totals
// row equals the sum of the maps' totals (tokens, output tokens, cost).
func Usage(maps []*Map, p Period, loc *time.Location) UsageTable {
	return UsageWithin(maps, p, loc, Window{})
}

// UsageWithin is Usage of the requests inside w alone. Every grouping
// counts the same requests, so their totals agree: a session row is the
// part of the session inside w, a week or month that a bound cuts its
// part inside.
func UsageWithin(maps []*Map, p Period, loc *time.Location, w Window) UsageTable {
	ss := make([]UsageSession, len(maps))
	for i, m := range maps {
		ss[i] = UsageOf(m)
	}
	return UsageOfSessions(ss, p, loc, w)
}

// UsageSession is what a usage table reads of a map: its session, its
// totals, its lanes and its model requests, a small part of the map. A
// command that totals tens of thousands of maps keeps these instead of
// the maps (whose tool calls, files and text-free details it does not
// read): at 100,000 sessions that is tens of MB instead of 1.5 GB.
type UsageSession struct {
	// session is the map's session block without what a table does not
	// read (its models, CLI version, start as text).
	session  mapfile.Session
	start    time.Time
	dated    bool     // the map has a start time (Map.Start)
	lanes    []string // the ids of the map's lanes
	unpriced []string // unpricedModels
	first    string   // firstModel
	// The map's totals: what it counts beyond its kept requests (a map
	// cut at the event cap) is their difference with the requests.
	outputTokens, tokens int64
	cost                 float64
	reqs                 []usageRequest
}

// usageRequest is a model request of a map, as a usage table counts it.
type usageRequest struct {
	t            int64  // ms from the session's start
	model, label string // modelName, modelLabel
	in, cw, cr   int64
	out          int64
	cost         float64
	none         bool // NoUsage
}

// UsageOf keeps of m what a usage table reads.
func UsageOf(m *Map) UsageSession {
	u := UsageSession{session: m.Session, unpriced: unpricedModels(m), first: firstModel(m),
		outputTokens: m.Totals.OutputTokens, tokens: m.Totals.Tokens, cost: m.Totals.CostUSD}
	u.start, u.dated = m.Start()
	u.session.Models, u.session.CLIVersion, u.session.StartedAt, u.session.PathMode = nil, "", "", ""
	for _, a := range m.Agents {
		u.lanes = append(u.lanes, a.ID)
	}
	n := 0
	for i := range m.Events {
		if m.Events[i].Kind == "llm" {
			n++
		}
	}
	u.reqs = make([]usageRequest, 0, n)
	for i := range m.Events {
		e := &m.Events[i]
		if e.Kind != "llm" {
			continue
		}
		r := usageRequest{t: e.T, model: modelName(e.Model), label: modelLabel(e),
			in: e.In, cw: e.CW, cr: e.CR, out: e.Out, cost: e.Cost, none: NoUsage(e)}
		if k := len(u.reqs); k > 0 && u.reqs[k-1].model == r.model {
			// Share the strings of the request before (most requests of
			// a session are of its model).
			r.model = u.reqs[k-1].model
			if u.reqs[k-1].label == r.label {
				r.label = u.reqs[k-1].label
			}
		}
		u.reqs = append(u.reqs, r)
	}
	return u
}

// UsageOfSessions is UsageWithin of the maps ss were kept of, in the same
// order.
func UsageOfSessions(ss []UsageSession, p Period, loc *time.Location, w Window) UsageTable {
	rows := map[string]*UsageRow{}
	total := &UsageRow{Key: "Total"}
	tab := UsageTable{Period: p}
	var none NotRecorded
	noneAgents := map[string]bool{}
	for _, u := range usageCountedOnce(ss) {
		start, dated := u.start, u.dated
		at := func(t int64) time.Time { return start.Add(time.Duration(t) * time.Millisecond) }
		key := func(t int64, model string) string {
			if !dated && p != BySess && p != ByModel {
				// A map with no start time (its log gave none) has
				// requests of no known day: a row of their own, not
				// year 1.
				return Undated
			}
			at := at(t).In(loc)
			switch p {
			case Weekly:
				wd := (int(at.Weekday()) + 6) % 7
				return at.AddDate(0, 0, -wd).Format(time.DateOnly)
			case Monthly:
				return at.Format("2006-01")
			case BySess:
				return u.session.NativeID()
			case ByModel:
				return model
			}
			return at.Format(time.DateOnly)
		}
		row := func(k string) *UsageRow {
			r := rows[k]
			if r == nil {
				r = &UsageRow{Key: k}
				if p == BySess {
					r.Agent = AgentName(u.session.AgentTool)
					if dated {
						r.Start = start.Format(time.RFC3339)
					}
				}
				rows[k] = r
			}
			return r
		}
		var sumTok, sumOut int64
		var sumCost float64
		lastT, lastModel := int64(0), u.first
		sessionNone, sessionSome := false, false
		for i := range u.reqs {
			e := &u.reqs[i]
			sumTok += e.in + e.cw + e.cr + e.out
			sumOut += e.out
			sumCost += e.cost
			lastT, lastModel = e.t, e.model
			if !w.contains(at(e.t), dated) {
				continue
			}
			unp := slices.Contains(u.unpriced, e.model)
			n := 0
			if e.none {
				n, sessionNone = 1, true
			} else {
				sessionSome = true
			}
			r := row(key(e.t, e.label))
			r.add(u.session.ID, e.label, unp, n, e.in, e.cw, e.cr, e.out, 0, e.cost)
			total.add(u.session.ID, e.label, unp, n, e.in, e.cw, e.cr, e.out, 0, e.cost)
		}
		if sessionNone {
			none.Sessions++
			if !sessionSome {
				none.Entirely++
			}
			noneAgents[AgentName(u.session.AgentTool)] = true
		}
		// What the totals count beyond the kept events (a map cut at the
		// event cap): on the last request's row and model, so in the
		// window when that request is.
		restOut := u.outputTokens - sumOut
		restTok := u.tokens - sumTok - restOut
		restCost := u.cost - sumCost
		if (restOut != 0 || restTok != 0 || restCost > 5e-7 || restCost < -5e-7) && w.contains(at(lastT), dated) {
			if u.session.Truncated {
				tab.Truncated++
			}
			r, unp := row(key(lastT, lastModel)), slices.Contains(u.unpriced, lastModel)
			r.add(u.session.ID, lastModel, unp, 0, 0, 0, 0, restOut, restTok, restCost)
			total.add(u.session.ID, lastModel, unp, 0, 0, 0, 0, restOut, restTok, restCost)
		}
	}
	for _, r := range rows {
		tab.Rows = append(tab.Rows, r.finish())
	}
	slices.SortFunc(tab.Rows, func(a, b UsageRow) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Key, b.Key)) })
	if p == ByModel {
		slices.SortStableFunc(tab.Rows, func(a, b UsageRow) int { return cmp.Compare(b.Total, a.Total) })
	}
	tab.Totals = total.finish()
	if none.Requests = total.NoUsage; none.Requests > 0 {
		for a := range noneAgents {
			none.Agents = append(none.Agents, a)
		}
		slices.Sort(none.Agents)
		tab.NotRecorded = &none
	}
	return tab
}

// Undated is the key of the day, week or month row of the requests of
// maps with no start time; it sorts after every date.
const Undated = "undated"

// FastSuffix marks a model's requests served in fast mode in a usage
// table's model names, and the report's.
const FastSuffix = " (fast)"

// modelLabel names a request's model as a usage table and the report do:
// fast mode bills the same tokens at a multiple, so its requests are a
// model of their own ("claude-opus-4-8 (fast)", as ccusage shows a -fast
// model), and the price per token of neither row is a blend.
func modelLabel(e *mapfile.Event) string {
	if _, fast := ServedFast(e); fast {
		return modelName(e.Model) + FastSuffix
	}
	return modelName(e.Model)
}

// modelLabels are a session's models as modelLabel names its requests, in
// the map's order: a model whose requests were all served fast under its
// fast name, one with some fast requests under both names.
func modelLabels(m *Map) []string {
	var all, fast map[string]int
	for i := range m.Events {
		e := &m.Events[i]
		if e.Kind != "llm" {
			continue
		}
		if all == nil {
			all, fast = map[string]int{}, map[string]int{}
		}
		name := modelName(e.Model)
		all[name]++
		if modelLabel(e) != name {
			fast[name]++
		}
	}
	if len(m.Session.Models) == 0 {
		return []string{"unknown"}
	}
	out := make([]string, 0, len(m.Session.Models))
	for _, name := range m.Session.Models {
		name = modelName(name)
		if fast[name] == 0 || fast[name] < all[name] {
			out = append(out, name)
		}
		if fast[name] > 0 {
			out = append(out, name+FastSuffix)
		}
	}
	return out
}

// NoUsage reports whether a model request recorded no token usage: its log
// gave none (Cursor writes none; a Codex response no token_count measured),
// as a request always reads a prompt.
func NoUsage(e *mapfile.Event) bool { return e.NoUsage() }

// ServedFast reports whether a request was served in fast mode, and the
// multiplier it was billed at. A map keeps the request's cost, not the
// mode: the mode is read from the cost, which for a fast request is the
// multiplier times the list price of its tokens. The split of its cache
// writes between the 5-minute and 1-hour lifetimes is not in the map, so
// the list price is a range (1-hour writes cost 1.6 times 5-minute ones);
// every fast multiplier is 2 or more, so a fast cost is above the range's
// top. A cost from a [prices] entry of the config matches neither and
// reads as not fast, unless the entry is the fast multiple of the list
// price, which the cost cannot tell from fast mode.
func ServedFast(e *mapfile.Event) (float64, bool) {
	if e.Kind != "llm" || e.Cost <= 0 {
		return 0, false
	}
	p, ok := listPrice(e.Model)
	if !ok || p.Fast <= 1 {
		return 0, false
	}
	u := prices.Usage{In: e.In, CW5m: e.CW, CR: e.CR, Out: e.Out}
	low := p.Cost(u)
	u.CW5m, u.CW1h = 0, e.CW
	high := p.Cost(u)
	// Each cost is rounded to 6 decimals.
	const slack = 2e-6
	near := func(c, lo, hi float64) bool { return c >= lo*(1-1e-4)-slack && c <= hi*(1+1e-4)+slack }
	if near(e.Cost, low, high) {
		return 0, false
	}
	return p.Fast, near(e.Cost, low*p.Fast, high*p.Fast)
}

// listPrices caches prices.Lookup by model name: the built-in table does
// not change while the process runs, and the report asks it of every
// request of ten thousand sessions twice (a session's models, its tokens by
// model), where a map holds a handful of models.
var listPrices sync.Map // model -> priceFound

type priceFound struct {
	p  prices.Price
	ok bool
}

func listPrice(model string) (prices.Price, bool) {
	if v, ok := listPrices.Load(model); ok {
		f := v.(priceFound)
		return f.p, f.ok
	}
	p, ok := prices.Lookup(model)
	listPrices.Store(model, priceFound{p, ok})
	return p, ok
}

func firstModel(m *Map) string {
	if len(m.Session.Models) > 0 {
		return modelName(m.Session.Models[0])
	}
	return "unknown"
}

func modelName(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// add counts a request (or what a map counts beyond its events) of model;
// unpriced is whether the model had no price in the session's map, none
// the requests among them that recorded no usage.
func (r *UsageRow) add(session, model string, unpriced bool, none int, in, cw, cr, out, beyond int64, cost float64) {
	if r.sessions == nil {
		r.sessions = map[string]bool{}
		r.models = map[string]*UsageRow{}
	}
	r.sessions[session] = true
	for _, x := range []*UsageRow{r, r.model(model)} {
		x.Input += in
		x.CacheCreate += cw
		x.CacheRead += cr
		x.Output += out
		x.Beyond += beyond
		x.Total += in + cw + cr + out + beyond
		x.CostUSD += cost
		x.NoUsage += none
	}
	r.models[model].sessions[session] = true
	r.models[model].unpriced = r.models[model].unpriced || unpriced
}

func (r *UsageRow) model(name string) *UsageRow {
	b := r.models[name]
	if b == nil {
		b = &UsageRow{Key: name, sessions: map[string]bool{}}
		r.models[name] = b
	}
	return b
}

// finish fills the derived fields: models, sessions, unpriced, breakdown.
func (r *UsageRow) finish() UsageRow {
	out := *r
	out.Sessions = len(r.sessions)
	out.Models = []string{}
	for name, b := range r.models {
		if b.Total == 0 && b.NoUsage == 0 {
			continue
		}
		out.Models = append(out.Models, name)
		bd := *b
		bd.Sessions = len(b.sessions)
		bd.Models = []string{name}
		bd.CostUSD = roundUSD(bd.CostUSD)
		if b.unpriced {
			bd.Unpriced = []string{name}
			out.Unpriced = append(out.Unpriced, name)
		}
		bd.sessions, bd.models = nil, nil
		out.Breakdown = append(out.Breakdown, bd)
	}
	slices.Sort(out.Models)
	slices.Sort(out.Unpriced)
	slices.SortFunc(out.Breakdown, func(a, b UsageRow) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Key, b.Key))
	})
	out.CostUSD = roundUSD(out.CostUSD)
	out.sessions, out.models = nil, nil
	return out
}

func roundUSD(c float64) float64 {
	return float64(int64(c*1e6+0.5)) / 1e6
}

// WriteUsageJSON prints the table as JSON; breakdown rows only when asked.
func WriteUsageJSON(w io.Writer, t UsageTable, breakdown bool) error {
	if !breakdown {
		for i := range t.Rows {
			t.Rows[i].Breakdown = nil
		}
		t.Totals.Breakdown = nil
	}
	if t.Rows == nil {
		t.Rows = []UsageRow{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

// WriteUsageTable prints the table aligned, as ccusage users know it:
// text columns on the left, numbers on the right, a totals row last.
func WriteUsageTable(w io.Writer, t UsageTable, breakdown bool) {
	if len(t.Rows) == 0 {
		fmt.Fprintln(w, "no model requests")
		return
	}
	head := map[Period]string{Daily: "DATE", Weekly: "WEEK OF", Monthly: "MONTH", BySess: "SESSION", ByModel: "MODEL"}[t.Period]
	g := grid{head}
	if t.Period == BySess {
		g = append(g, "AGENT")
	}
	if t.Period != ByModel {
		g = append(g, "MODELS")
	} else {
		breakdown = false
	}
	text := len(g)
	g = append(g, "INPUT", "OUTPUT", "CACHE CREATE", "CACHE READ", "TOTAL TOKENS", "COST (USD)")
	rows := [][]string{g}
	marked := false // a row's figures leave out requests that recorded no usage
	add := func(key, agent string, models []string, r UsageRow) {
		c := []string{key}
		if t.Period == BySess {
			c = append(c, agent)
		}
		if t.Period != ByModel {
			c = append(c, strings.Join(models, ", "))
		}
		tok := thousands
		if r.Total == 0 && r.NoUsage > 0 {
			// Not 0: the requests used tokens, their logs do not say how many.
			tok = func(int64) string { return "-" }
		}
		total, cost := tok(r.Total), costCell(r)
		if r.Total > 0 && r.NoUsage > 0 {
			marked = true
			// Some of the row's requests recorded none: its figures are
			// the others', marked as show and list mark them (the note
			// under the table says how many).
			total, cost = total+"*", cost+"*"
		}
		rows = append(rows, append(c, tok(r.Input), tok(r.Output), tok(r.CacheCreate),
			tok(r.CacheRead), total, cost))
	}
	for _, r := range t.Rows {
		add(r.Key, r.Agent, r.Models, r)
		if breakdown && len(r.Breakdown) > 1 {
			// A model's line under its row: the model in the MODELS
			// column, so that the first column keeps the width of a
			// date (a model's name there widened it for every row).
			for _, b := range r.Breakdown {
				add("", "", []string{"  - " + b.Key}, b)
			}
		}
	}
	add("Total", "", nil, t.Totals)
	if marked {
		// The digits of a column right-aligned with a mark after some:
		// the others, and the heading, get a space where the mark is.
		for _, row := range rows {
			for _, i := range []int{len(row) - 2, len(row) - 1} {
				if !strings.HasSuffix(row[i], "*") {
					row[i] += " "
				}
			}
		}
	}
	writeGrid(w, rows, text, true)
	if t.Truncated > 0 {
		fmt.Fprintf(w, "\n%d session(s) were cut at the event cap: their tokens beyond it count in TOTAL TOKENS only.\n", t.Truncated)
	}
	if n := t.NotRecorded; n != nil {
		whole := ""
		if n.Entirely > 0 && n.Entirely < n.Sessions {
			// Said apart, as the report counts only these.
			whole = fmt.Sprintf(" (%d of these sessions recorded none at all)", n.Entirely)
		}
		verb, their, they := "recorded", "their logs give", "they add"
		if n.Requests == 1 {
			their, they = "its log gives", "it adds"
		}
		mark := ""
		if marked {
			mark = " (the rows they are in beside requests that did are marked *)"
		}
		fmt.Fprintf(w, "\n%s in %s (%s) %s no token usage%s: %s none, so %s nothing to the tokens and cost above%s.\n",
			plural(n.Requests, "model request"), plural(n.Sessions, "session"), strings.Join(n.Agents, ", "), verb, whole, their, they, mark)
	}
	writeUnpricedNote(w, t)
}

// writeUnpricedNote says which models the costs leave out. A map keeps the
// costs it was written with, so a model unpriced in its maps may have a
// price in the config now: told the prices in effect (NotePrices), the note
// names those apart; else it says what makes such a price count.
func writeUnpricedNote(w io.Writer, t UsageTable) {
	if len(t.Totals.Unpriced) == 0 {
		return
	}
	if !t.noted {
		fmt.Fprintf(w, "\nunpriced in their maps: %s; their requests add no cost.\n", strings.Join(t.Totals.Unpriced, ", "))
		fmt.Fprintln(w, "A price set in the config ([prices.\"MODEL\"]) after a map was written applies once the maps are written again: the service and the next agentmap scan do it (agentmap flush --all --rewrite: at once).")
		return
	}
	var unknown []string
	for _, m := range t.Totals.Unpriced {
		if !slices.Contains(t.Repriceable, m) {
			unknown = append(unknown, m)
		}
	}
	if len(unknown) > 0 {
		fmt.Fprintf(w, "\nno price known for %s: their requests add no cost.\n", strings.Join(unknown, ", "))
	}
	if len(t.Repriceable) > 0 {
		verb, it := "is", "it"
		if len(t.Repriceable) > 1 {
			verb, it = "are", "them"
		}
		fmt.Fprintf(w, "\n%s %s priced in the config since the maps that leave %s out were written: the service reprices them once it has read the config, and so does the next agentmap scan (agentmap flush --all --rewrite: at once).\n",
			strings.Join(t.Repriceable, ", "), verb, it)
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

type grid []string

// writeGrid aligns rows: the first text columns left, the rest right, with
// a rule under the header (and above the last row when it is a total).
func writeGrid(w io.Writer, rows [][]string, text int, total bool) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	rule := func() {
		parts := make([]string, len(width))
		for i, n := range width {
			parts[i] = strings.Repeat("-", n)
		}
		fmt.Fprintln(w, strings.Join(parts, "  "))
	}
	for n, r := range rows {
		if total && n == len(rows)-1 {
			rule()
		}
		parts := make([]string, len(r))
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i < text {
				parts[i] = c + pad
			} else {
				parts[i] = pad + c
			}
		}
		fmt.Fprintln(w, strings.TrimRight(strings.Join(parts, "  "), " "))
		if n == 0 {
			rule()
		}
	}
}

// costCell is the cost, or "unpriced" where the row's models have no
// price (with the priced part when some do), or "usage not recorded" where
// its requests recorded no tokens to price.
func costCell(r UsageRow) string {
	if r.Total == 0 && r.CostUSD == 0 && r.NoUsage > 0 {
		return "usage not recorded"
	}
	c := prices.Dollars(r.CostUSD)
	if len(r.Unpriced) == 0 {
		return c
	}
	if r.CostUSD == 0 {
		return "unpriced"
	}
	return c + " +unpriced"
}

// thousands writes n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
