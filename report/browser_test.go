package report

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/report/internal/cdp"
)

var screenshots = flag.String("screenshots", "", "write the browser test's screenshots into this directory (docs/report to refresh the README's)")

// browser starts a headless Chromium for a test, or skips it with the
// reason when there is none.
func browser(t testing.TB) *cdp.Browser {
	t.Helper()
	bin, err := cdp.Find()
	if err != nil {
		t.Skipf("skipping the browser test: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The profile is removed after the browser is closed (cleanups run
	// last first), a few times over: a child process may still be
	// writing to it for a moment after the browser exits.
	profile, err := os.MkdirTemp("", "agentmap-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for try := 0; ; try++ {
			err := os.RemoveAll(profile)
			if err == nil {
				return
			}
			if try == 20 {
				t.Errorf("remove the browser's profile: %v", err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	b, err := cdp.Launch(ctx, bin, profile)
	if err != nil {
		t.Fatalf("launch %s: %v", bin, err)
	}
	t.Cleanup(b.Close)
	return b
}

// watchedPage is a tab whose console errors, exceptions and network
// requests are recorded.
type watchedPage struct {
	*cdp.Page
	mu       sync.Mutex
	problems []string
	requests []string
}

func openPage(t testing.TB, ctx context.Context, b *cdp.Browser, width, height int) *watchedPage {
	t.Helper()
	p, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := &watchedPage{Page: p}
	b.Subscribe(func(e cdp.Event) {
		if e.SessionID != p.Session {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var c struct {
				Type string            `json:"type"`
				Args []json.RawMessage `json:"args"`
			}
			json.Unmarshal(e.Params, &c)
			if c.Type == "error" || c.Type == "assert" || c.Type == "warning" {
				w.problems = append(w.problems, "console."+c.Type+": "+string(e.Params))
			}
		case "Runtime.exceptionThrown":
			w.problems = append(w.problems, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var l struct {
				Entry struct {
					Level string `json:"level"`
					Text  string `json:"text"`
					URL   string `json:"url"`
				} `json:"entry"`
			}
			json.Unmarshal(e.Params, &l)
			if l.Entry.Level == "error" || l.Entry.Level == "warning" {
				w.problems = append(w.problems, "log "+l.Entry.Level+": "+l.Entry.Text+" "+l.Entry.URL)
			}
		case "Network.requestWillBeSent":
			var r struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			json.Unmarshal(e.Params, &r)
			w.requests = append(w.requests, r.Request.URL)
		}
	})
	for _, m := range []string{"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"} {
		if err := p.Call(ctx, m, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height,
		"deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *watchedPage) theme(t testing.TB, ctx context.Context, scheme string) {
	t.Helper()
	if err := w.Call(ctx, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}}, nil); err != nil {
		t.Fatal(err)
	}
}

// load navigates to the report and waits for its first render; it returns
// the time from navigation start to the end of that render, in ms.
func (w *watchedPage) load(t testing.TB, ctx context.Context, file string) float64 {
	t.Helper()
	if err := w.Call(ctx, "Page.navigate", map[string]any{"url": fileURL(file)}, nil); err != nil {
		t.Fatal(err)
	}
	// Wait for the first render, giving up at once when the page fails.
	for deadline := time.Now().Add(2 * time.Minute); ; {
		err := w.WaitFor(ctx, "window.agentmap && window.agentmap.ready", time.Second)
		if err == nil {
			break
		}
		w.mu.Lock()
		failed := len(w.problems) > 0
		w.mu.Unlock()
		if failed || time.Now().After(deadline) {
			w.report(t)
			t.Fatal(err)
		}
	}
	var ms float64
	if err := w.Eval(ctx, "window.agentmap.renderMs", &ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

func (w *watchedPage) report(t testing.TB) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.problems {
		t.Errorf("page: %s", p)
	}
}

// checkQuiet fails on any console error or exception and on any request
// other than the report file itself.
func (w *watchedPage) checkQuiet(t testing.TB, file string) {
	t.Helper()
	w.report(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, u := range w.requests {
		// data: URLs never leave the browser (its own date picker's icon
		// comes as one); anything else would be a request.
		if u != fileURL(file) && !strings.HasPrefix(u, "data:") {
			t.Errorf("the report attempted a request: %s", u)
		}
	}
}

func (w *watchedPage) shot(t testing.TB, ctx context.Context, name string, full bool) {
	t.Helper()
	png, err := w.Screenshot(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	dir := *screenshots
	if dir == "" {
		dir = t.TempDir()
	}
	os.MkdirAll(dir, 0o755)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d KiB)", p, len(png)/1024)
}

func fileURL(p string) string {
	abs, _ := filepath.Abs(p)
	return "file://" + filepath.ToSlash(abs)
}

// corpusMaps builds the maps of ../shared/corpus with the agentmap binary,
// as a user would, into a directory; it skips without the corpus.
func corpusMaps(t *testing.T, bin string) string {
	t.Helper()
	corpus, _ := filepath.Abs(filepath.Join("..", "..", "shared", "corpus"))
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("corpus not available at %s: skipping", corpus)
	}
	var files []string
	for _, agent := range []string{"claude", "codex", "cursor"} {
		entries, err := os.ReadDir(filepath.Join(corpus, agent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			n := e.Name()
			if strings.HasSuffix(n, ".dump.json") || strings.HasSuffix(n, ".md") || (agent != "codex" && strings.HasSuffix(n, ".json")) {
				continue
			}
			files = append(files, filepath.Join(corpus, agent, n))
		}
	}
	dir := t.TempDir()
	out, err := exec.Command(bin, append([]string{"build", "-o", dir}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("agentmap build of the corpus: %v\n%s", err, out)
	}
	return dir
}

// agentmapBinary builds the command once per test binary.
var agentmapBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "agentmap-report-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "agentmap")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/agentmap").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// TestBrowserCorpusReport opens the report of the corpus in a real
// headless Chromium: the overview renders without a console error or a
// network request and shows the maps' totals; a click on a session opens
// its page, whose timeline draws one mark per event and zooms, pans and
// details the event under the pointer.
func TestBrowserCorpusReport(t *testing.T) {
	b := browser(t)
	bin, err := agentmapBinary()
	if err != nil {
		t.Fatal(err)
	}
	mapsDir := corpusMaps(t, bin)
	page := filepath.Join(t.TempDir(), "report.html")
	if out, err := exec.Command(bin, "report", "--maps", mapsDir, "-o", page).CombinedOutput(); err != nil {
		t.Fatalf("agentmap report: %v\n%s", err, out)
	}
	maps, errs := Collect(context.Background(), Dir(mapsDir), Filter{})
	if len(errs) > 0 || len(maps) < 20 {
		t.Fatalf("%d maps, errors %v", len(maps), errs)
	}
	var want struct {
		sessions, calls, requests, errors int
		tokens                            int64
		cost                              float64
	}
	for _, m := range maps {
		want.sessions++
		want.calls += m.Totals.Calls
		want.requests += m.Totals.Requests
		want.errors += m.Totals.Errors
		want.tokens += m.Totals.Tokens
		want.cost += m.Totals.CostUSD
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.theme(t, ctx, "light")
	ms := w.load(t, ctx, page)
	t.Logf("overview of %d sessions rendered %.0f ms after navigation", len(maps), ms)

	var kpi map[string]float64
	if err := w.Eval(ctx, `Object.fromEntries([...document.querySelectorAll('[data-kpi]')].map(e => [e.dataset.kpi, +e.dataset.value]))`, &kpi); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]float64{"sessions": float64(want.sessions), "calls": float64(want.calls), "requests": float64(want.requests),
		"errors": float64(want.errors), "tokens": float64(want.tokens)} {
		if kpi[k] != v {
			t.Errorf("overview shows %s = %v, the maps total %v", k, kpi[k], v)
		}
	}
	if math.Abs(kpi["cost"]-want.cost) > 1e-6 {
		t.Errorf("overview shows cost %v, the maps total %v", kpi["cost"], want.cost)
	}
	var cards int
	w.Eval(ctx, `document.querySelectorAll('.card').length`, &cards)
	if cards < 15 {
		t.Errorf("the overview has %d cards", cards)
	}
	// The agent filter narrows the figures to that agent's sessions.
	agent, n := maps[0].Session.AgentTool, 0
	for _, m := range maps {
		if m.Session.AgentTool == agent {
			n++
		}
	}
	rawAgent, _ := json.Marshal(agent)
	var filtered float64
	if err := w.Eval(ctx, `(() => { const s = document.querySelector('[data-f=agent]'); s.value = `+string(rawAgent)+`; s.dispatchEvent(new Event('change', {bubbles: true}));
		return +document.querySelector('[data-kpi=sessions]').dataset.value; })()`, &filtered); err != nil {
		t.Fatal(err)
	}
	if int(filtered) != n {
		t.Errorf("filtered to %s, the overview counts %v sessions; the maps %d", agent, filtered, n)
	}
	w.Eval(ctx, `document.querySelector('#reset').click()`, nil)
	checkFilters(t, ctx, w, maps)
	checkDayChart(t, ctx, w, maps)
	w.shot(t, ctx, "overview-light.png", true)
	light := w.background(t, ctx)
	w.theme(t, ctx, "dark")
	if dark := w.background(t, ctx); dark == light {
		t.Errorf("the dark theme has the light theme's background %s", light)
	}
	w.shot(t, ctx, "overview-dark.png", true)
	w.theme(t, ctx, "light")

	// The session with the most events and subagent lanes that has a tool
	// call to zoom to (an untimed session, a Cursor transcript, has all its
	// events at t = 0), found by the search box and opened by a click on
	// its row.
	sort.SliceStable(maps, func(i, j int) bool {
		return len(maps[i].Agents)*100000+len(maps[i].Events) > len(maps[j].Agents)*100000+len(maps[j].Events)
	})
	m := maps[0]
	for _, c := range maps {
		if isolatedCall(c) >= 0 {
			m = c
			break
		}
	}
	id := m.Session.NativeID()
	openByClick(t, ctx, w, id)
	var tl struct {
		Marks, Events int
		T0, T1        float64
		Title         string
		Tokens, Cost  float64
	}
	readTL := func() {
		t.Helper()
		if err := w.Eval(ctx, `(() => { const c = document.querySelector('canvas.timeline'); return {marks: +c.dataset.marks, events: +c.dataset.events, t0: +c.dataset.t0, t1: +c.dataset.t1,
			title: document.querySelector('h1').textContent, tokens: +document.querySelector('[data-field=tokens]').dataset.value, cost: +document.querySelector('[data-field=cost]').dataset.value}; })()`, &tl); err != nil {
			t.Fatal(err)
		}
	}
	readTL()
	if tl.Title != id {
		t.Fatalf("the click opened %q, not %q", tl.Title, id)
	}
	if tl.Marks != len(m.Events) || tl.Events != len(m.Events) {
		t.Errorf("the timeline draws %d marks of %d events; the map has %d events", tl.Marks, tl.Events, len(m.Events))
	}
	if tl.Tokens != float64(m.Totals.Tokens) || math.Abs(tl.Cost-m.Totals.CostUSD) > 1e-9 {
		t.Errorf("the header shows %v tokens and $%v, the map %d and $%v", tl.Tokens, tl.Cost, m.Totals.Tokens, m.Totals.CostUSD)
	}
	// The page carries the events in columns: what it rebuilds from them
	// is every mark as the map has it.
	var got []event
	if err := w.Eval(ctx, `window.agentmap.timeline.ev`, &got); err != nil {
		t.Fatal(err)
	}
	if want := buildSessionPage(m).events; !reflect.DeepEqual(got, want) {
		for i := range min(len(got), len(want)) {
			if !reflect.DeepEqual(got[i], want[i]) {
				g, _ := json.Marshal(got[i])
				w, _ := json.Marshal(want[i])
				t.Errorf("event %d: the page rebuilds %s, the map says %s", i, g, w)
				break
			}
		}
		t.Errorf("the page rebuilds %d events, the map has %d", len(got), len(want))
	}
	var lanes int
	w.Eval(ctx, `window.agentmap.timeline.lanes.length`, &lanes)
	if lanes != len(m.Agents) {
		t.Errorf("the timeline has %d lanes, the map %d", lanes, len(m.Agents))
	}
	// The header splits the tokens by kind; the lanes and the files
	// touched are listed, one row each.
	var split [4]int64
	for _, e := range m.Events {
		if e.Kind == "llm" {
			split[0], split[1], split[2], split[3] = split[0]+e.In, split[1]+e.CW, split[2]+e.CR, split[3]+e.Out
		}
	}
	var sp struct {
		Split        [4]int64
		Lanes, Files int
		Header       string
	}
	if err := w.Eval(ctx, `(() => { const f = k => +document.querySelector('[data-field=' + k + ']').dataset.value, cards = [...document.querySelectorAll('#view .grid .card')];
		const rows = title => cards.find(c => c.querySelector('h2').textContent.startsWith(title)).querySelectorAll('tbody tr').length;
		return {split: ['in', 'cw', 'cr', 'out'].map(f), lanes: rows('Lanes'), files: rows('Files touched'), header: document.querySelector('.hdr').textContent}; })()`, &sp); err != nil {
		t.Fatal(err)
	}
	if sp.Split != split {
		t.Errorf("the header splits the tokens %v, the map's requests %v", sp.Split, split)
	}
	if sp.Lanes != len(m.Agents) || sp.Files != max(1, len(m.Files)) {
		t.Errorf("the page lists %d lanes and %d files, the map has %d and %d", sp.Lanes, sp.Files, len(m.Agents), len(m.Files))
	}
	for _, f := range []string{"agent", "repository", "models", "started", "duration", "outcome", "input tokens", "cache write", "cache read", "output tokens", "cost", m.Session.AgentTool, m.Session.Outcome} {
		if !strings.Contains(sp.Header, f) {
			t.Errorf("the session header lacks %q: %s", f, sp.Header)
		}
	}

	// Zoom with the wheel around an isolated tool call, then point at it.
	target := isolatedCall(m)
	if target < 0 {
		t.Fatal("no isolated tool call in the session")
	}
	at := func(i int) struct{ X, Y float64 } {
		t.Helper()
		var p struct{ X, Y float64 }
		if err := w.Eval(ctx, fmt.Sprintf(`(() => { const c = document.querySelector('canvas.timeline'); c.scrollIntoView({block: 'center'}); return window.agentmap.timeline.pointOf(%d); })()`, i), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := tl.T1 - tl.T0
	for range 6 {
		p := at(target)
		if err := w.Mouse(ctx, "mouseWheel", p.X, p.Y, map[string]any{"deltaX": 0, "deltaY": -400}); err != nil {
			t.Fatal(err)
		}
	}
	readTL()
	if span := tl.T1 - tl.T0; span > full/5 {
		t.Errorf("six wheel steps left the timeline at %.0f ms of %.0f", span, full)
	}
	if tl.Marks >= len(m.Events) {
		t.Errorf("zoomed in, the timeline still draws all %d marks", tl.Marks)
	}
	p := at(target)
	if err := w.Mouse(ctx, "mouseMoved", p.X, p.Y, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitFor(ctx, fmt.Sprintf(`document.querySelector('#details dl') && document.querySelector('#details dl').dataset.seq === '%d'`, target), 10*time.Second); err != nil {
		var got string
		w.Eval(ctx, `document.querySelector('#details').textContent`, &got)
		t.Errorf("details pane for event %d: %v (shows %q)", target, err, got)
	}
	var details string
	w.Eval(ctx, `document.querySelector('#details').textContent`, &details)
	e := m.Events[target]
	if !strings.Contains(details, e.Kind) || (e.Verb != "" && !strings.Contains(details, e.Verb)) {
		t.Errorf("details of event %d (%s %s) read %q", target, e.Kind, e.Verb, details)
	}
	w.shot(t, ctx, "session-light.png", false)
	w.theme(t, ctx, "dark")
	w.shot(t, ctx, "session-dark.png", false)
	w.theme(t, ctx, "light")
	// Drag to pan: the window moves back in time.
	before := tl.T0
	w.Mouse(ctx, "mousePressed", p.X, p.Y, map[string]any{"button": "left", "buttons": 1, "clickCount": 1})
	w.Mouse(ctx, "mouseMoved", p.X+200, p.Y, map[string]any{"button": "left", "buttons": 1})
	w.Mouse(ctx, "mouseReleased", p.X+200, p.Y, map[string]any{"button": "left", "buttons": 0, "clickCount": 1})
	readTL()
	if !(tl.T0 < before) {
		t.Errorf("dragging right did not pan back in time: t0 %.0f -> %.0f", before, tl.T0)
	}
	// The timeline's colours, read back from its pixels, in both themes,
	// on the session with the most failed calls among those with a retry
	// (or the most failed calls, when none has one).
	var signs *Map
	best := -1
	for _, c := range maps {
		errs, retries := 0, 0
		for _, e := range buildSessionPage(c).events {
			if e.Err != 0 {
				errs++
			}
			if e.RetryOf != nil {
				retries++
			}
		}
		if score := errs + min(retries, 1)*1000000; errs > 0 && score > best {
			signs, best = c, score
		}
	}
	if signs == nil {
		t.Error("no session of the corpus has a failed call to check the error sign on")
	} else {
		w.Eval(ctx, `location.hash = '#'`, nil)
		if err := w.WaitFor(ctx, `document.body.dataset.view === 'overview'`, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		openByClick(t, ctx, w, signs.Session.NativeID())
		want := struct{ errors, retries, calls int }{1, min(best/1000000, 1), 5}
		checkTimelineSigns(t, ctx, w, "light", want)
		w.theme(t, ctx, "dark")
		checkTimelineSigns(t, ctx, w, "dark", want)
		w.theme(t, ctx, "light")
	}

	// Back to the overview.
	if err := w.Eval(ctx, `location.hash = '#'`, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitFor(ctx, `document.body.dataset.view === 'overview'`, 10*time.Second); err != nil {
		t.Error(err)
	}

	// A session whose log records no times is laid out in order: every
	// event its own place, not all of them on one spot at 0.
	for _, u := range maps {
		if len(u.Events) < 2 || slices.ContainsFunc(u.Events, func(e mapfile.Event) bool { return e.T != 0 }) {
			continue
		}
		openByClick(t, ctx, w, u.Session.NativeID())
		var o struct {
			Marks       int
			First, Last float64
			Range       string
		}
		if err := w.Eval(ctx, `(() => { const tl = window.agentmap.timeline, c = document.querySelector('canvas.timeline');
			return {marks: +c.dataset.marks, first: tl.pointOf(0).x, last: tl.pointOf(tl.ev.length - 1).x, range: document.querySelector('#range').textContent}; })()`, &o); err != nil {
			t.Fatal(err)
		}
		if o.Marks != len(u.Events) || !(o.Last-o.First > 100) || !strings.Contains(o.Range, "in order") {
			t.Errorf("untimed session %s: %d marks of %d events, from x %.0f to %.0f, %q", u.Session.NativeID(), o.Marks, len(u.Events), o.First, o.Last, o.Range)
		}
		w.Eval(ctx, `location.hash = '#'`, nil)
		if err := w.WaitFor(ctx, `document.body.dataset.view === 'overview'`, 10*time.Second); err != nil {
			t.Error(err)
		}
		break
	}
	w.checkQuiet(t, page)
}

// openByClick finds a session with the search box and opens it with a
// click on its row, as a person would.
func openByClick(t *testing.T, ctx context.Context, w *watchedPage, id string) {
	t.Helper()
	raw, _ := json.Marshal(id)
	if err := w.Eval(ctx, `(() => { const s = document.querySelector('#search'); s.value = `+string(raw)+`; s.dispatchEvent(new Event('input')); })()`, nil); err != nil {
		t.Fatal(err)
	}
	var pos struct{ X, Y float64 }
	if err := w.Eval(ctx, `(() => { const a = document.querySelector('#sessions tbody tr[data-s] td:nth-child(3)'); a.scrollIntoView({block: 'center'}); const r = a.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`, &pos); err != nil {
		t.Fatal(err)
	}
	if err := w.Click(ctx, pos.X, pos.Y); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitFor(ctx, `document.body.dataset.view === 'session' && document.querySelector('h1').textContent === `+string(raw), time.Minute); err != nil {
		t.Fatal(err)
	}
}

// checkFilters sets each filter of the page, and the search box to an
// id, a repository and a model, and checks that the overview counts the
// sessions of the maps each selects.
func checkFilters(t *testing.T, ctx context.Context, w *watchedPage, maps []*Map) {
	t.Helper()
	count := func(keep func(*Map) bool) (n int) {
		for _, m := range maps {
			if keep(m) {
				n++
			}
		}
		return n
	}
	models := func(m *Map) []string {
		if len(m.Session.Models) == 0 {
			return []string{"unknown"}
		}
		return m.Session.Models
	}
	repos := func(m *Map) (rs []string) {
		for _, r := range m.Repos {
			rs = append(rs, r.Name)
		}
		return rs
	}
	day := func(m *Map) string { s, _ := m.Start(); return s.Local().Format(time.DateOnly) }
	// Values that select some sessions but not all.
	var repo, model, outcome string
	var days []string
	for _, m := range maps {
		if rs := repos(m); repo == "" && len(rs) > 0 {
			repo = rs[0]
		}
		if ms := models(m); model == "" && ms[0] != "unknown" {
			model = ms[0]
		}
		if outcome == "" && m.Session.Outcome != "" && m.Session.Outcome != maps[0].Session.Outcome {
			outcome = m.Session.Outcome
		}
		days = append(days, day(m))
	}
	sort.Strings(days)
	from, to := days[len(days)/4], days[len(days)/2]
	search := func(q string) func(*Map) bool {
		return func(m *Map) bool {
			hay := strings.ToLower(strings.Join(append(append([]string{m.Session.NativeID(), m.Session.AgentTool}, repos(m)...), models(m)...), " "))
			return strings.Contains(hay, strings.ToLower(q))
		}
	}
	cases := []struct {
		what string
		set  map[string]string // filter -> value; "q" is the search box
		keep func(*Map) bool
	}{
		{"repository " + repo, map[string]string{"repo": repo}, func(m *Map) bool { return slices.Contains(repos(m), repo) }},
		{"model " + model, map[string]string{"model": model}, func(m *Map) bool { return slices.Contains(models(m), model) }},
		{"outcome " + outcome, map[string]string{"outcome": outcome}, func(m *Map) bool { return m.Session.Outcome == outcome }},
		{"dates " + from + " to " + to, map[string]string{"from": from, "to": to}, func(m *Map) bool { return day(m) >= from && day(m) <= to }},
		{"search by id", map[string]string{"q": maps[3].Session.NativeID()[:8]}, search(maps[3].Session.NativeID()[:8])},
		{"search by repository", map[string]string{"q": repo}, search(repo)},
		{"search by model", map[string]string{"q": model}, search(model)},
	}
	for _, c := range cases {
		want := count(c.keep)
		if want == 0 || want == len(maps) {
			t.Errorf("%s selects %d of %d sessions: not a test of the filter", c.what, want, len(maps))
		}
		set, _ := json.Marshal(c.set)
		var got struct{ Sessions, Rows float64 }
		if err := w.Eval(ctx, `(() => { for (const [k, v] of Object.entries(`+string(set)+`)) {
				const el = k === 'q' ? document.querySelector('#search') : document.querySelector('[data-f=' + k + ']');
				el.value = v; el.dispatchEvent(new Event(k === 'q' ? 'input' : 'change', {bubbles: true})); }
			const r = {sessions: +document.querySelector('[data-kpi=sessions]').dataset.value, rows: document.querySelectorAll('#sessions tbody tr[data-s]').length};
			document.querySelector('#reset').click(); return r; })()`, &got); err != nil {
			t.Fatal(err)
		}
		if int(got.Sessions) != want || int(got.Rows) != min(want, 50) {
			t.Errorf("%s: the overview counts %v sessions and lists %v; the maps %d", c.what, got.Sessions, got.Rows, want)
		}
	}
}

// checkDayChart: the chart over time has its figures in a table (summing
// to every session, a row per day with sessions when asked per day) and
// on hover.
func checkDayChart(t *testing.T, ctx context.Context, w *watchedPage, maps []*Map) {
	t.Helper()
	perDay := map[string]int{}
	for _, m := range maps {
		s, _ := m.Start()
		perDay[s.Local().Format(time.DateOnly)]++
	}
	for _, unit := range []string{"day", "auto"} {
		var tab struct {
			Sum  float64
			Days map[string]float64
		}
		if err := w.Eval(ctx, `(() => { const u = document.querySelector('#unit'); u.value = '`+unit+`'; u.dispatchEvent(new Event('change'));
			const rows = [...document.querySelectorAll('#daychart details tbody tr')], n = tr => +tr.children[tr.children.length - 2].dataset.v;
			return {sum: rows.reduce((s, tr) => s + n(tr), 0), days: Object.fromEntries(rows.map(tr => [tr.children[0].textContent, n(tr)]))}; })()`, &tab); err != nil {
			t.Fatal(err)
		}
		if int(tab.Sum) != len(maps) {
			t.Errorf("per %s, the table of the chart over time counts %v sessions, the maps %d", unit, tab.Sum, len(maps))
		}
		if unit == "day" {
			for d, n := range perDay {
				if int(tab.Days[d]) != n {
					t.Errorf("per day, the table counts %v sessions on %s, the maps %d", tab.Days[d], d, n)
				}
			}
			if len(tab.Days) != len(perDay) {
				t.Errorf("per day, the table has %d rows for %d days with sessions", len(tab.Days), len(perDay))
			}
		}
	}
	var bar struct{ X, Y float64 }
	if err := w.Eval(ctx, `(() => { const r = [...document.querySelectorAll('#daychart svg rect[fill]:not([fill=transparent])')].sort((a, b) => b.getBBox().height - a.getBBox().height)[0];
		r.scrollIntoView({block: 'center'}); const b = r.getBoundingClientRect(); return {x: b.left + b.width / 2, y: b.bottom - 1}; })()`, &bar); err != nil {
		t.Fatal(err)
	}
	if err := w.Mouse(ctx, "mouseMoved", bar.X, bar.Y, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitFor(ctx, `document.querySelector('#tip').style.display === 'block' && document.querySelector('#tip').textContent.includes('total')`, 5*time.Second); err != nil {
		t.Errorf("no tooltip over the tallest bar of the chart over time: %v", err)
	}
	w.Mouse(ctx, "mouseMoved", 1, 1, nil)
	w.Eval(ctx, `window.scrollTo(0, 0)`, nil)
}

// background is the page's background colour in the theme in effect.
func (w *watchedPage) background(t *testing.T, ctx context.Context) string {
	t.Helper()
	var bg string
	if err := w.Eval(ctx, `getComputedStyle(document.body).backgroundColor`, &bg); err != nil {
		t.Fatal(err)
	}
	return bg
}

// isolatedCall is a main-lane tool call with no other event of its lane
// within a second, so that pointing at it cannot hit a neighbour.
func isolatedCall(m *Map) int {
	best, bestGap := -1, int64(0)
	for i := range m.Events {
		e := &m.Events[i]
		if !e.IsCall() || e.Lane() != "main" {
			continue
		}
		gap := int64(math.MaxInt64)
		for j := i - 1; j >= 0 && j >= i-50; j-- {
			if o := &m.Events[j]; o.Lane() == "main" {
				gap = min(gap, e.T-o.T)
				break
			}
		}
		for j := i + 1; j < len(m.Events) && j <= i+50; j++ {
			if o := &m.Events[j]; o.Lane() == "main" {
				gap = min(gap, o.T-e.T)
				break
			}
		}
		if gap > bestGap {
			best, bestGap = i, gap
		}
	}
	if bestGap < 1000 {
		return -1
	}
	return best
}

// timelineSigns reads back, from the canvas's pixels, the marks of the
// session page on screen: each failed event's triangle is drawn in the
// theme's error colour, each retry's ring in its warning colour, and calls
// standing apart from their lane's other bars in their kind's colour.
// It returns how many of each it checked and what differed.
const timelineSigns = `(() => {
  const tl = window.agentmap.timeline, c = document.querySelector('canvas.timeline');
  tl.hover = -1; tl.fit();
  const dpr = devicePixelRatio || 1, probe = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const rgb = css => { probe.clearRect(0, 0, 1, 1); probe.fillStyle = css; probe.fillRect(0, 0, 1, 1); return [...probe.getImageData(0, 0, 1, 1).data.slice(0, 3)]; };
  // Pixels are read from a copy (the page's own canvas is not made for
  // reading back, and the browser says so when it is).
  const copy = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const snap = () => { copy.canvas.width = c.width; copy.canvas.height = c.height; copy.drawImage(c, 0, 0); };
  const at = (x, y) => [...copy.getImageData(Math.floor(x * dpr), Math.floor(y * dpr), 1, 1).data.slice(0, 3)];
  const near = (a, b, tol) => a.every((v, i) => Math.abs(v - b[i]) <= tol);
  const css = n => getComputedStyle(document.documentElement).getPropertyValue(n).trim();
  const kinds = new Set(['read', 'search', 'edit', 'exec', 'verify', 'mcp', 'skill', 'subagent', 'web', 'tool', 'error', 'compaction']);
  const out = {errors: 0, retries: 0, calls: 0, wrong: []};
  const W = tl.width(), rh = tl.rowH;
  const mark = i => { const sp = tl.span[i], x0 = tl.x(sp[0]), w = Math.max(2, tl.x(sp[1]) - x0); return {x0, w, m: x0 + w / 2, y: tl.axisH + tl.ev[i].l * rh}; };
  const inView = k => k.x0 >= tl.gutter + 6 && k.x0 + k.w <= W - 14;
  const say = (what, i, got, want) => out.wrong.length < 10 && out.wrong.push(what + ' #' + i + ' (' + tl.ev[i].k + '): rgb ' + got + ', want ' + want);
  // The signs are drawn over every bar, in one colour each: whatever lies
  // near, a failed event shows the error colour and a retry the warning one.
  snap();
  tl.ev.forEach((e, i) => {
    const k = mark(i);
    if (!inView(k)) return;
    if (e.e) {
      const got = at(k.m, k.y + 7), want = rgb(css('--err'));
      out.errors++; if (!near(got, want, 8)) say('error sign', i, got, want);
    }
    if (e.r !== undefined) {
      const got = at(k.m + 3, k.y + rh - 4), want = rgb(css('--warn'));
      out.retries++; if (!near(got, want, 60)) say('retry ring', i, got, want);
    }
  });
  // A call's bar, in its kind's colour, is checked zoomed in on it, where
  // no other bar of its band lies within 6 px (model requests and user
  // turns are drawn below the band, delays under it).
  const band = k => !['llm', 'user', 'delay'].includes(tl.ev[k].k);
  for (const idx of tl.lanes) {
    for (let j = 0; j < idx.length && out.calls < 40; j++) {
      const i = idx[j], e = tl.ev[i], [a, b] = tl.span[i];
      if (e.e || e.r !== undefined || !kinds.has(e.k)) continue;
      const pad = Math.max(1000, (b - a) * 2);
      tl.set(a - pad, b + pad);
      const k = mark(i);
      if (!inView(k) || k.w < 3) continue;
      const apart = idx.every((o, n) => n === j || !band(o) || tl.x(tl.span[o][0]) > k.x0 + k.w + 6 || Math.max(tl.x(tl.span[o][0]) + 2, tl.x(tl.span[o][1])) < k.x0 - 6);
      if (!apart) continue;
      snap();
      const got = at(k.m, k.y + 9), want = rgb(css('--k-' + e.k));
      out.calls++; if (!near(got, want, 8)) say('call', i, got, want);
    }
  }
  tl.fit();
  return out;
})()`

// checkTimelineSigns runs timelineSigns on the session page on screen and
// fails the test on any mark of the wrong colour, or when fewer marks than
// the session has stood apart to be checked than want asks.
func checkTimelineSigns(t *testing.T, ctx context.Context, w *watchedPage, theme string, want struct{ errors, retries, calls int }) {
	t.Helper()
	var got struct {
		Errors, Retries, Calls int
		Wrong                  []string
	}
	if err := w.Eval(ctx, timelineSigns, &got); err != nil {
		t.Fatal(err)
	}
	for _, s := range got.Wrong {
		t.Errorf("%s theme: %s", theme, s)
	}
	if got.Errors < want.errors || got.Retries < want.retries || got.Calls < want.calls {
		t.Errorf("%s theme: checked %d error signs, %d retry rings and %d calls; want at least %d, %d and %d",
			theme, got.Errors, got.Retries, got.Calls, want.errors, want.retries, want.calls)
	}
	t.Logf("%s theme: the colours of %d error signs, %d retry rings and %d calls read back from the canvas", theme, got.Errors, got.Retries, got.Calls)
}
