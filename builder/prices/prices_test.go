package prices

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestLookupFamilies(t *testing.T) {
	for _, tt := range []struct {
		model string
		input float64
		cr    float64
	}{
		{"claude-opus-4-8", 5, 0.5},
		{"claude-opus-4-6", 5, 0.5},
		{"claude-opus-4-5-20251101", 5, 0.5},
		{"claude-opus-4-1-20250805", 15, 1.5},
		{"claude-opus-4-20250514", 15, 1.5},
		{"claude-fable-5", 10, 1},
		{"claude-fable-5-1", 10, 0.25},
		{"claude-sonnet-4-5-20250929", 3, 0.3},
		{"claude-sonnet-4-6", 3, 0.3},
		{"claude-sonnet-5", 2, 0.2},
		{"claude-haiku-4-5-20251001", 1, 0.1},
		{"claude-3-5-haiku-20241022", 0.8, 0.08},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", 3, 0.3},
		{"claude-opus-4-6[1m]", 5, 0.5},
		{"gpt-5-codex", 1.25, 0.125},
		{"gpt-5.1", 1.25, 0.125},
		{"gpt-5.2-codex", 1.75, 0.175},
		{"gpt-5.4", 2.5, 0.25},
		{"gpt-5.5", 5, 0.5},
		{"gpt-5.6-sol", 4, 0.4},
		{"gpt-5.6-luna", 0.2, 0.02},
		{"gpt-5-mini", 0.25, 0.025},
		{"openai/gpt-4.1-mini", 0.4, 0.1},
		{"gemini-2.5-pro", 1.25, 0.125},
		{"gemini-2.5-flash-lite", 0.1, 0.01},
		{"gemini-3-pro-preview", 2, 0.2},
		{"gemini-3-flash-preview", 0.5, 0.05},
		{"mimo-v2.5-pro", 0.435, 0.00362},
	} {
		p, ok := Lookup(tt.model)
		if !ok || p.Input != tt.input || p.CacheRead != tt.cr {
			t.Errorf("Lookup(%q) = %v/%v %v (row %q), want %v/%v", tt.model, p.Input, p.CacheRead, ok, p.Pattern, tt.input, tt.cr)
		}
		if ok && (p.Source == "" || p.Checked == "") {
			t.Errorf("row %q has no source or date", p.Pattern)
		}
	}
}

// The rows of models released or repriced before the table's checked date,
// every column: a family row that prices them "near enough" is the defect
// these guard against.
func TestLookupCurrentModels(t *testing.T) {
	for _, tt := range []struct {
		model                   string
		in, cw5m, cw1h, cr, out float64
		longAbove               int64
		longIn, longOut, fast   float64
	}{
		{"claude-haiku-5-5", 0.1, 0.125, 0.2, 0.01, 0.5, 100_000, 5, 5, 1},
		{"claude-haiku-5-5[1m]", 0.1, 0.125, 0.2, 0.01, 0.5, 100_000, 5, 5, 1},
		{"claude-sonnet-5-5", 2, 2.5, 4, 0.1, 10, 0, 1, 1, 1},
		{"claude-sonnet-5", 2, 2.5, 4, 0.2, 10, 0, 1, 1, 1},
		{"claude-sonnet-5-20260630", 2, 2.5, 4, 0.2, 10, 0, 1, 1, 1},
		{"claude-fable-5-2", 8, 10, 16, 0.2, 40, 0, 1, 1, 1},
		{"claude-mythos-5-2", 8, 10, 16, 0.2, 40, 0, 1, 1, 1},
		{"claude-fable-5-1", 10, 12.5, 20, 0.25, 50, 0, 1, 1, 1},
		{"claude-mythos-5-1", 10, 12.5, 20, 0.25, 50, 0, 1, 1, 1},
		{"claude-fable-5-20260609", 10, 12.5, 20, 1, 50, 0, 1, 1, 1},
		{"gpt-6-sol", 2, 2.5, 2.5, 0.2, 10, 272_000, 2, 1.5, 2},
		{"openai/gpt-6-luna", 0.1, 0.125, 0.125, 0.01, 0.5, 272_000, 2, 1.5, 2},
		{"gpt-6-astra", 10, 12.5, 12.5, 1, 50, 272_000, 2, 1.5, 2},
		{"gpt-6.1-sol", 2, 2.5, 2.5, 0.1, 10, 272_000, 2, 1.5, 2},
		{"gpt-6.2-sol", 2, 2.5, 2.5, 0.1, 10, 272_000, 2, 1.5, 2},
		{"gpt-5-pro", 15, 15, 15, 15, 120, 0, 1, 1, 1},
		{"gpt-5-pro-2025-10-06", 15, 15, 15, 15, 120, 0, 1, 1, 1},
		{"gpt-5.2-pro", 21, 21, 21, 21, 168, 0, 1, 1, 1},
		{"gpt-5.4-pro", 30, 30, 30, 30, 180, 0, 1, 1, 1},
		{"gpt-5.5-pro", 30, 30, 30, 30, 180, 0, 1, 1, 1},
	} {
		p, ok := Lookup(tt.model)
		if !ok {
			t.Errorf("Lookup(%q): unpriced", tt.model)
			continue
		}
		got := []float64{p.Input, p.CacheWrite, p.CacheWrite1h, p.CacheRead, p.Output, float64(p.LongAbove), p.LongInput, p.LongOutput, p.Fast}
		want := []float64{tt.in, tt.cw5m, tt.cw1h, tt.cr, tt.out, float64(tt.longAbove), tt.longIn, tt.longOut, tt.fast}
		for i := range got {
			if !near(got[i], want[i]) {
				t.Errorf("Lookup(%q) = row %q %v, want %v", tt.model, p.Pattern, got, want)
				break
			}
		}
	}
}

// A -pro model costs several times its family's price: the family's row
// must not answer for it.
func TestProNotPricedByFamily(t *testing.T) {
	for _, m := range []string{"gpt-5.3-pro", "gpt-5.6-sol-pro", "gpt-6-astra-pro", "gpt-5.1-pro-2025-11-13", "o4-pro"} {
		if p, ok := Lookup(m); ok {
			t.Errorf("Lookup(%q) = row %q, want unpriced", m, p.Pattern)
		}
	}
	for _, m := range []string{"gemini-3-pro-preview", "gemini-2.5-pro", "mimo-v2.5-pro", "o3-pro", "gpt-5.4-pro", "gpt-5-codex", "gpt-5.4-mini"} {
		if _, ok := Lookup(m); !ok {
			t.Errorf("Lookup(%q): unpriced", m)
		}
	}
	// An override is the user's own prefix: it still prices what it names.
	if p, ok := Default().With(map[string]Price{"gpt-5.3": {Input: 7, CacheWrite: 7, CacheRead: 7, Output: 7}}).Lookup("gpt-5.3-pro"); !ok || p.Input != 7 {
		t.Errorf("override for gpt-5.3 on gpt-5.3-pro: %+v %v", p, ok)
	}
}

// A request whose log named no model is priced by an override for
// "unknown", and only by that one.
func TestUnknownOverride(t *testing.T) {
	u := Price{Input: 1.25, CacheWrite: 1.25, CacheRead: 0.125, Output: 10}
	tab := Default().With(map[string]Price{"Unknown": u})
	for _, m := range []string{"unknown", "", " UNKNOWN "} {
		if p, ok := tab.Lookup(m); !ok || p.Input != 1.25 || p.Source != "config [prices]" {
			t.Errorf("Lookup(%q) with an unknown override = %+v %v", m, p, ok)
		}
	}
	if p, ok := tab.Lookup("<synthetic>"); ok {
		t.Errorf("<synthetic> priced by %q", p.Pattern)
	}
	// A prefix that happens to begin "unknown" is for real names.
	short := Default().With(map[string]Price{"u": u, "unk": u})
	if p, ok := short.Lookup("unknown"); ok {
		t.Errorf("unknown priced by prefix override %q", p.Pattern)
	}
	if _, ok := Lookup("unknown"); ok {
		t.Error("the embedded table prices unknown")
	}
}

func TestUnpriced(t *testing.T) {
	for _, m := range []string{"", "unknown", "<synthetic>", "codex-auto-review", "my-local-llama", "fast", "sonnet"} {
		if p, ok := Lookup(m); ok {
			t.Errorf("Lookup(%q) = row %q, want unpriced", m, p.Pattern)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCostTiers(t *testing.T) {
	opus, _ := Lookup("claude-opus-4-6")
	// 1M of each kind: 5 + 6.25 + 10 + 0.5 + 25.
	u := Usage{In: 1e6, CW5m: 1e6, CW1h: 1e6, CR: 1e6, Out: 1e6}
	if got := opus.Cost(u); !near(got, 46.75) {
		t.Errorf("opus 4.6 cost = %v, want 46.75", got)
	}
	u.Fast = true
	if got := opus.Cost(u); !near(got, 46.75*6) {
		t.Errorf("opus 4.6 fast cost = %v, want %v", got, 46.75*6)
	}
	o48, _ := Lookup("claude-opus-4-8")
	if got := o48.Cost(Usage{In: 1e6, Out: 1e6, Fast: true}); !near(got, 60) {
		t.Errorf("opus 4.8 fast = %v, want $10+$50", got)
	}
	// Sonnet 4.5 above 200K prompt: input side x2, output x1.5.
	son, _ := Lookup("claude-sonnet-4-5")
	if got := son.Cost(Usage{In: 100_000, CR: 150_000, Out: 10_000}); !near(got, (100_000*6+150_000*0.6+10_000*22.5)/1e6) {
		t.Errorf("sonnet long = %v", got)
	}
	if got := son.Cost(Usage{In: 100_000, CR: 100_000, Out: 10_000}); !near(got, (100_000*3+100_000*0.3+10_000*15)/1e6) {
		t.Errorf("sonnet at 200K exactly = %v (the tier starts above it)", got)
	}
	gpt, _ := Lookup("gpt-5.5")
	if got := gpt.Cost(Usage{In: 300_000, Out: 1000}); !near(got, (300_000*10+1000*45)/1e6) {
		t.Errorf("gpt-5.5 long = %v", got)
	}
	// Haiku 5.5 above 100K prompt tokens: every rate 5x, output included.
	h55, _ := Lookup("claude-haiku-5-5")
	if got := h55.Cost(Usage{In: 10_000, CW5m: 20_000, CW1h: 10_000, CR: 60_100, Out: 2_000}); !near(got, 5*(10_000*0.1+20_000*0.125+10_000*0.2+60_100*0.01+2_000*0.5)/1e6) {
		t.Errorf("haiku 5.5 long = %v", got)
	}
	if got := h55.Cost(Usage{In: 10_000, CW5m: 20_000, CW1h: 10_000, CR: 60_000, Out: 2_000}); !near(got, (10_000*0.1+20_000*0.125+10_000*0.2+60_000*0.01+2_000*0.5)/1e6) {
		t.Errorf("haiku 5.5 at 100K exactly = %v (the tier starts above it)", got)
	}
	// GPT-6.1 Sol above 272K: $4 / $0.20 / $15, fast twice that.
	sol, _ := Lookup("gpt-6.1-sol")
	if got := sol.Cost(Usage{In: 100_000, CR: 200_000, Out: 1_000}); !near(got, (100_000*4+200_000*0.2+1_000*15)/1e6) {
		t.Errorf("gpt-6.1-sol long = %v", got)
	}
	if got := sol.Cost(Usage{In: 1e6, Out: 1e6, Fast: true}); !near(got, 2*(1e6*4+1e6*15)/1e6) {
		t.Errorf("gpt-6.1-sol long fast = %v", got)
	}
	// A 1h price of 0 (an override that gives one cache-write price) uses it for both.
	p := Price{Input: 1, CacheWrite: 2}
	if got := p.Cost(Usage{CW1h: 1e6, CW5m: 1e6}); !near(got, 4) {
		t.Errorf("single cache-write price = %v, want 4", got)
	}
}

func TestOverrides(t *testing.T) {
	tab := Default().With(map[string]Price{
		"My-Local":       {Input: 1},
		"my-local-llama": {Input: 2},
		"claude-opus":    {Output: 1},
	})
	if p, ok := tab.Lookup("my-local-llama-3"); !ok || p.Input != 2 || p.Source != "config [prices]" {
		t.Errorf("longest prefix: %+v %v", p, ok)
	}
	if p, _ := tab.Lookup("claude-opus-4-8"); p.Output != 1 {
		t.Errorf("override beats the table: %+v", p)
	}
	if p, _ := tab.Lookup("claude-sonnet-4-6"); p.Input != 3 {
		t.Errorf("table still answers the rest: %+v", p)
	}
	if p, _ := Lookup("claude-opus-4-8"); p.Output != 25 {
		t.Errorf("With changed the default table: %+v", p)
	}
	rows := tab.Rows()
	if rows[0].Pattern != "claude-opus" || len(rows) != 3+len(Default().Rows()) {
		t.Errorf("Rows: first %q, %d rows", rows[0].Pattern, len(rows))
	}
}

func TestParseRejects(t *testing.T) {
	good := "^x\t1\t1\t1\t0.1\t2\t0\t1\t1\t1\thttps://example.com\t2026-12-01\n"
	if _, err := parse(good); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"columns":   "^x\t1\n",
		"pattern":   strings.Replace(good, "^x", "(", 1),
		"number":    strings.Replace(good, "\t2\t", "\tfree\t", 1),
		"negative":  strings.Replace(good, "\t2\t", "\t-2\t", 1),
		"no source": strings.Replace(good, "https://example.com", "", 1),
		"no date":   strings.Replace(good, "2026-12-01", "", 1),
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestRowsReachable(t *testing.T) {
	// Every embedded row must be reachable: no earlier, broader pattern
	// may shadow it for the name it was written for. The name is the
	// pattern with its regexp syntax resolved to one example.
	rows := Default().Rows()
	for i, r := range rows {
		ex := example(r.Pattern)
		for j := 0; j < i; j++ {
			if p := rows[j]; regexp.MustCompile(p.Pattern).MatchString(ex) {
				t.Errorf("row %q (example %q) is shadowed by row %q", r.Pattern, ex, p.Pattern)
				break
			}
		}
		if !regexp.MustCompile(r.Pattern).MatchString(ex) {
			t.Errorf("example %q does not match its own row %q", ex, r.Pattern)
		}
	}
}

func example(pattern string) string {
	s := strings.TrimPrefix(pattern, "^")
	repl := strings.NewReplacer(`(\.\d+)?`, "", `\.`, ".", `($|-)`, "", `[1-9]`, "1", `[67]`, "6", `[6-9]`, "6", `[23]`, "2")
	s = repl.Replace(s)
	if i := strings.IndexByte(s, '('); i >= 0 {
		j := strings.IndexByte(s, ')')
		alt := strings.Split(s[i+1:j], "|")[0]
		s = s[:i] + alt + s[j+1:]
	}
	return s
}
