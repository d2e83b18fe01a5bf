package report

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
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

// TestBrowserChartOfNoUsage: drawn as tokens or cost, the chart over time
// of sessions none of which recorded usage (Cursor's) says so, as it says
// that nothing was priced, rather than draw an empty grid on a scale of 0
// to 1 that nothing measured.
func TestBrowserChartOfNoUsage(t *testing.T) {
	b := browser(t)
	maps, cursor, _ := viewMaps()
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "60 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.load(t, ctx, page)
	for _, repo := range []string{cursor[0].Repos[0].Name, ""} {
		for _, metric := range []string{"tokens", "cost", "sessions"} {
			var got struct {
				Bars    int
				Message string
			}
			if err := w.Eval(ctx, `((repo, metric) => { const set = (q, v) => { const el = document.querySelector(q); el.value = v; el.dispatchEvent(new Event('change', {bubbles: true})); };
				set('[data-f=repo]', repo); set('#metric', metric);
				const p = document.querySelector('#daychart > p');
				return {bars: document.querySelectorAll('#daychart svg rect:not([fill=transparent])').length, message: p ? p.textContent : ''}; })(`+jsString(repo)+`, `+jsString(metric)+`)`, &got); err != nil {
				t.Fatal(err)
			}
			switch {
			case repo == "" || metric == "sessions":
				if got.Bars == 0 || got.Message != "" {
					t.Errorf("repository %q, the chart of %s draws %d bars and says %q", repo, metric, got.Bars, got.Message)
				}
			case got.Bars > 0 || !strings.HasPrefix(got.Message, "No "+metric+" to draw") || !strings.Contains(got.Message, "recorded no token usage"):
				t.Errorf("the sessions of %s recorded no usage: the chart of %s draws %d bars and says %q", repo, metric, got.Bars, got.Message)
			}
		}
	}
	w.checkQuiet(t, page)
}

// TestBrowserChartDateLabels: the dates under the chart over time are
// never ambiguous and fit a phone: a day or a week by its month's name
// ("Dec 29"), the year on the first and where it changes ("Jan 1 ’26"),
// never a two-digit year first ("25-12-29", read as a day by some); no
// two labels overlap. A week's bar is the week of its Monday, and its
// tooltip and its row of the table say so ("week of 2025-12-29").
func TestBrowserChartDateLabels(t *testing.T) {
	b := browser(t)
	var maps []*Map
	for i := range 24 {
		m := synthMap(uint64(300+i), 40)
		m.Session.StartedAt = time.Date(2025, 12, 20+i, 10, 0, 0, 0, time.UTC).Format(time.RFC3339)
		maps = append(maps, m)
	}
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "24 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	label := regexp.MustCompile(`^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([1-9]|[12][0-9]|3[01])( ’(\d\d))?$`)
	for _, width := range []int{1400, 390} {
		w := openPage(t, ctx, b, width, 900)
		if err := w.Call(ctx, "Emulation.setTimezoneOverride", map[string]any{"timezoneId": "UTC"}, nil); err != nil {
			t.Fatal(err)
		}
		w.load(t, ctx, page)
		for _, unit := range []string{"day", "week"} {
			var got struct {
				Labels, Overlaps, Rows []string
				Tip                    string
			}
			if err := w.Eval(ctx, `(unit => { const u = document.querySelector('#unit'); u.value = unit; u.dispatchEvent(new Event('change'));
				const texts = [...document.querySelectorAll('#daychart svg text[text-anchor=middle]')], boxes = texts.map(t => t.getBBox());
				const overlaps = []; for (let i = 1; i < boxes.length; i++) if (boxes[i].x < boxes[i - 1].x + boxes[i - 1].width) overlaps.push(texts[i - 1].textContent + ' / ' + texts[i].textContent);
				const bar = document.querySelector('#daychart svg rect[fill]:not([fill=transparent])'), r = bar.getBoundingClientRect();
				bar.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + 1, clientY: r.top + 1}));
				const tip = document.querySelector('#tip b').textContent; document.querySelector('#tip').style.display = 'none';
				return {labels: texts.map(t => t.textContent), overlaps, tip, rows: [...document.querySelectorAll('#daychart details tbody tr')].map(tr => tr.children[0].textContent)}; })(`+jsString(unit)+`)`, &got); err != nil {
				t.Fatal(err)
			}
			at := fmt.Sprintf("at %d px, per %s, ", width, unit)
			if len(got.Labels) < 2 {
				t.Errorf("%sthe chart has the date labels %q", at, got.Labels)
			}
			year := ""
			for i, l := range got.Labels {
				p := label.FindStringSubmatch(l)
				if p == nil {
					t.Errorf("%sthe date label %q is not a month's name and a day", at, l)
					continue
				}
				if i == 0 && p[4] == "" {
					t.Errorf("%sthe first date label %q has no year", at, l)
				}
				if p[4] != "" {
					year = p[4]
				} else if p[1] == "Jan" && year == "25" {
					t.Errorf("%sthe date label %q, the first of 2026, has no year (labels %q)", at, l, got.Labels)
					year = "26"
				}
			}
			if len(got.Overlaps) > 0 {
				t.Errorf("%sthe date labels %q overlap", at, got.Overlaps)
			}
			if unit == "week" {
				for _, r := range append([]string{got.Tip}, got.Rows...) {
					d, err := time.Parse(time.DateOnly, strings.TrimPrefix(r, "week of "))
					if !strings.HasPrefix(r, "week of ") || err != nil || d.Weekday() != time.Monday {
						t.Errorf("%sa bar's tooltip or table row is named %q: want the week of its Monday (week of 2025-12-29)", at, r)
					}
				}
			} else if d, err := time.Parse(time.DateOnly, got.Tip); err != nil || d.Year() != 2025 {
				t.Errorf("%sthe first bar's tooltip is headed %q, want its date", at, got.Tip)
			}
		}
		w.checkQuiet(t, page)
	}
}
