package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

// shownText is a JavaScript function of an element: the text of it a reader
// sees, without hovering. A character counts when its box lies inside every
// box that clips it (an ancestor with overflow hidden, up to the cell), and
// not under the ellipsis that replaces the end of a clipped text: in a box
// whose content overflows, characters within 1.2em of the edge it overflows
// at are taken as hidden.
const shownText = `(cell => {
  const clips = [];
  for (let el = cell; el; el = el.parentElement) {
    const cs = getComputedStyle(el);
    if (cs.overflowX !== 'visible' || el === cell) {
      const r = el.getBoundingClientRect(), em = parseFloat(cs.fontSize) * 1.2;
      let left = r.left, right = r.right;
      if (el.scrollWidth > el.clientWidth + 0.5 && cs.textOverflow === 'ellipsis') {
        // the edge the content overflows at holds the ellipsis
        const kids = document.createRange(); kids.selectNodeContents(el); const c = kids.getBoundingClientRect();
        if (c.left < r.left - 0.5) left += em; if (c.right > r.right + 0.5) right -= em;
      }
      clips.push([left, right]);
    }
    if (el.tagName === 'TD') break;
  }
  let out = '';
  const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    for (let i = 0; i < n.data.length; i++) {
      const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1); const b = r.getBoundingClientRect();
      if (b.width > 0 && clips.every(([l, rt]) => b.left >= l - 0.5 && b.right <= rt + 0.5)) out += n.data[i];
    }
  }
  return out;
})`

// mcpTools are tools of one MCP server whose names begin alike.
var mcpTools = []string{"create_entities", "create_relations", "delete_entities", "search_nodes"}

// layoutMaps are sessions of three agents (one of them Gemini's CLI) whose
// most read and edited files have the paths of real projects, some long,
// some at the top of their repository; Codex sessions with part of their
// requests sent to a model without a price (their cost reads "$75.76
// +unpriced", one of them "$7,474.66 +unpriced") and Cursor sessions whose
// usage was not recorded.
func layoutMaps() (maps []*Map, files [][2]string) {
	maps, _, _ = viewMaps()
	files = [][2]string{
		{"spotter-4te", "lib/spotter_web/controllers/otel_trace_helpers.ex"},
		{"TestProject-v2", "AGENTS.md"},
		{"docs", "guides/cli-operating-rules.md"},
		{"OpenPrintKit", "opk/cli/__main__.py"},
		{"local-voice-assistant-codex", "specs/001-project-scaffold/spec.md"},
		{"agent-tail", "tests/pick/arg-passthrough.test.ts"},
		{"observability", longPath},
		// A ": " in a repository's name and in a path: neither is where
		// the one ends and the other begins.
		{"notes: 2026", "drafts: old/plan.md"},
	}
	for i, f := range files {
		m := maps[40+i]
		m.Repos = append(m.Repos, mapfile.Repo{ID: "rx", Name: f[0]})
		m.Files = append(m.Files, mapfile.File{ID: len(m.Files), Repo: "rx", Path: f[1], Reads: 900 - 10*i, Edits: 100})
	}
	maps[50].Session.AgentTool = "gemini-cli"
	// MCP tools of long names, on one server: what tells them apart is the tool
	last := maps[47].Events[len(maps[47].Events)-1]
	for i, tool := range mcpTools {
		for range 300 - i {
			last.Seq++
			last.T += 100
			maps[47].Events = append(maps[47].Events, mapfile.Event{Seq: last.Seq, T: last.T, Kind: "mcp", Tool: tool, Server: "graph-memory", Cat: "mcp"})
			maps[47].Totals.Calls++
		}
	}
	for _, m := range maps {
		if m.Session.AgentTool != "codex" {
			continue
		}
		for i := range m.Events {
			if e := &m.Events[i]; e.Kind == "llm" && i%2 == 0 {
				m.Totals.CostUSD -= e.Cost
				e.Model, e.Cost = "mystery-model-9", 0
			}
		}
	}
	return maps, files
}

// TestBrowserFileNamesReadable: at 1400 px, the table of the files read
// and edited most is read without hovering: each row shows its repository
// and its file's name whole, and a long path loses its outer directories,
// not the nearest one; the MCP card shows each tool's name whole; and a
// file at the top of its repository is written "repo: AGENTS.md" on a
// session's page, the space kept. A table that needs its tooltips to tell
// two rows apart is no use on a dashboard.
func TestBrowserFileNamesReadable(t *testing.T) {
	b := browser(t)
	maps, files := layoutMaps()
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "60 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.theme(t, ctx, "light")
	w.load(t, ctx, page)
	var rows []struct{ Shown, Title string }
	if err := w.Eval(ctx, `(() => { const shown = `+shownText+`;
		const c = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === 'Files read and edited most');
		return [...c.querySelectorAll('tbody tr')].slice(0, `+fmt.Sprint(len(files))+`).map(tr => ({
			shown: [...tr.children].slice(0, -4).map(shown).join(' '), title: [...tr.children].map(td => td.title).join('')})); })()`, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(files) {
		t.Fatalf("the files card lists %d rows, want at least %d", len(rows), len(files))
	}
	for i, f := range files {
		r := rows[i]
		dir, base := "", f[1]
		if k := strings.LastIndex(f[1], "/"); k >= 0 {
			dir, base = f[1][:k], f[1][k+1:]
		}
		near := dir[strings.LastIndex(dir, "/")+1:]
		if !strings.Contains(r.Title, f[0]) || !strings.Contains(r.Title, f[1]) {
			t.Errorf("row %d's tooltip is %q, want the whole %s: %s", i, r.Title, f[0], f[1])
		}
		if !strings.Contains(r.Shown, f[0]) || !strings.Contains(r.Shown, base) || (dir != "" && !strings.Contains(r.Shown, near+"/")) {
			t.Errorf("at 1400 px, row %d (%s: %s) shows %q: want its repository, its file's name and its nearest directory whole", i, f[0], f[1], r.Shown)
		}
	}
	// The MCP tools of one server: each row shows its tool's name whole
	// (the server may lose its end), or rows read alike.
	var tools []string
	if err := w.Eval(ctx, `(() => { const shown = `+shownText+`;
		const c = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === 'MCP servers and tools');
		return [...c.querySelectorAll('tbody tr')].slice(0, `+fmt.Sprint(len(mcpTools))+`).map(tr => shown(tr.children[0])); })()`, &tools); err != nil {
		t.Fatal(err)
	}
	for i, tool := range mcpTools {
		if i >= len(tools) || !strings.HasSuffix(tools[i], " · "+tool) || !strings.HasPrefix(tools[i], "gr") {
			t.Errorf("at 1400 px, the MCP card's row of graph-memory · %s shows %q: want the tool's name whole", tool, tools[min(i, len(tools)-1)])
		}
	}
	w.checkQuiet(t, page)

	// The session page: "TestProject-v2: AGENTS.md", with its space.
	openByClick(t, ctx, w, maps[41].Session.NativeID())
	var gap float64
	if err := w.Eval(ctx, `(() => { const c = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === 'Files touched');
		const td = [...c.querySelectorAll('td.name')].find(td => td.title === 'TestProject-v2: AGENTS.md');
		const at = (text, ch) => { const w = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
			for (let n = w.nextNode(); n; n = w.nextNode()) { const i = n.data.indexOf(ch); if (i >= 0) { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1); return r.getBoundingClientRect(); } } };
		return at(td, 'A').left - at(td, ':').right; })()`, &gap); err != nil {
		t.Fatal(err)
	}
	if gap < 2 {
		t.Errorf("on the session page, \"TestProject-v2: AGENTS.md\" has %.1f px between the colon and the file name: the space is lost", gap)
	}
	w.checkQuiet(t, page)
}

// TestBrowserTablesFitTheirCards: at 1400 px wide no table of the overview
// or of a session's page is wider than its card, so that none scrolls
// sideways to show its last column (a cost of "$75.76 +unpriced" once
// pushed the bar of the By agent card out of sight). At 420 px, a phone,
// neither, but for two tables of too many columns to fit one:
// the session list's eleven scroll sideways in their box, as it is made
// to, and so do a session's lanes, whose first column, the lane's name,
// stays in view while they do. The session opened has a file of a long
// path, which once pushed its Files touched table to 561 px in a 378 px box.
func TestBrowserTablesFitTheirCards(t *testing.T) {
	b := browser(t)
	maps, files := layoutMaps()
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "60 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const long = 6 // the session of files[6], whose path is longPath
	if files[long][1] != longPath {
		t.Fatalf("layoutMaps' file %d is %s, not the long path", long, files[long][1])
	}
	// scrolls are the titles of the cards whose table may scroll sideways
	const wide = `((boxes, scrolls) => { const out = [];
		for (const s of document.querySelectorAll(boxes)) {
			if (s.closest('details:not([open])')) continue;
			const title = s.closest('.card').querySelector('h2').firstChild.textContent;
			if (s.scrollWidth > s.clientWidth + 1 && !scrolls.includes(title)) out.push(title + ': ' + s.scrollWidth + ' px wide in ' + s.clientWidth);
		}
		for (const c of document.querySelectorAll('.card')) if (c.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
			out.push(c.querySelector('h2').firstChild.textContent + ': the card ends at ' + Math.round(c.getBoundingClientRect().right) + ' px');
		return out; })`
	for _, width := range []int{1400, 420} {
		w := openPage(t, ctx, b, width, 1000)
		w.theme(t, ctx, "light")
		w.load(t, ctx, page)
		var cut []string
		boxes, scrolls := "'.card .scroll, .card .scroll-x'", "[]"
		if width < 600 {
			boxes, scrolls = "'.card .scroll'", "['Lanes']"
		}
		if err := w.Eval(ctx, wide+"("+boxes+", [])", &cut); err != nil {
			t.Fatal(err)
		}
		for _, s := range cut {
			t.Errorf("at %d px, the overview's %s", width, s)
		}
		openByClick(t, ctx, w, maps[40+long].Session.NativeID())
		cut = nil
		if err := w.Eval(ctx, wide+"("+boxes+", "+scrolls+")", &cut); err != nil {
			t.Fatal(err)
		}
		for _, s := range cut {
			t.Errorf("at %d px, a session page's %s", width, s)
		}
		// Scrolled to its last column, the lanes table still shows each
		// lane's name whole, at the left edge of its box.
		var lanes struct {
			Scrolled bool
			Hidden   []string
		}
		if err := w.Eval(ctx, `(() => { const box = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === 'Lanes').querySelector('.scroll');
			box.scrollLeft = box.scrollWidth; const edge = box.getBoundingClientRect();
			const hidden = [...box.querySelectorAll('tbody tr')].map(tr => tr.children[0]).filter(td => { const r = td.getBoundingClientRect(); return r.left < edge.left - 1 || r.right > edge.right + 1; }).map(td => td.textContent);
			const r = {scrolled: box.scrollLeft > 0, hidden}; box.scrollLeft = 0; return r; })()`, &lanes); err != nil {
			t.Fatal(err)
		}
		if len(lanes.Hidden) > 0 {
			t.Errorf("at %d px, the lanes table scrolled sideways (%v) hides the names of the lanes %q", width, lanes.Scrolled, lanes.Hidden)
		}
		if width < 600 && !lanes.Scrolled {
			t.Errorf("at %d px, the lanes table fits its card: the test no longer checks that its lane names stay in view", width)
		}
		w.checkQuiet(t, page)
	}
}

// TestBrowserPagerFitsAPhone: on a phone the session list's pager stays on
// the screen, wrapping between its controls: the page does not scroll
// sideways, the "go to page" field is inside its card, and no button
// breaks inside its label ("«" on a line, "first" on the next).
func TestBrowserPagerFitsAPhone(t *testing.T) {
	b := browser(t)
	maps, _ := layoutMaps()
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "60 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, width := range []int{390, 375, 360} {
		w := openPage(t, ctx, b, width, 844)
		w.load(t, ctx, page)
		var got struct {
			ScrollWidth, Width float64
			Outside, Broken    []string
		}
		if err := w.Eval(ctx, `(() => { const pager = document.querySelector('.pager'), card = pager.closest('.card').getBoundingClientRect();
			const controls = [...pager.children], lines = el => { const tops = new Set(), tw = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
				for (let n = tw.nextNode(); n; n = tw.nextNode()) { const r = document.createRange(); r.selectNodeContents(n);
					for (const q of r.getClientRects()) if (q.width > 0) tops.add(Math.round(q.top)); }
				return tops.size; };
			return {scrollWidth: document.documentElement.scrollWidth, width: document.documentElement.clientWidth,
				outside: controls.filter(el => { const r = el.getBoundingClientRect(); return r.left < card.left - 0.5 || r.right > card.right + 0.5; }).map(el => el.textContent),
				broken: controls.filter(el => el.tagName !== 'SPAN' && lines(el) > 1).map(el => el.textContent)}; })()`, &got); err != nil {
			t.Fatal(err)
		}
		if got.ScrollWidth > got.Width {
			t.Errorf("at %d px, the overview is %.0f px wide: it scrolls sideways", width, got.ScrollWidth)
		}
		if len(got.Outside) > 0 {
			t.Errorf("at %d px, the pager's %q lie outside the session list's card", width, got.Outside)
		}
		if len(got.Broken) > 0 {
			t.Errorf("at %d px, the pager's %q break across lines", width, got.Broken)
		}
		w.checkQuiet(t, page)
	}
}

// TestBrowserAgentNames: the report names agents as every command does
// (claude, gemini, codex: `list`, `show`, `usage` and `--agent`), in the
// filter, the table by agent, the chart stacked by agent, the session list
// and a session's header, so that what the page says can be typed back to
// the command line; and the filter by one of those names keeps that
// agent's sessions.
func TestBrowserAgentNames(t *testing.T) {
	b := browser(t)
	maps, _ := layoutMaps()
	want := map[string]int{}
	for _, m := range maps {
		want[AgentName(m.Session.AgentTool)]++
	}
	if want["claude"] == 0 || want["gemini"] != 1 {
		t.Fatalf("the maps' agents are not what the test needs: %v", want)
	}
	page := writePage(t, t.TempDir(), "report.html", maps, Options{Scope: "60 sessions"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.load(t, ctx, page)
	var got struct {
		Options, Rows, Legend, List []string
		Counts                      map[string]int
	}
	if err := w.Eval(ctx, `(() => { const sel = document.querySelector('[data-f=agent]');
		const card = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === 'By agent');
		const stack = document.querySelector('#stack'); stack.value = 'agent'; stack.dispatchEvent(new Event('change'));
		const legend = [...document.querySelectorAll('#daychart .legend span')].map(s => s.textContent);
		stack.value = 'model'; stack.dispatchEvent(new Event('change'));
		const list = [...new Set([...document.querySelectorAll('#sessions tbody tr[data-s]')].map(tr => tr.children[2].textContent))];
		const options = [...sel.options].map(o => o.value).filter(v => v), counts = {};
		for (const v of options) { sel.value = v; sel.dispatchEvent(new Event('change', {bubbles: true})); counts[v] = +document.querySelector('[data-kpi=sessions]').dataset.value; }
		document.querySelector('#reset').click();
		return {options, counts, legend, list, rows: [...card.querySelectorAll('tbody tr')].map(tr => tr.children[0].textContent)}; })()`, &got); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(want))
	for a := range want {
		names = append(names, a)
	}
	slices.Sort(names)
	for what, list := range map[string][]string{"the agent filter": got.Options, "the By agent card": got.Rows, "the chart stacked by agent": got.Legend, "the session list": got.List} {
		s := slices.Sorted(slices.Values(list))
		if what == "the session list" { // its first page: some of the agents
			s = slices.DeleteFunc(s, func(a string) bool { return want[a] > 0 })
			if len(s) > 0 {
				t.Errorf("the session list names agents %q, none of %v", s, names)
			}
			continue
		}
		if !slices.Equal(s, names) {
			t.Errorf("%s names the agents %q, the command line %q", what, s, names)
		}
	}
	for a, n := range want {
		if got.Counts[a] != n {
			t.Errorf("filtered to agent %s, the overview counts %d sessions, the maps %d", a, got.Counts[a], n)
		}
	}
	claude := maps[slices.IndexFunc(maps, func(m *Map) bool { return m.Session.AgentTool == "claude-code" })]
	openByClick(t, ctx, w, claude.Session.NativeID())
	var agent string
	if err := w.Eval(ctx, `[...document.querySelectorAll('.hdr div')].find(d => d.querySelector('span').textContent === 'agent').querySelector('b').textContent`, &agent); err != nil {
		t.Fatal(err)
	}
	if agent != "claude" {
		t.Errorf("a Claude Code session's header names its agent %q, the command line claude", agent)
	}
	w.checkQuiet(t, page)
}

// TestBrowserLaneModels: a lane whose map entry names no model (a main
// agent's often does not, though its requests do) shows the models its
// requests used, in the order it first used them, as `agentmap show`
// does; a lane that names one shows it.
func TestBrowserLaneModels(t *testing.T) {
	b := browser(t)
	m, _, _ := timelineMap()
	m.Agents[0].Model = ""
	m.Agents[1].Model = "claude-haiku-4-5"
	var order []string
	n := 0
	for i := range m.Events {
		if e := &m.Events[i]; e.Kind == "llm" && e.Lane() == "main" {
			e.Model = []string{"claude-sonnet-4-5", "claude-opus-4-6", "claude-sonnet-4-5"}[n%3]
			if n < 2 {
				order = append(order, e.Model)
			}
			n++
		}
	}
	if n < 3 {
		t.Fatalf("the main lane has %d requests, the test needs 3", n)
	}
	page := writePage(t, t.TempDir(), "session.html", []*Map{m}, Options{Single: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.load(t, ctx, page)
	var models map[string]string
	if err := w.Eval(ctx, `(() => { const c = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').textContent === 'Lanes');
		const col = [...c.querySelectorAll('thead th')].findIndex(th => th.textContent === 'model');
		return Object.fromEntries([...c.querySelectorAll('tbody tr')].map(tr => [tr.children[0].textContent, tr.children[col].textContent])); })()`, &models); err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(order, ", "); models["main"] != want {
		t.Errorf("the main lane, whose map entry names no model, shows model %q; its requests used %s", models["main"], want)
	}
	if got := models[m.Agents[1].ID]; got != "claude-haiku-4-5" {
		t.Errorf("the lane whose map entry names claude-haiku-4-5 shows model %q", got)
	}
	w.checkQuiet(t, page)
}

// TestBrowserSessionHeaderWraps: at 420 px, a session's header wraps its
// list of models between the names, never inside one that fits the field
// ("gpt-5." on a line and "5" on the next, or "claude-sonnet-" and "4-5",
// read as models that do not exist).
func TestBrowserSessionHeaderWraps(t *testing.T) {
	b := browser(t)
	m := synthMap(5, 120)
	models := []string{"gpt-5.6-luna", "gpt-5.5", "gpt-5.6-sol", "claude-sonnet-4-5"}
	n := 0
	for i := range m.Events {
		if e := &m.Events[i]; e.Kind == "llm" {
			e.Model = models[n%len(models)]
			n++
		}
	}
	m.Session.Models = models
	page := writePage(t, t.TempDir(), "session.html", []*Map{m}, Options{Single: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 420, 900)
	w.load(t, ctx, page)
	var got struct {
		Text   string
		Broken []string
	}
	if err := w.Eval(ctx, `(names => { const b = [...document.querySelectorAll('.hdr div')].find(d => d.querySelector('span').textContent === 'models').querySelector('b');
		const broken = names.filter(x => { const w = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
			for (let n = w.nextNode(); n; n = w.nextNode()) { const i = n.data.indexOf(x); if (i < 0) continue; const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + x.length);
				return new Set([...r.getClientRects()].map(q => Math.round(q.top))).size > 1; } return false; });
		return {text: b.textContent, broken}; })(`+jsString(strings.Join(models, "\n"))+`.split('\n'))`, &got); err != nil {
		t.Fatal(err)
	}
	if got.Text != strings.Join(models, ", ") {
		t.Fatalf("the header's models read %q", got.Text)
	}
	if len(got.Broken) > 0 {
		t.Errorf("at 420 px the header breaks the model names %q across lines", got.Broken)
	}
	// A comma stays on the line of the name before it: none begins a line.
	var stray int
	if err := w.Eval(ctx, `(() => { const b = [...document.querySelectorAll('.hdr div')].find(d => d.querySelector('span').textContent === 'models').querySelector('b');
		const chars = []; const tw = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
		for (let n = tw.nextNode(); n; n = tw.nextNode()) for (let i = 0; i < n.data.length; i++) if (n.data[i] !== ' ') chars.push([n, i]);
		const top = ([n, i]) => { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1); return Math.round(r.getBoundingClientRect().top); };
		let stray = 0; for (let k = 1; k < chars.length; k++) if (chars[k][0].data[chars[k][1]] === ',' && top(chars[k]) !== top(chars[k - 1])) stray++;
		return stray; })()`, &stray); err != nil {
		t.Fatal(err)
	}
	if stray > 0 {
		t.Errorf("at 420 px %d of the header's commas begin a line", stray)
	}
	w.checkQuiet(t, page)
}
