package report

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"
)

// TestBrowserChartDatesUsageAsUsageDoes: the chart over time puts tokens
// and cost on the day of their requests in the reader's zone, as `usage
// daily` dates them in the machine's, so that a session across midnight
// is on both days; sessions count on the day they started.
func TestBrowserChartDatesUsageAsUsageDoes(t *testing.T) {
	b := browser(t)
	// Half an hour ahead of a whole hour: a slot of an hour would put
	// half of a day's quarter hours on the day before.
	loc := time.FixedZone("IST", 5*3600+30*60)
	var maps []*Map
	var usage []UsageSession
	across := 0
	for seed := uint64(1); seed <= 16; seed++ {
		m := synthMap(seed, 400)
		if seed%2 == 0 { // ten minutes before a midnight of the reader's
			m.Session.StartedAt = time.Date(2026, 3, int(seed), 23, 50, 0, 0, loc).UTC().Format(time.RFC3339Nano)
		}
		start, _ := m.Start()
		last := start
		for i := range m.Events {
			if e := &m.Events[i]; e.Kind == "llm" {
				last = start.Add(time.Duration(e.T) * time.Millisecond)
			}
		}
		if start.In(loc).Format(time.DateOnly) != last.In(loc).Format(time.DateOnly) {
			across++
		}
		maps = append(maps, m)
		usage = append(usage, UsageOf(m))
	}
	if across < 4 {
		t.Fatalf("only %d sessions have requests on two days: the test shows nothing", across)
	}
	want := UsageOfSessions(usage, Daily, loc, Window{})
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "16 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	if err := w.Call(ctx, "Emulation.setTimezoneOverride", map[string]any{"timezoneId": "Asia/Kolkata"}, nil); err != nil {
		t.Fatal(err)
	}
	w.load(t, ctx, page)
	for _, metric := range []string{"tokens", "cost"} {
		for _, stack := range []string{"model", "agent"} {
			var days map[string]float64
			if err := w.Eval(ctx, `((metric, stack) => { const set = (q, v) => { const el = document.querySelector(q); el.value = v; el.dispatchEvent(new Event('change', {bubbles: true})); };
				set('#unit', 'day'); set('#metric', metric); set('#stack', stack);
				return Object.fromEntries([...document.querySelectorAll('#daychart details tbody tr')].filter(tr => tr.children.length > 2)
					.map(tr => [tr.children[0].textContent, +tr.children[tr.children.length - 2].dataset.v])); })(`+jsString(metric)+`, `+jsString(stack)+`)`, &days); err != nil {
				t.Fatal(err)
			}
			rows := 0
			for _, r := range want.Rows {
				v := float64(r.Total)
				if metric == "cost" {
					v = r.CostUSD
				}
				if v == 0 {
					continue
				}
				rows++
				if got := days[r.Key]; math.Abs(got-v) > 1e-4*max(1, v) {
					t.Errorf("%s stacked by %s on %s: the chart %v, usage daily %v", metric, stack, r.Key, got, v)
				}
			}
			if len(days) != rows {
				t.Errorf("%s stacked by %s: the chart has %d days, usage daily %d: %v", metric, stack, len(days), rows, days)
			}
		}
	}
	var sessions map[string]float64
	if err := w.Eval(ctx, `(() => { const set = (q, v) => { const el = document.querySelector(q); el.value = v; el.dispatchEvent(new Event('change', {bubbles: true})); };
		set('#metric', 'sessions'); set('#stack', 'model');
		return Object.fromEntries([...document.querySelectorAll('#daychart details tbody tr')].filter(tr => tr.children.length > 2)
			.map(tr => [tr.children[0].textContent, +tr.children[tr.children.length - 2].dataset.v])); })()`, &sessions); err != nil {
		t.Fatal(err)
	}
	for _, m := range maps {
		start, _ := m.Start()
		sessions[start.In(loc).Format(time.DateOnly)]--
	}
	for d, n := range sessions {
		if n != 0 {
			t.Errorf("sessions on %s: the chart counts %v more than start there", d, n)
		}
	}
	w.checkQuiet(t, filepath.Clean(page))
}
