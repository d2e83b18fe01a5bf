package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmap/agentmap/builder/prices"
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
	Agent       string   `json:"agent,omitempty"`     // session rows
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
	rows := map[string]*UsageRow{}
	total := &UsageRow{Key: "Total"}
	tab := UsageTable{Period: p}
	for _, m := range countedOnce(maps) {
		start, dated := m.Start()
		at := func(t int64) time.Time { return start.Add(time.Duration(t) * time.Millisecond) }
		key := func(t int64, model string) string {
			at := at(t).In(loc)
			switch p {
			case Weekly:
				wd := (int(at.Weekday()) + 6) % 7
				return at.AddDate(0, 0, -wd).Format(time.DateOnly)
			case Monthly:
				return at.Format("2006-01")
			case BySess:
				return m.Session.NativeID()
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
					r.Agent, r.Start = m.Session.AgentTool, start.Format(time.RFC3339)
				}
				rows[k] = r
			}
			return r
		}
		unpriced := unpricedModels(m)
		var sumTok, sumOut int64
		var sumCost float64
		lastT, lastModel := int64(0), firstModel(m)
		for i := range m.Events {
			e := &m.Events[i]
			if e.Kind != "llm" {
				continue
			}
			model := modelName(e.Model)
			sumTok += e.In + e.CW + e.CR + e.Out
			sumOut += e.Out
			sumCost += e.Cost
			lastT, lastModel = e.T, model
			if !w.contains(at(e.T), dated) {
				continue
			}
			r, unp := row(key(e.T, model)), slices.Contains(unpriced, model)
			r.add(m.Session.ID, model, unp, e.In, e.CW, e.CR, e.Out, 0, e.Cost)
			total.add(m.Session.ID, model, unp, e.In, e.CW, e.CR, e.Out, 0, e.Cost)
		}
		// What the totals count beyond the kept events (a map cut at the
		// event cap): on the last request's row and model, so in the
		// window when that request is.
		restOut := m.Totals.OutputTokens - sumOut
		restTok := m.Totals.Tokens - sumTok - restOut
		restCost := m.Totals.CostUSD - sumCost
		if (restOut != 0 || restTok != 0 || restCost > 5e-7 || restCost < -5e-7) && w.contains(at(lastT), dated) {
			if m.Session.Truncated {
				tab.Truncated++
			}
			r, unp := row(key(lastT, lastModel)), slices.Contains(unpriced, lastModel)
			r.add(m.Session.ID, lastModel, unp, 0, 0, 0, restOut, restTok, restCost)
			total.add(m.Session.ID, lastModel, unp, 0, 0, 0, restOut, restTok, restCost)
		}
	}
	for _, r := range rows {
		if r.Total == 0 && r.CostUSD == 0 {
			continue // requests that reported no usage
		}
		tab.Rows = append(tab.Rows, r.finish())
	}
	slices.SortFunc(tab.Rows, func(a, b UsageRow) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Key, b.Key)) })
	if p == ByModel {
		slices.SortStableFunc(tab.Rows, func(a, b UsageRow) int { return cmp.Compare(b.Total, a.Total) })
	}
	tab.Totals = total.finish()
	return tab
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
// unpriced is whether the model had no price in the session's map.
func (r *UsageRow) add(session, model string, unpriced bool, in, cw, cr, out, beyond int64, cost float64) {
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
		if b.Total == 0 {
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
	add := func(key, agent string, models []string, r UsageRow) {
		c := []string{key}
		if t.Period == BySess {
			c = append(c, agent)
		}
		if t.Period != ByModel {
			c = append(c, strings.Join(models, ", "))
		}
		rows = append(rows, append(c, thousands(r.Input), thousands(r.Output), thousands(r.CacheCreate),
			thousands(r.CacheRead), thousands(r.Total), costCell(r)))
	}
	for _, r := range t.Rows {
		add(r.Key, r.Agent, r.Models, r)
		if breakdown && len(r.Breakdown) > 1 {
			for _, b := range r.Breakdown {
				add("  - "+b.Key, "", nil, b)
			}
		}
	}
	add("Total", "", nil, t.Totals)
	writeGrid(w, rows, text, true)
	if t.Truncated > 0 {
		fmt.Fprintf(w, "\n%d session(s) were cut at the event cap: their tokens beyond it count in TOTAL TOKENS only.\n", t.Truncated)
	}
	if len(t.Totals.Unpriced) > 0 {
		fmt.Fprintf(w, "\nno price known for %s: their requests add no cost.\n", strings.Join(t.Totals.Unpriced, ", "))
	}
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
// price (with the priced part when some do).
func costCell(r UsageRow) string {
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
