// Package prices is agentmap's cost model: the list prices of the models
// that coding agents use, and the cost of one request from its own usage.
//
// The table is a data file embedded in the binary (prices.tsv), one row per
// model family with the page it was taken from and the day it was checked.
// A user's `[prices]` section overrides rows by model-name prefix.
//
// The API is small on purpose and stable for every caller (the map builder,
// the report, the usage tables, new agents):
//
//	p, ok := prices.Lookup("claude-opus-4-8")       // the embedded table
//	p, ok = table.Lookup(model)                     // a table with overrides (Default().With(...))
//	usd := p.Cost(prices.Usage{In: 10, CW1h: 500, CR: 9000, Out: 200})
//
// Usage splits a request's tokens so that none is counted twice: In is fresh
// input, CW5m and CW1h cache writes by lifetime, CR cache reads, Out output
// including reasoning. Fast marks a request served in fast mode.
//
// A -pro model (gpt-5.4-pro) is priced only by a row written for it, never
// by its base family's row. A request whose log names no model ("unknown")
// is priced only by an override for "unknown".
//
// A model with no row is *unpriced*: Lookup reports ok == false. Callers
// count its tokens, write a cost of 0 where a number is required, and show
// the word "unpriced" wherever a person reads the figure; never a silent 0.
package prices

import (
	"bufio"
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Usage is the token usage of one request.
type Usage struct {
	In   int64 // fresh (uncached) input
	CW5m int64 // cache writes with a 5-minute lifetime, or of unknown lifetime
	CW1h int64 // cache writes with a 1-hour lifetime
	CR   int64 // cache reads
	Out  int64 // output, including reasoning
	Fast bool  // served in fast mode (Anthropic usage.speed "fast", OpenAI fast/priority tier)
}

// Prompt is the request's whole input: the figure long-context tiers test.
func (u Usage) Prompt() int64 { return u.In + u.CW5m + u.CW1h + u.CR }

// Price is a model family's list price in USD per million tokens.
type Price struct {
	// Pattern is the row's key: a regular expression over the normalised
	// model name for embedded rows, the prefix for an override.
	Pattern string `json:"pattern"`

	Input        float64 `json:"input"`
	CacheWrite   float64 `json:"cacheWrite"`   // 5-minute (or only) cache-write price
	CacheWrite1h float64 `json:"cacheWrite1h"` // 1-hour cache-write price; 0 = CacheWrite
	CacheRead    float64 `json:"cacheRead"`
	Output       float64 `json:"output"`

	// LongAbove is the prompt size (tokens) above which the whole request
	// is billed at LongInput x the input-side prices and LongOutput x the
	// output price. 0 means the model has no long-context tier.
	LongAbove  int64   `json:"longAbove,omitempty"`
	LongInput  float64 `json:"longInput,omitempty"`
	LongOutput float64 `json:"longOutput,omitempty"`
	// Fast multiplies every price of a fast-mode request; 0 or 1 = none.
	Fast float64 `json:"fast,omitempty"`

	Source  string `json:"source,omitempty"`
	Checked string `json:"checked,omitempty"` // YYYY-MM-DD the source was read
}

// Cost is the price of one request, rounded to 6 decimals so that sums
// (and a map's content hash) do not depend on summation order.
func (p Price) Cost(u Usage) float64 {
	in, out := 1.0, 1.0
	if p.LongAbove > 0 && u.Prompt() > p.LongAbove {
		in, out = orOne(p.LongInput), orOne(p.LongOutput)
	}
	cw1h := p.CacheWrite1h
	if cw1h == 0 {
		cw1h = p.CacheWrite
	}
	c := in*(float64(u.In)*p.Input+float64(u.CW5m)*p.CacheWrite+float64(u.CW1h)*cw1h+float64(u.CR)*p.CacheRead) +
		out*float64(u.Out)*p.Output
	if u.Fast {
		c *= orOne(p.Fast)
	}
	return Round(c / 1e6)
}

// Round rounds a dollar amount to 6 decimals, the precision of every cost
// agentmap writes.
func Round(c float64) float64 { return math.Round(c*1e6) / 1e6 }

func orOne(f float64) float64 {
	if f <= 0 {
		return 1
	}
	return f
}

type row struct {
	re    *regexp.Regexp
	price Price
}

// Table is a price table: overrides by prefix first, then the rows in order.
type Table struct {
	rows      []row
	overrides map[string]Price // lower-cased prefix -> price
}

//go:embed prices.tsv
var embedded string

var defaultTable = mustParse(embedded)

// Default returns the embedded table.
func Default() *Table { return defaultTable }

// Lookup finds a model's price in the embedded table.
func Lookup(model string) (Price, bool) { return defaultTable.Lookup(model) }

// With returns a copy of t in which overrides (keyed by model-name prefix,
// case-insensitive; the longest matching prefix wins) take precedence. An
// override is taken as given: a rate left at 0 prices those tokens at $0.
// The config loader refuses a [prices] table that omits one of input,
// cache_write, cache_read and output, so that 0 is always a choice the
// user wrote; a Go caller writes every rate it means.
func (t *Table) With(overrides map[string]Price) *Table {
	if len(overrides) == 0 {
		return t
	}
	n := &Table{rows: t.rows, overrides: map[string]Price{}}
	for k, v := range t.overrides {
		n.overrides[k] = v
	}
	for k, v := range overrides {
		k = strings.ToLower(strings.TrimSpace(k))
		v.Pattern = k
		if v.Source == "" {
			v.Source = "config [prices]"
		}
		n.overrides[k] = v
	}
	return n
}

// Unknown is the model name of a request whose log did not say which model
// served it. No embedded row prices it; an override keyed exactly
// "unknown" does, for a user who knows what such requests ran on.
const Unknown = "unknown"

// Lookup finds the price of a model: the longest override prefix that the
// normalised name starts with, else the first embedded row that matches.
// ok is false for an unpriced model. An empty or unknown name is priced
// only by an override for "unknown" itself: a prefix such as "u" was
// written for real model names, not for the absence of one.
func (t *Table) Lookup(model string) (Price, bool) {
	m := Normalise(model)
	switch m {
	case "", Unknown:
		p, ok := t.overrides[Unknown]
		return p, ok
	case "<synthetic>":
		// Claude Code's own placeholder messages: no request was billed.
		return Price{}, false
	}
	best := ""
	found := false
	for prefix := range t.overrides {
		if strings.HasPrefix(m, prefix) && (!found || len(prefix) > len(best) || (len(prefix) == len(best) && prefix < best)) {
			best, found = prefix, true
		}
	}
	if found {
		return t.overrides[best], true
	}
	for _, r := range t.rows {
		if r.re.MatchString(m) {
			if isPro(m) && !strings.Contains(r.price.Pattern, "pro") {
				// The family's row, not the -pro model's own: its list
				// price is several times the base model's, so a guess
				// from the family would read as a bill many times too low.
				return Price{}, false
			}
			return r.price, true
		}
	}
	return Price{}, false
}

// isPro reports whether a normalised model name is a -pro variant
// (gpt-5.4-pro, gpt-5-pro-2025-10-06).
func isPro(m string) bool { return strings.Contains(m+"-", "-pro-") }

// Rows lists the table in effect: overrides (sorted by prefix) first, then
// the embedded rows in match order.
func (t *Table) Rows() []Price {
	out := make([]Price, 0, len(t.overrides)+len(t.rows))
	keys := make([]string, 0, len(t.overrides))
	for k := range t.overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, t.overrides[k])
	}
	for _, r := range t.rows {
		out = append(out, r.price)
	}
	return out
}

// Normalise lower-cases a model name and drops provider prefixes
// (anthropic/, openai/, models/, Bedrock's us.anthropic.), a date or
// context suffix that does not change the price ([1m]), and Bedrock's
// version tail (-v1:0).
func Normalise(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"us.anthropic.", "eu.anthropic.", "apac.anthropic.", "global.anthropic.", "anthropic."} {
		if strings.HasPrefix(m, p) {
			m = m[len(p):]
			break
		}
	}
	if i := strings.IndexByte(m, '['); i > 0 {
		m = m[:i]
	}
	if i := strings.Index(m, "-v1:"); i > 0 {
		m = m[:i]
	}
	return m
}

// mustParse reads the embedded table; a malformed row is a build defect,
// caught by the package's tests, so it panics.
func mustParse(s string) *Table {
	t, err := parse(s)
	if err != nil {
		panic(err)
	}
	return t
}

func parse(s string) (*Table, error) {
	t := &Table{}
	sc := bufio.NewScanner(strings.NewReader(s))
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 12 {
			return nil, fmt.Errorf("prices.tsv:%d: %d columns, want 12", line, len(f))
		}
		re, err := regexp.Compile(f[0])
		if err != nil {
			return nil, fmt.Errorf("prices.tsv:%d: pattern: %w", line, err)
		}
		num := make([]float64, 9)
		for i := range num {
			if num[i], err = strconv.ParseFloat(f[i+1], 64); err != nil || num[i] < 0 {
				return nil, fmt.Errorf("prices.tsv:%d: column %d: %q is not a price", line, i+2, f[i+1])
			}
		}
		if f[10] == "" || len(f[11]) != len("2006-01-02") {
			return nil, fmt.Errorf("prices.tsv:%d: every row needs a source and a checked date", line)
		}
		t.rows = append(t.rows, row{re: re, price: Price{
			Pattern: f[0], Input: num[0], CacheWrite: num[1], CacheWrite1h: num[2], CacheRead: num[3], Output: num[4],
			LongAbove: int64(num[5]), LongInput: num[6], LongOutput: num[7], Fast: num[8],
			Source: f[10], Checked: f[11],
		}})
	}
	return t, sc.Err()
}

// Dollars writes a cost in dollars and cents for a person; a cost above
// zero that would round to $0.00 reads "<$0.01", so that usage that was
// paid for never looks free.
func Dollars(usd float64) string {
	if usd > 0 && usd < 0.005 {
		return "<$0.01"
	}
	return "$" + strconv.FormatFloat(usd, 'f', 2, 64)
}

// CostText is a session's or a lane's cost for a person, given the models
// among its tokens that have no price: "unpriced" when none was priced,
// the priced part and "+unpriced" when some were, never $0 for tokens
// used. none is what a cost of 0 with nothing unpriced reads ("-" in a
// table, "$0.00" where a figure is required).
func CostText(usd float64, unpriced []string, none string) string {
	switch {
	case len(unpriced) > 0 && usd == 0:
		return "unpriced"
	case len(unpriced) > 0:
		return Dollars(usd) + "+unpriced"
	case usd == 0:
		return none
	}
	return Dollars(usd)
}
