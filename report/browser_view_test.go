package report

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

// writePage writes the report of maps into dir/name and returns its path.
func writePage(t *testing.T, dir, name string, maps []*Map, opt Options) string {
	t.Helper()
	page := filepath.Join(dir, name)
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, maps, opt); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return page
}

// longPath is a file whose directories are longer than any cell: what
// tells it from its neighbours is its name, at the end.
const longPath = "internal/platform/observability/exporters/opentelemetry/collector/pipeline/stages/distinguishing_name.go"

// viewMaps are 60 sessions in 60 repositories (more than the table by
// repository keeps), three of them Cursor sessions whose log recorded no
// usage for their requests, one costing $7,474.66, one reading and editing
// a file of a long path more than any other file is.
func viewMaps() (maps []*Map, cursor []*Map, costly *Map) {
	day0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i := range 60 {
		m := synthMap(uint64(100+i), 60+i%40)
		if m.Session.AgentTool == "cursor" { // the Cursor sessions are the three below
			m.Session.AgentTool = "codex"
		}
		m.Repos[0].Name = fmt.Sprintf("repo-%02d", i)
		m.Session.StartedAt = day0.Add(time.Duration(i) * 7 * time.Hour).Format(time.RFC3339)
		maps = append(maps, m)
	}
	for i, m := range maps[10:13] {
		m.Session.AgentTool, m.Session.Models = "cursor", []string{"unknown"}
		m.Session.ID = fmt.Sprintf("local:cursor:synthetic-cursor-%d", i)
		for i := range m.Events {
			if e := &m.Events[i]; e.Kind == "llm" {
				e.Model, e.In, e.CW, e.CR, e.Out, e.Cost, e.Latency = "", 0, 0, 0, 0, 0, nil
			}
		}
		m.Totals.Tokens, m.Totals.OutputTokens, m.Totals.CostUSD, m.Totals.MaxContext = 0, 0, 0, 0
		for j := range m.Agents {
			m.Agents[j].Tokens, m.Agents[j].Cost = 0, 0
		}
		cursor = append(cursor, m)
	}
	// a verb that never fails
	last := maps[0].Events[len(maps[0].Events)-1]
	dur := int64(20)
	maps[0].Events = append(maps[0].Events, mapfile.Event{Seq: last.Seq + 1, T: last.T + 100, Kind: "exec", Tool: "Bash", Verb: "echo", Cat: "shell", Dur: &dur})
	maps[0].Totals.Calls++
	costly = maps[20]
	costly.Totals.CostUSD = 7474.66
	f := len(maps[30].Files)
	maps[30].Files = append(maps[30].Files, mapfile.File{ID: f, Repo: "r0", Path: longPath, Reads: 400, Edits: 300},
		mapfile.File{ID: f + 1, Repo: "r0", Path: "schema/generated.go", Edits: 350}) // ranked second, by its edits alone
	return maps, cursor, costly
}

// TestBrowserOverviewTables checks in headless Chromium what the overview's
// tables and figures say where they once misled: a table cut to its top
// rows says so; usage a log did not record reads "not recorded", never 0
// or $0.00; shell verbs that never failed nor were retried are not listed;
// costs have thousands separators; a file's bar draws the reads and edits
// it is ranked by, with a legend, and a long path loses its middle, not
// its file name; the session list sorts by its columns and jumps to a
// page; the page says when and in which zones it was made; the chart over
// time keeps its labels readable on a phone; and printed, no table is cut.
func TestBrowserOverviewTables(t *testing.T) {
	b := browser(t)
	maps, cursor, costly := viewMaps()
	dir := t.TempDir()
	jst := time.FixedZone("JST", 9*3600)
	page := writePage(t, dir, "report.html", maps, Options{Scope: "60 sessions", Generated: time.Date(2026, 3, 9, 14, 5, 0, 0, jst)})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.theme(t, ctx, "light")
	if err := w.Call(ctx, "Emulation.setTimezoneOverride", map[string]any{"timezoneId": "Europe/Paris"}, nil); err != nil {
		t.Fatal(err)
	}
	w.load(t, ctx, page)

	const cards = `const card = title => [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === title);
		const rows = title => [...card(title).querySelectorAll('.scroll tbody tr')].map(tr => [...tr.children].map(td => td.textContent));
		const note = title => { const s = card(title).querySelector('h2 small'); return s ? s.textContent : ''; };
		const text = q => (document.querySelector(q) || {}).textContent || '';`
	var ov struct {
		RepoRows                 int
		RepoNote, AgentNote      string
		Agents                   map[string][]string
		TokensSub, CostText      string
		Verbs                    [][]string
		Footer, Zone, StartedHdr string
	}
	if err := w.Eval(ctx, `(() => { `+cards+`
		return {repoRows: rows('By repository').length, repoNote: note('By repository'), agentNote: note('By agent'),
			agents: Object.fromEntries(rows('By agent').map(r => [r[0], r.slice(1)])), verbs: rows('Shell verbs that fail or are retried'),
			tokensSub: text('[data-kpi=tokens] .sub'), costText: text('[data-kpi=cost] b'), footer: text('#foot'), zone: text('#zone'),
			startedHdr: text('#sessions thead th')}; })()`, &ov); err != nil {
		t.Fatal(err)
	}
	// A table cut at its top rows says so.
	if ov.RepoRows != 50 || !strings.Contains(ov.RepoNote, "top 50 of 60") {
		t.Errorf("the table by repository lists %d of 60 repositories, its note reads %q; want 50 and \"top 50 of 60\"", ov.RepoRows, ov.RepoNote)
	}
	// Usage that was not recorded is not 0.
	if c := ov.Agents["cursor"]; len(c) < 3 || c[1] != "not recorded" || c[2] != "not recorded" {
		t.Errorf("the By agent row of cursor, whose sessions recorded no usage, reads %q; want tokens and cost \"not recorded\"", c)
	}
	for _, s := range []string{ov.TokensSub, ov.AgentNote} {
		if !strings.Contains(s, "3 sessions recorded no usage") {
			t.Errorf("the tokens card and the By agent card say %q and %q, not that 3 sessions recorded no usage", ov.TokensSub, ov.AgentNote)
			break
		}
	}
	// Thousands separators.
	if !strings.HasPrefix(ov.CostText, "$7,") {
		t.Errorf("the cost card reads %q, want a thousands separator", ov.CostText)
	}
	// Only the verbs that failed or were retried: never "echo".
	quiet := map[string]bool{}
	for _, m := range maps {
		for _, e := range m.Events {
			if e.Verb != "" {
				quiet[e.Verb] = quiet[e.Verb] || e.Err || e.RetryOf != nil
			}
		}
	}
	if len(ov.Verbs) == 0 {
		t.Error("no shell verb is listed as failing or retried")
	}
	for _, r := range ov.Verbs {
		if len(r) < 4 || (r[2] == "0" && r[3] == "0") || !quiet[r[0]] {
			t.Errorf("the shell verbs that fail or are retried list %q", r)
		}
	}
	// The zones: the generating machine's for the scope, the browser's for the times.
	if !strings.Contains(ov.Footer, "Generated 2026-03-09 14:05 UTC+9 (JST)") || ov.Zone != "Europe/Paris" || !strings.Contains(ov.StartedHdr, "Europe/Paris") {
		t.Errorf("the footer reads %q (zone %q) and the list's start column %q; want the generation time in UTC+9 (JST) and the times in Europe/Paris", ov.Footer, ov.Zone, ov.StartedHdr)
	}

	// The files: the bar draws reads and edits end to end, with a legend;
	// at 560 px wide the long path keeps its file name whole.
	var fb struct {
		Legend string
		Bars   [][]float64 // per row: reads, edits, and the width of each segment
		Title  string
	}
	if err := w.Eval(ctx, `(() => { `+cards+`
		const c = card('Files read and edited most'), trs = [...c.querySelectorAll('tbody tr')];
		return {legend: (c.querySelector('.legend') || {}).textContent || '', title: trs[0].querySelector('td.file').title,
			bars: trs.map(tr => { const segs = [...tr.querySelectorAll('.barcell .bar')].map(b => b.getBoundingClientRect().width), n = tr.querySelectorAll('td.n');
				return [+n[0].dataset.v, +n[1].dataset.v, ...segs]; })}; })()`, &fb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fb.Legend, "reads") || !strings.Contains(fb.Legend, "edits") {
		t.Errorf("the files table's bar legend reads %q", fb.Legend)
	}
	if !strings.HasSuffix(fb.Title, longPath) {
		t.Errorf("the most used file is %q, want the one of %s", fb.Title, longPath)
	}
	if len(fb.Bars) > 0 {
		top := fb.Bars[0]
		full := 0.0
		for _, v := range top[2:] {
			full += v
		}
		for _, r := range fb.Bars {
			var got float64
			for _, v := range r[2:] {
				got += v
			}
			if want := full * (r[0] + r[1]) / (top[0] + top[1]); got < want-2 || got > want+2 {
				t.Errorf("the bar of a file of %v reads and %v edits is %.1f px, want %.1f (the top file's %v reads and edits draw %.1f)", r[0], r[1], got, want, top[0]+top[1], full)
			}
		}
	}
	narrow := openPage(t, ctx, b, 560, 900)
	narrow.load(t, ctx, page)
	var name struct {
		Base, Title       string
		BaseRight, Right  float64
		Clipped           bool
		LabelPx, ViewBoxW float64
	}
	if err := narrow.Eval(ctx, `(() => { const td = [...document.querySelectorAll('.card td.name')].find(td => td.title.endsWith('distinguishing_name.go'));
		const base = td.querySelector('.base') || td;
		return {base: base.textContent, title: td.title, baseRight: base.getBoundingClientRect().right, right: td.getBoundingClientRect().right, clipped: base.scrollWidth > base.clientWidth + 0.5}; })()`, &name); err != nil {
		t.Fatalf("the long path's cell: %v", err)
	}
	if name.Base != "distinguishing_name.go" || name.Clipped || name.BaseRight > name.Right+0.5 || !strings.HasSuffix(name.Title, longPath) {
		t.Errorf("at 560 px the long path shows its file name %q (clipped %v, ends at %.0f of a cell ending at %.0f), title %q", name.Base, name.Clipped, name.BaseRight, name.Right, name.Title)
	}
	narrow.checkQuiet(t, page)

	// The chart over time on a phone: its labels keep a readable size.
	phone := openPage(t, ctx, b, 375, 800)
	phone.load(t, ctx, page)
	var label float64
	if err := phone.Eval(ctx, `Math.min(...[...document.querySelectorAll('#daychart svg text')].map(t => t.getBoundingClientRect().height))`, &label); err != nil {
		t.Fatal(err)
	}
	if label < 10 {
		t.Errorf("at 375 px wide the chart over time's labels are %.1f px high", label)
	}
	var axis []string
	if err := phone.Eval(ctx, chartAxis+`(['day', 'week'], ['sessions', 'tokens', 'cost'])`, &axis); err != nil {
		t.Fatal(err)
	}
	for _, s := range axis {
		t.Errorf("at 375 px, the chart over time, %s", s)
	}
	phone.shot(t, ctx, "overview-phone.png", false)
	phone.checkQuiet(t, page)

	// The session list: sorted by cost, then the other way; a page jump.
	order := slices.Clone(maps)
	slices.SortStableFunc(order, func(a, b *Map) int {
		return cmp.Or(cmp.Compare(b.Session.StartedAt, a.Session.StartedAt), cmp.Compare(a.Session.ID, b.Session.ID))
	})
	costOf := func(i int) float64 {
		if m := order[i]; m.Totals.Requests > 0 && m.Totals.Tokens == 0 {
			return -1 // not recorded: below every cost
		}
		return order[i].Totals.CostUSD
	}
	var list struct {
		Desc, Asc, Jumped []int
		Pager, Cells      string
	}
	if err := w.Eval(ctx, `(async () => { const ids = () => [...document.querySelectorAll('#sessions tbody tr[data-s]')].map(tr => +tr.dataset.s);
		const sort = k => { const b = document.querySelector('#sessions button[data-sort=' + k + ']'); if (b) b.click(); };
		sort('cost'); const desc = ids(); sort('cost'); const asc = ids();
		const cells = [...document.querySelectorAll('#sessions tbody tr[data-s]')].map(tr => tr.children[7].textContent + '/' + tr.children[8].textContent).join(' ');
		const j = document.querySelector('#pagejump'); const jumped = j ? (j.value = '2', j.dispatchEvent(new Event('change')), ids()) : [];
		const r = {desc, asc, jumped, cells, pager: document.querySelector('.pager span').textContent};
		sort('started'); sort('started'); return r; })()`, &list); err != nil {
		t.Fatal(err)
	}
	sorted := func(idx []int, desc bool) bool {
		return slices.IsSortedFunc(idx, func(a, b int) int {
			if desc {
				return cmp.Compare(costOf(b), costOf(a))
			}
			return cmp.Compare(costOf(a), costOf(b))
		})
	}
	if len(list.Desc) != 50 || !sorted(list.Desc, true) || order[list.Desc[0]] != costly {
		t.Errorf("sorted by cost, the list's first page is %v, not the costliest first", list.Desc)
	}
	if len(list.Asc) != 50 || !sorted(list.Asc, false) || !slices.Contains(cursor, order[list.Asc[0]]) {
		t.Errorf("sorted by cost the other way, the list's first page is %v, not the cheapest (usage not recorded) first", list.Asc)
	}
	if len(list.Jumped) != 10 || !strings.HasPrefix(list.Pager, "page 2 of 2") || !sorted(list.Jumped, false) {
		t.Errorf("a jump to page 2 shows %d sessions, the pager reads %q", len(list.Jumped), list.Pager)
	}
	if !strings.Contains(list.Cells, "not recorded/not recorded") {
		t.Errorf("the session list's tokens and cost of the Cursor sessions read %q", list.Cells)
	}

	// A Cursor session's page: its usage and its requests' are not recorded.
	openByClick(t, ctx, w, cursor[0].Session.NativeID())
	var sess struct {
		Tokens, Cost, In, Details string
	}
	req := slices.IndexFunc(cursor[0].Events, func(e mapfile.Event) bool { return e.Kind == "llm" })
	if err := w.Eval(ctx, fmt.Sprintf(`(() => { const f = k => document.querySelector('[data-field=' + k + '] b').textContent; window.agentmap.timeline.point(%d);
		return {tokens: f('tokens'), cost: f('cost'), in: f('in'), details: document.querySelector('#details').textContent}; })()`, req), &sess); err != nil {
		t.Fatal(err)
	}
	if sess.Tokens != "not recorded" || sess.Cost != "not recorded" || sess.In != "not recorded" ||
		!strings.Contains(sess.Details, "tokensnot recorded") || strings.Contains(sess.Details, "input0") {
		t.Errorf("a Cursor session's header reads tokens %q, cost %q, input %q; a request's details %q", sess.Tokens, sess.Cost, sess.In, sess.Details)
	}
	w.checkQuiet(t, page)

	// Printed: no scroll box cuts a table, no table is wider than its
	// card, and the controls are gone; on the overview and a session page
	// of many files.
	many := synthMap(7, 900)
	for i := range 40 {
		many.Files = append(many.Files, mapfile.File{ID: len(many.Files), Repo: "r0", Path: fmt.Sprintf("pkg/extra/file%02d.go", i), Reads: 1})
	}
	onePage := writePage(t, dir, "one.html", []*Map{many}, Options{})
	for _, c := range []struct{ file, hash string }{{page, ""}, {onePage, "#s/0"}} {
		p := openPage(t, ctx, b, 760, 1000)
		p.load(t, ctx, c.file)
		if c.hash != "" {
			p.Eval(ctx, `location.hash = '`+c.hash+`'`, nil)
			if err := p.WaitFor(ctx, `document.body.dataset.view === 'session'`, 30*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Call(ctx, "Emulation.setEmulatedMedia", map[string]any{"media": "print"}, nil); err != nil {
			t.Fatal(err)
		}
		var pr struct {
			Cut     []string
			Visible []string
		}
		if err := p.Eval(ctx, `(() => { const cut = [];
			for (const s of document.querySelectorAll('.card .scroll, .card .scroll-x')) {
				if (s.closest('details:not([open])')) continue;
				const title = s.closest('.card').querySelector('h2').firstChild.textContent, card = s.closest('.card').getBoundingClientRect();
				if (s.scrollHeight > s.clientHeight + 1) cut.push(title + ': ' + s.clientHeight + ' px of ' + s.scrollHeight + ' shown');
				if (s.scrollWidth > s.clientWidth + 2 || s.querySelector('table').getBoundingClientRect().right > card.right + 1) cut.push(title + ': ' + s.clientWidth + ' px wide of ' + s.scrollWidth);
			}
			const visible = ['#filters', '#search', '#zin', '.pager button', '#metric'].filter(q => { const e = document.querySelector(q); return e && getComputedStyle(e).display !== 'none'; });
			return {cut, visible}; })()`, &pr); err != nil {
			t.Fatal(err)
		}
		for _, s := range pr.Cut {
			t.Errorf("printed %s%s, %s", filepath.Base(c.file), c.hash, s)
		}
		if len(pr.Visible) > 0 {
			t.Errorf("printed %s%s, the controls %v show", filepath.Base(c.file), c.hash, pr.Visible)
		}
		p.checkQuiet(t, c.file)
	}
}

// TestBrowserEmptyReport: a report of no session says so, and how to get
// sessions, instead of a dashboard of empty tables; one whose filters kept
// none of the sessions there are says that none matched them, not that
// there are none to be mapped with agentmap scan.
func TestBrowserEmptyReport(t *testing.T) {
	b := browser(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		opt       Options
		want, not []string
	}{
		{Options{Scope: "0 sessions from the local map store"}, []string{"No sessions yet", "agentmap scan"}, []string{"No session matches"}},
		{Options{Scope: "0 sessions from the local map store, agent gemini", Filtered: true},
			[]string{"No session matches", "agent gemini", "agentmap list"}, []string{"No sessions yet", "agentmap scan"}},
	} {
		page := writePage(t, dir, fmt.Sprintf("empty-%v.html", c.opt.Filtered), nil, c.opt)
		w := openPage(t, ctx, b, 1000, 700)
		w.load(t, ctx, page)
		var got struct {
			Text           string
			Cards, Filters int
		}
		if err := w.Eval(ctx, `({text: (document.querySelector('#empty') || {}).textContent || '', cards: document.querySelectorAll('.card table').length,
			filters: document.querySelector('#filters').offsetHeight})`, &got); err != nil {
			t.Fatal(err)
		}
		if got.Cards != 0 || got.Filters != 0 {
			t.Errorf("the report of no session (%s) has %d tables and filters %d px high", c.opt.Scope, got.Cards, got.Filters)
		}
		for _, s := range c.want {
			if !strings.Contains(got.Text, s) {
				t.Errorf("the report of no session (%s, filtered %v) reads %q: want %q", c.opt.Scope, c.opt.Filtered, got.Text, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(got.Text, s) {
				t.Errorf("the report of no session (%s, filtered %v) reads %q: it says %q", c.opt.Scope, c.opt.Filtered, got.Text, s)
			}
		}
		if !c.opt.Filtered {
			w.shot(t, ctx, "empty.png", false)
		}
		w.checkQuiet(t, page)
	}
}

// TestBrowserFiguresAtAUnitsEdge: a figure that rounds up to the next unit
// is written in that unit (999,600 tokens read 1.0M, never 1000k; 59.6 s
// reads 1m00s, never 60s), and one just under it keeps its own.
func TestBrowserFiguresAtAUnitsEdge(t *testing.T) {
	b := browser(t)
	cases := []struct {
		tokens          int64
		durMs           int64
		wantTok, wantMs string
	}{
		{999_600, 9_960, "1.0M", "10s"},
		{999_960_000, 59_600, "1.00G", "1m00s"},
		{999_499, 9_940, "999k", "9.9s"},
		{999_940_000, 59_400, "999.9M", "59s"},
		{9_999, 3_599_700, "9,999", "1h00m"},
		{10_000, 119_600, "10k", "2m00s"},
	}
	var maps []*Map
	for i, c := range cases {
		m := synthMap(uint64(400+i), 30)
		m.Session.ID = fmt.Sprintf("local:claude-code:edge-%d", i)
		m.Session.StartedAt = time.Date(2026, 3, 2, 9, i, 0, 0, time.UTC).Format(time.RFC3339)
		m.Totals.Tokens, m.Session.DurationMs = c.tokens, c.durMs
		maps = append(maps, m)
	}
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "edges"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.load(t, ctx, page)
	var rows map[string][2]string
	if err := w.Eval(ctx, `Object.fromEntries([...document.querySelectorAll('#sessions tbody tr[data-s]')].map(tr => [tr.children[1].querySelector('a').title, [tr.children[7].textContent, tr.children[5].textContent]]))`, &rows); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		got, ok := rows[maps[i].Session.NativeID()]
		if !ok {
			t.Errorf("the session list has no row of %s", maps[i].Session.NativeID())
			continue
		}
		if got[0] != c.wantTok {
			t.Errorf("%d tokens read %q, want %q", c.tokens, got[0], c.wantTok)
		}
		if got[1] != c.wantMs {
			t.Errorf("%d ms read %q, want %q", c.durMs, got[1], c.wantMs)
		}
	}
	w.checkQuiet(t, page)
}

// TestBrowserSessionListControls: the filters list their names as a reader
// looks for them, case aside and numbers by their value (app2 before
// app10, agent-tail beside app0, not after every capital); a page number
// out of range typed in "go to page" goes to the nearest page there is and
// the field then says which; and the session list's cells cut at their
// width (repositories, models) have their whole text as a tooltip.
func TestBrowserSessionListControls(t *testing.T) {
	b := browser(t)
	repos := []string{"app10", "CC-test", "app2", "Lotto645", "agent-tail", "app0", "OpenPrintKit", "app19", "app1"}
	var maps []*Map
	for i := range 60 {
		m := synthMap(uint64(500+i), 30)
		m.Session.StartedAt = time.Date(2026, 3, 2, 9, i, 0, 0, time.UTC).Format(time.RFC3339)
		m.Repos[0].Name = repos[i%len(repos)]
		maps = append(maps, m)
	}
	// the newest session, first in the list, has more repositories and
	// models than their cells show
	long := maps[len(maps)-1]
	long.Repos = append(long.Repos, mapfile.Repo{ID: "r1", Name: "observability-platform-collector"}, mapfile.Repo{ID: "r2", Name: "internal-developer-portal"})
	long.Session.Models = []string{"claude-sonnet-4-5", "claude-opus-4-6", "claude-haiku-4-5", "gpt-5-codex"}
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "60 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.load(t, ctx, page)
	var options []string
	if err := w.Eval(ctx, `[...document.querySelectorAll('[data-f=repo] option')].map(o => o.value).filter(v => v)`, &options); err != nil {
		t.Fatal(err)
	}
	want := []string{"agent-tail", "app0", "app1", "app2", "app10", "app19", "CC-test", "internal-developer-portal", "Lotto645", "observability-platform-collector", "OpenPrintKit"}
	if !slices.Equal(options, want) {
		t.Errorf("the repository filter lists %q, want %q", options, want)
	}

	type pager struct{ Shown, Field string }
	jump := func(v string) pager {
		t.Helper()
		var p pager
		if err := w.Eval(ctx, `(v => { const j = document.querySelector('#pagejump'); j.value = v; j.dispatchEvent(new Event('change'));
			return {shown: document.querySelector('.pager span').textContent, field: document.querySelector('#pagejump').value}; })(`+jsString(v)+`)`, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ from, to, page string }{{"2", "0", "1"}, {"2", "-5", "1"}, {"1", "99", "2"}, {"2", "", "2"}} {
		jump(c.from)
		got := jump(c.to)
		if !strings.HasPrefix(got.Shown, "page "+c.page+" of 2") || got.Field != c.page {
			t.Errorf("from page %s, go to page %q shows %q, the field reads %q: want page %s in both", c.from, c.to, got.Shown, got.Field, c.page)
		}
	}

	jump("1")
	var cells []struct {
		Text, Title string
		Cut         bool
	}
	if err := w.Eval(ctx, `[...document.querySelector('#sessions tbody tr[data-s]').children].slice(3, 5).map(td => ({text: td.textContent, title: td.title, cut: td.scrollWidth > td.clientWidth}))`, &cells); err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if !c.Cut {
			t.Errorf("the session list's cell %q is not cut: the test shows nothing", c.Text)
		}
		if c.Title != c.Text {
			t.Errorf("the session list's cell %q, cut at its width, has the tooltip %q", c.Text, c.Title)
		}
	}
	w.checkQuiet(t, page)
}

// timelineMap is a session of two lanes whose main lane has a delay with
// the very span of the tool call it waited on.
func timelineMap() (m *Map, call, delay int) {
	m = synthMap(11, 400)
	if len(m.Agents) < 2 {
		m.Agents = append(m.Agents, mapfile.Agent{ID: "sa-0123456789ab", Kind: "subagent", Parent: "main", SubagentType: "Explore"})
		for i := range m.Events {
			if i%5 == 1 {
				m.Events[i].Agent = "sa-0123456789ab"
			}
		}
	}
	call = slices.IndexFunc(m.Events, func(e mapfile.Event) bool {
		return e.Kind == "exec" && e.Lane() == "main" && e.Dur != nil && *e.Dur > 1000 && !e.Err && e.RetryOf == nil
	})
	c := m.Events[call]
	d := mapfile.Event{T: c.T, Kind: "delay", Agent: c.Agent, Cause: "tool", Ms: *c.Dur}
	m.Events = slices.Insert(m.Events, call+1, d)
	for i := range m.Events {
		m.Events[i].Seq = i
		if r := m.Events[i].RetryOf; r != nil && *r > call {
			v := *r + 1
			m.Events[i].RetryOf = &v
		}
	}
	m.Totals.Delays++
	m.Totals.DelayMs += d.Ms
	return m, call, call + 1
}

// TestBrowserTimelineInput: the timeline is usable from the keyboard
// (arrows move from mark to mark and lane to lane, showing the details
// pane; Home and End; Shift+arrows and Page Up/Down pan) and on a touch
// screen (a drag pans, a pinch zooms, a tap selects); and a delay with its
// tool call's very span can be pointed at, as can the call.
func TestBrowserTimelineInput(t *testing.T) {
	b := browser(t)
	m, call, delay := timelineMap()
	page := writePage(t, t.TempDir(), "session.html", []*Map{m}, Options{Single: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1200, 900)
	w.load(t, ctx, page)
	type state struct {
		Seq    int
		Lane   int
		T0, T1 float64
		Focus  bool
	}
	read := func() state {
		t.Helper()
		var s state
		if err := w.Eval(ctx, `(() => { const tl = window.agentmap.timeline, dl = document.querySelector('#details dl');
			return {seq: dl ? +dl.dataset.seq : -1, lane: dl ? tl.ev[+dl.dataset.seq].l : -1, t0: tl.t0, t1: tl.t1, focus: document.activeElement === tl.c}; })()`, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	key := func(k string, shift bool) state {
		t.Helper()
		mod := 0
		if shift {
			mod = 8
		}
		for _, typ := range []string{"rawKeyDown", "keyUp"} {
			if err := w.Call(ctx, "Input.dispatchKeyEvent", map[string]any{"type": typ, "key": k, "code": k, "modifiers": mod}, nil); err != nil {
				t.Fatal(err)
			}
		}
		return read()
	}
	var lanes [][]int
	if err := w.Eval(ctx, `(() => { const c = document.querySelector('#timeline'); c.scrollIntoView({block: 'center'}); c.focus(); return window.agentmap.timeline.lanes; })()`, &lanes); err != nil {
		t.Fatal(err)
	}
	var hint string
	w.Eval(ctx, `document.querySelector('#tlkeys').textContent`, &hint)
	for _, k := range []string{"←", "↑", "Home", "End", "Shift", "Page Up"} {
		if !strings.Contains(hint, k) {
			t.Errorf("the timeline's key hint %q does not name %s", hint, k)
		}
	}
	main := lanes[0]
	if s := key("ArrowRight", false); s.Seq != main[0] || !s.Focus {
		t.Errorf("→ on the timeline shows event %d (focus %v), want the main lane's first, %d", s.Seq, s.Focus, main[0])
	}
	if s := key("ArrowRight", false); s.Seq != main[1] {
		t.Errorf("→ again shows event %d, want %d", s.Seq, main[1])
	}
	if s := key("ArrowLeft", false); s.Seq != main[0] {
		t.Errorf("← shows event %d, want %d", s.Seq, main[0])
	}
	if s := key("End", false); s.Seq != main[len(main)-1] {
		t.Errorf("End shows event %d, want %d", s.Seq, main[len(main)-1])
	}
	if s := key("ArrowDown", false); s.Lane != 1 {
		t.Errorf("↓ shows event %d of lane %d, want one of lane 1", s.Seq, s.Lane)
	}
	if s := key("ArrowUp", false); s.Lane != 0 {
		t.Errorf("↑ shows event %d of lane %d, want one of lane 0", s.Seq, s.Lane)
	}
	if s := key("Home", false); s.Seq != main[0] {
		t.Errorf("Home shows event %d, want %d", s.Seq, main[0])
	}
	// Zoomed in at the start, Shift+→ and Page Down pan later, Page Up
	// earlier, and End brings the last mark into view.
	w.Eval(ctx, `(() => { const tl = window.agentmap.timeline; tl.set(tl.min, tl.min + (tl.max - tl.min) / 20); })()`, nil)
	s0 := read()
	s1 := key("ArrowRight", true)
	s2 := key("PageDown", false)
	s3 := key("PageUp", false)
	if !(s1.T0 > s0.T0 && s2.T0 > s1.T0 && s3.T0 < s2.T0) {
		t.Errorf("Shift+→, Page Down, Page Up move the view from %.0f to %.0f, %.0f, %.0f", s0.T0, s1.T0, s2.T0, s3.T0)
	}
	var at float64
	s4 := key("End", false)
	w.Eval(ctx, fmt.Sprintf(`window.agentmap.timeline.at[%d]`, main[len(main)-1]), &at)
	if s4.Seq != main[len(main)-1] || at < s4.T0 || at > s4.T1 {
		t.Errorf("End, zoomed in, shows event %d at %.0f in a view of %.0f–%.0f", s4.Seq, at, s4.T0, s4.T1)
	}
	if s := key("Escape", false); s.Seq != -1 {
		t.Errorf("Esc leaves event %d in the details pane", s.Seq)
	}

	// A delay with its call's span: its top edge points at it, the call's
	// middle at the call.
	point := func(i int) int {
		t.Helper()
		var p struct{ X, Y float64 }
		if err := w.Eval(ctx, fmt.Sprintf(`(() => { const tl = window.agentmap.timeline, [a, b] = tl.span[%d], pad = (b - a) * 2 + 1000; tl.set(a - pad, b + pad);
			document.querySelector('#timeline').scrollIntoView({block: 'center'}); return tl.pointOf(%d); })()`, i, i), &p); err != nil {
			t.Fatal(err)
		}
		w.Mouse(ctx, "mouseMoved", 1, 1, nil)
		if err := w.Mouse(ctx, "mouseMoved", p.X, p.Y, nil); err != nil {
			t.Fatal(err)
		}
		return read().Seq
	}
	if got := point(delay); got != delay {
		t.Errorf("pointing at the delay #%d, of its call's span, details event %d", delay, got)
	}
	if got := point(call); got != call {
		t.Errorf("pointing at the call #%d, under a delay of its span, details event %d", call, got)
	}

	// Touch: a one-finger drag pans, a pinch zooms, a tap selects.
	if err := w.Call(ctx, "Emulation.setTouchEmulationEnabled", map[string]any{"enabled": true, "maxTouchPoints": 5}, nil); err != nil {
		t.Fatal(err)
	}
	touch := func(typ string, pts ...[2]float64) {
		t.Helper()
		tp := []map[string]any{}
		for i, p := range pts {
			tp = append(tp, map[string]any{"x": p[0], "y": p[1], "id": i})
		}
		if err := w.Call(ctx, "Input.dispatchTouchEvent", map[string]any{"type": typ, "touchPoints": tp}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var box struct{ X, Y, W float64 }
	if err := w.Eval(ctx, `(() => { const tl = window.agentmap.timeline; tl.point(-1); tl.set(tl.min + (tl.max - tl.min) * 0.4, tl.min + (tl.max - tl.min) * 0.5);
		const r = tl.c.getBoundingClientRect(); return {x: r.left, y: r.top + tl.axisH + tl.rowH / 2, w: r.width}; })()`, &box); err != nil {
		t.Fatal(err)
	}
	before := read()
	x0, x1 := box.X+box.W-60, box.X+box.W-260
	touch("touchStart", [2]float64{x0, box.Y})
	for k := 1; k <= 5; k++ {
		touch("touchMove", [2]float64{x0 + (x1-x0)*float64(k)/5, box.Y})
	}
	touch("touchEnd")
	dragged := read()
	if !(dragged.T0 > before.T0) || dragged.Seq != -1 {
		t.Errorf("a finger dragged left moved the view from %.0f to %.0f (details %d); want it later, nothing selected", before.T0, dragged.T0, dragged.Seq)
	}
	mid := box.X + 160 + (box.W-160)/2
	touch("touchStart", [2]float64{mid - 40, box.Y}, [2]float64{mid + 40, box.Y})
	for k := 1; k <= 5; k++ {
		d := 40 + 30*float64(k)
		touch("touchMove", [2]float64{mid - d, box.Y}, [2]float64{mid + d, box.Y})
	}
	touch("touchEnd")
	pinched := read()
	if span, was := pinched.T1-pinched.T0, dragged.T1-dragged.T0; !(span < was*0.6) {
		t.Errorf("two fingers spread apart left the view at %.0f ms of %.0f", span, was)
	}
	var tap struct {
		I    int
		X, Y float64
	}
	if err := w.Eval(ctx, fmt.Sprintf(`(() => { const tl = window.agentmap.timeline, [a, b] = tl.span[%d], pad = (b - a) * 2 + 1000; tl.set(a - pad, b + pad);
		return {i: %d, ...tl.pointOf(%d)}; })()`, call, call, call), &tap); err != nil {
		t.Fatal(err)
	}
	touch("touchStart", [2]float64{tap.X, tap.Y})
	touch("touchEnd")
	if s := read(); s.Seq != tap.I {
		t.Errorf("a tap on event %d details event %d", tap.I, s.Seq)
	}
	w.shot(t, ctx, "timeline-input.png", false)
	w.checkQuiet(t, page)
}

// TestBrowserSessionWithNoStartTime: a session whose log gave no start
// time reads "-" where its start would be, and the chart over time leaves
// it out and says so, rather than stretch its axis to the year 1 (or
// 1970) and cut the real days off at its bucket cap.
func TestBrowserSessionWithNoStartTime(t *testing.T) {
	b := browser(t)
	dated, undated := synthMap(1, 30), synthMap(2, 40)
	dated.Session.StartedAt = "2026-03-02T10:00:00Z"
	undated.Session.StartedAt = ""
	page := writePage(t, t.TempDir(), "undated.html", []*Map{dated, undated}, Options{Scope: "2 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1200, 900)
	w.load(t, ctx, page)
	var got struct {
		Note   string
		Days   []string
		Starts []string
	}
	if err := w.Eval(ctx, `({note: document.querySelector('#daynote').textContent,
		days: [...document.querySelectorAll('#daychart details tbody tr')].map(tr => tr.children[0].textContent),
		starts: [...document.querySelectorAll('tr.click')].map(tr => tr.children[0].textContent)})`, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Note, "1 session with no start time not included") {
		t.Errorf("the chart's note reads %q", got.Note)
	}
	if len(got.Days) == 0 || len(got.Days) > 3 || !strings.Contains(strings.Join(got.Days, " "), "2026") {
		t.Errorf("the chart's days: %q, want the dated session's alone", got.Days)
	}
	if !slices.Contains(got.Starts, "-") || len(got.Starts) != 2 {
		t.Errorf("the sessions' starts: %q, want one \"-\"", got.Starts)
	}
	w.checkQuiet(t, page)
}
