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
	"regexp"
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

// binaryDir holds the command agentmapBinary builds; TestMain removes it
// when the tests end, as t.TempDir does for a single test's files.
var binaryDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// agentmapBinary builds the command once per test binary.
var agentmapBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "agentmap-report-test")
	if err != nil {
		return "", err
	}
	binaryDir = dir
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
	agent, n := AgentName(maps[0].Session.AgentTool), 0 // named as the command line names it
	for _, m := range maps {
		if AgentName(m.Session.AgentTool) == agent {
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
	places := map[string]bool{} // outside any repository: a row each after the files
	for _, e := range m.Events {
		for _, tg := range e.Targets {
			if tg.File == nil {
				places[tg.Label] = true
			}
		}
	}
	if sp.Lanes != len(m.Agents) || sp.Files != max(1, len(m.Files)+len(places)) {
		t.Errorf("the page lists %d lanes and %d rows of files, the map has %d lanes, %d files and %d places outside a repository", sp.Lanes, sp.Files, len(m.Agents), len(m.Files), len(places))
	}
	for _, f := range []string{"agent", "repository", "models", "started", "duration", "outcome", "input tokens", "cache write", "cache read", "output tokens", "cost", AgentName(m.Session.AgentTool), m.Session.Outcome} {
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

// costMaps are synthetic sessions laid out for the figures a reader could
// misread: every Cursor session's model has no price; one Codex session
// (mixed) mixes priced and unpriced requests on its main lane and sends
// its subagents' to the unpriced model only; one session (tiny) costs less
// than a tenth of a cent; one works in two repositories. They start on 22
// days in a row, three of them on the sixth, so that the chart over time
// has a last date at its right edge and a count of 3 at its top.
func costMaps() (maps []*Map, mixed, tiny *Map) {
	const unpriced = "mystery-model-9"
	var cursor, codex, claude []*Map
	for seed := uint64(1); len(cursor) < 5 || len(codex) < 6 || len(claude) < 13; seed++ {
		m := synthMap(seed, 40+int(seed%60))
		switch a := m.Session.AgentTool; {
		case a == "cursor" && len(cursor) < 5:
			cursor = append(cursor, m)
		case a == "codex" && len(codex) < 6 && (mixed != nil || len(m.Agents) > 1):
			if mixed == nil {
				mixed = m
			}
			codex = append(codex, m)
		case a == "claude-code" && len(claude) < 13:
			claude = append(claude, m)
		}
	}
	for _, m := range cursor {
		m.Repos[0].Name = "cursor-app"
		m.Session.Models = []string{unpriced}
		for i := range m.Events {
			if e := &m.Events[i]; e.Kind == "llm" {
				e.Model, e.Cost = unpriced, 0
			}
		}
	}
	for _, m := range codex {
		m.Repos[0].Name = "codex-app"
	}
	m := mixed
	m.Session.Models = append(m.Session.Models, unpriced)
	for i, n := 0, 0; i < len(m.Events); i++ {
		if e := &m.Events[i]; e.Kind == "llm" {
			if e.Lane() != "main" || n%2 == 1 {
				e.Model, e.Cost = unpriced, 0
			}
			if e.Lane() == "main" {
				n++
			}
		}
	}
	for i, m := range claude {
		m.Repos[0].Name = fmt.Sprintf("claude-app-%d", i%3)
	}
	claude[1].Repos = append(claude[1].Repos, mapfile.Repo{ID: "r1", Name: "shared-lib"})
	// tiny: its one model request, 100 tokens in and 10 out, costs $0.00045
	tiny = claude[2]
	tiny.Events = tiny.Events[:4]
	tiny.Events[3] = llm(tiny.Events[2].T+500, "claude-sonnet-4-5", 100, 0, 0, 10, 0.00045)
	for i := range tiny.Events {
		tiny.Events[i].Seq, tiny.Events[i].Agent = i, ""
	}
	tiny.Totals = mapfile.Totals{Calls: 2, UserTurns: 1}
	tiny.Agents = tiny.Agents[:1]

	maps = slices.Concat(claude, codex, cursor)
	day0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for i, m := range maps {
		day := i
		if i >= 22 {
			day = 5
		}
		m.Session.StartedAt = day0.AddDate(0, 0, day).Format(time.RFC3339)
		// the totals and the lanes' counters as a builder would write them
		t := &m.Totals
		t.Requests, t.Tokens, t.OutputTokens, t.CostUSD, t.MaxContext = 0, 0, 0, 0, 0
		for j := range m.Agents {
			a := &m.Agents[j]
			a.Requests, a.Tokens, a.Cost, a.Model = 0, 0, 0, ""
		}
		for _, e := range m.Events {
			if e.Kind != "llm" {
				continue
			}
			n := e.In + e.CW + e.CR + e.Out
			t.Requests++
			t.Tokens += n
			t.OutputTokens += e.Out
			t.CostUSD = roundUSD(t.CostUSD + e.Cost)
			t.MaxContext = max(t.MaxContext, e.In+e.CW+e.CR)
			for j := range m.Agents {
				if a := &m.Agents[j]; a.ID == e.Lane() {
					a.Requests++
					a.Tokens += n
					a.Cost = roundUSD(a.Cost + e.Cost)
					if a.Model == "" {
						a.Model = e.Model
					}
				}
			}
		}
	}
	return maps, mixed, tiny
}

// TestBrowserCostsAndCounts opens the report of costMaps in headless
// Chromium and checks what the page says where a figure could mislead: a
// cost that leaves out unpriced tokens says so (the cost card, the tables
// by agent, by repository and the lanes, the chart over time) and a cost
// under a tenth of a cent is not "$0.000"; the y axis of the chart over
// time counts in round steps, with every label distinct, exact and at its
// height, and no label cut at the edge; the repository table says that a
// session counts in each of its repositories; one of anything is singular;
// and at 420 px wide the sticky header keeps to one line.
func TestBrowserCostsAndCounts(t *testing.T) {
	b := browser(t)
	maps, mixed, tiny := costMaps()
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	write := func(file string, maps []*Map, scope string) {
		t.Helper()
		f, err := os.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(f, maps, Options{Scope: scope}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(page, maps, fmt.Sprintf("%d sessions from /home/someone/.local/share/agentmap/maps, since 2026-03-01, every agent", len(maps)))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.theme(t, ctx, "light")
	w.load(t, ctx, page)

	// What each agent filter shows: the cost card, the rows of the tables
	// by agent and by repository (name -> cost cell), the repository
	// table's note, the chart's note (as cost) and, as cost stacked by
	// agent, the chart table's columns and its total per day.
	type view struct {
		Text, RepoNote, DayNote string
		Value                   float64
		Agents, Repos, Days     map[string]string
		Columns                 []string
	}
	views := map[string]view{}
	for _, agent := range []string{"", "cursor", "codex", "claude"} {
		var v view
		if err := w.Eval(ctx, `(agent => { const set = (el, v) => { el.value = v; el.dispatchEvent(new Event('change', {bubbles: true})); };
			set(document.querySelector('[data-f=agent]'), agent); set(document.querySelector('#metric'), 'cost'); set(document.querySelector('#stack'), 'agent');
			const card = title => [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === title);
			const cells = (title, col) => Object.fromEntries([...card(title).querySelectorAll('tbody tr')].filter(tr => tr.children.length > 2).map(tr => [tr.children[0].textContent, tr.children[col].textContent]));
			const k = document.querySelector('[data-kpi=cost]'), note = (el) => el ? el.textContent : '';
			const cols = [...document.querySelectorAll('#daychart details thead th')].map(th => th.textContent);
			const days = Object.fromEntries([...document.querySelectorAll('#daychart details tbody tr')].filter(tr => tr.children.length > 2).map(tr => [tr.children[0].textContent, tr.children[tr.children.length - 2].textContent]));
			const v = {text: k.querySelector('b').textContent, value: +k.dataset.value, agents: cells('By agent', 3), repos: cells('By repository', 3),
				repoNote: note(card('By repository').querySelector('h2 small')), dayNote: note(document.querySelector('#daynote')), columns: cols, days};
			set(document.querySelector('#metric'), 'sessions'); set(document.querySelector('#stack'), 'model'); return v; })(`+jsString(agent)+`)`, &v); err != nil {
			t.Fatal(err)
		}
		views[agent] = v
	}
	w.Eval(ctx, `document.querySelector('#reset').click()`, nil)
	priced := regexp.MustCompile(`^\$[0-9,]+\.[0-9]+$`)
	partly := regexp.MustCompile(`^\$[0-9,]+\.[0-9]+ \+unpriced$`)
	check := func(what, got string, want any) {
		t.Helper()
		switch want := want.(type) {
		case string:
			if got != want {
				t.Errorf("%s reads %q, want %q", what, got, want)
			}
		case *regexp.Regexp:
			if !want.MatchString(got) {
				t.Errorf("%s reads %q, want %s", what, got, want)
			}
		}
	}
	// 1. The cost card.
	check("the cost card of every session (some unpriced)", views[""].Text, partly)
	check("the cost card of the Cursor sessions (all unpriced)", views["cursor"].Text, "unpriced")
	check("the cost card of the Codex sessions (one partly unpriced)", views["codex"].Text, partly)
	check("the cost card of the Claude Code sessions (all priced)", views["claude"].Text, priced)
	if views["cursor"].Value != 0 {
		t.Errorf("the cost card's value of the Cursor sessions is %v, want 0", views["cursor"].Value)
	}
	// 1. The tables by agent and by repository.
	for name, want := range map[string]any{"cursor": "unpriced", "codex": partly, "claude": priced} {
		check("the By agent row of "+name, views[""].Agents[name], want)
	}
	for name, want := range map[string]any{"cursor-app": "unpriced", "codex-app": partly, "claude-app-0": priced, "shared-lib": priced} {
		check("the By repository row of "+name, views[""].Repos[name], want)
	}
	// 4. A session counts in each of its repositories, and the card says so
	// while such a session is shown.
	if !strings.Contains(views[""].RepoNote, "counts in each") || !strings.Contains(views["claude"].RepoNote, "counts in each") {
		t.Errorf("a session in two repositories is shown, the By repository card's note reads %q", views[""].RepoNote)
	}
	if views["cursor"].RepoNote != "" {
		t.Errorf("no session in two repositories is shown, the By repository card's note reads %q", views["cursor"].RepoNote)
	}
	// 1. The chart over time as cost: the note; no column for an agent
	// whose cost is all unpriced; each day with unpriced usage marked.
	for agent, want := range map[string]string{"": "unpriced usage not included", "cursor": "unpriced usage not included", "claude": ""} {
		if got := views[agent].DayNote; got != want {
			t.Errorf("agent filter %q: the chart over time as cost notes %q, want %q", agent, got, want)
		}
	}
	if slices.Contains(views[""].Columns, "cursor") {
		t.Errorf("the table of the chart over time as cost has a column for cursor, whose models are all unpriced: %v", views[""].Columns)
	}
	var unpricedDays []string
	for _, m := range maps {
		if s, _ := m.Start(); m.Session.AgentTool == "cursor" || m == mixed {
			unpricedDays = append(unpricedDays, s.Local().Format(time.DateOnly))
		}
	}
	slices.Sort(unpricedDays)
	for _, d := range slices.Compact(unpricedDays) {
		if got := views[""].Days[d]; !strings.Contains(got, "unpriced") {
			t.Errorf("the chart over time as cost totals %s, a day with unpriced usage, as %q", d, got)
		}
	}
	// 1. A cost under a tenth of a cent.
	var tinyCost string
	raw := jsString(tiny.Session.NativeID())
	if err := w.Eval(ctx, `(() => { const s = document.querySelector('#search'); s.value = `+raw+`; s.dispatchEvent(new Event('input'));
		const r = document.querySelector('#sessions tbody tr[data-s]').children[8].textContent; s.value = ''; s.dispatchEvent(new Event('input')); return r; })()`, &tinyCost); err != nil {
		t.Fatal(err)
	}
	check("the session list's cost of a $0.00045 session", tinyCost, "<$0.001")

	// 2. The y axis of the chart over time, per day, week and month, of
	// sessions, tokens and cost; and no label of it cut at an edge.
	var axis []string
	if err := w.Eval(ctx, chartAxis+`(['day', 'week', 'month'], ['sessions', 'tokens', 'cost'])`, &axis); err != nil {
		t.Fatal(err)
	}
	for _, s := range axis {
		t.Errorf("the chart over time, %s", s)
	}
	w.shot(t, ctx, "costs-overview.png", true)

	// 1. The lanes of a session: a lane whose requests went to an unpriced
	// model says so.
	wantLanes := map[string]any{}
	for _, a := range mixed.Agents {
		var unp, cost bool
		for _, e := range mixed.Events {
			if e.Kind == "llm" && e.Lane() == a.ID && e.In+e.CW+e.CR+e.Out > 0 {
				unp, cost = unp || e.Model == "mystery-model-9", cost || e.Cost > 0
			}
		}
		wantLanes[a.ID] = map[bool]any{false: priced, true: map[bool]any{false: "unpriced", true: partly}[cost]}[unp]
	}
	if wantLanes["main"] != partly || !slices.ContainsFunc(mixed.Agents, func(a mapfile.Agent) bool { return wantLanes[a.ID] == "unpriced" }) {
		t.Fatalf("the mixed session's lanes are not what the test needs: %v", wantLanes)
	}
	openByClick(t, ctx, w, mixed.Session.NativeID())
	var lanes map[string]string
	if err := w.Eval(ctx, `(() => { const c = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').textContent === 'Lanes');
		return Object.fromEntries([...c.querySelectorAll('tbody tr')].map(tr => [tr.children[0].textContent, tr.children[9].textContent])); })()`, &lanes); err != nil {
		t.Fatal(err)
	}
	for id, want := range wantLanes {
		check("the Lanes row of "+id, lanes[id], want)
	}
	// and so does the details pane of a request to it
	req := slices.IndexFunc(mixed.Events, func(e mapfile.Event) bool { return e.Model == "mystery-model-9" && e.In+e.CW+e.CR+e.Out > 0 })
	var details string
	if err := w.Eval(ctx, fmt.Sprintf(`(() => { window.agentmap.timeline.point(%d); const dt = [...document.querySelectorAll('#details dt')].find(d => d.textContent === 'cost');
		return dt ? dt.nextElementSibling.textContent : ''; })()`, req), &details); err != nil {
		t.Fatal(err)
	}
	check(fmt.Sprintf("the details pane's cost of request #%d to an unpriced model", req), details, "unpriced")
	w.shot(t, ctx, "costs-session.png", false)
	w.checkQuiet(t, page)

	// 3. One of anything is singular: a report of one session, with one
	// lane and one compaction.
	one := synthMap(3, 60)
	one.Agents = one.Agents[:1]
	for i := range one.Events {
		one.Events[i].Agent = "main"
	}
	one.Totals.Compactions = 1
	// and it touched two places outside any repository: one edited twice,
	// one read, each a row of the files table after the files
	outsideAt := 0
	for i := range one.Events {
		if e := &one.Events[i]; e.Kind == "exec" && outsideAt < 3 {
			e.Targets = append(e.Targets, mapfile.Target{Scope: "outside", Label: []string{"/tmp (scratch)", "~", "/tmp (scratch)"}[outsideAt], Touch: []string{"edit", "read", "edit"}[outsideAt]})
			outsideAt++
		}
	}
	if outsideAt < 3 {
		t.Fatalf("the one session has %d shell calls, the test needs 3", outsideAt)
	}
	onePage := filepath.Join(dir, "one.html")
	write(onePage, []*Map{one}, "1 session")
	w = openPage(t, ctx, b, 1400, 1000)
	w.theme(t, ctx, "light")
	w.load(t, ctx, onePage)
	var counts struct{ Count, Sessions, Compactions, Context, Pager string }
	if err := w.Eval(ctx, `(() => { const kpi = k => document.querySelector('[data-kpi=' + k + '] span').textContent;
		const card = title => [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === title);
		return {count: document.querySelector('#count').textContent, sessions: kpi('sessions'), compactions: kpi('compactions'),
			context: card('Context fill (largest main-agent context)').querySelector('h2 small').textContent, pager: document.querySelector('.pager span').textContent}; })()`, &counts); err != nil {
		t.Fatal(err)
	}
	check("the count of one session", counts.Count, "1 session")
	check("the sessions card of one session", counts.Sessions, "session")
	check("the compactions card of one compaction", counts.Compactions, "compaction")
	check("the context fill card's note of one compaction", counts.Context, "1 compaction")
	check("the session list's pager of one session", counts.Pager, "page 1 of 1 (1 session)")
	openByClick(t, ctx, w, one.Session.NativeID())
	var timeline string
	w.Eval(ctx, `[...document.querySelectorAll('.card h2')].find(h => h.firstChild.textContent === 'Timeline').querySelector('small').textContent`, &timeline)
	if !strings.HasPrefix(timeline, fmt.Sprintf("%d events on 1 lane ·", len(one.Events))) {
		t.Errorf("the timeline of a session of one lane reads %q", timeline)
	}
	var files struct {
		Note string
		Rows [][]string
	}
	if err := w.Eval(ctx, `(() => { const c = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === 'Files touched');
		return {note: c.querySelector('h2 small').textContent, rows: [...c.querySelectorAll('tbody tr')].map(tr => [...tr.children].map(td => td.textContent))}; })()`, &files); err != nil {
		t.Fatal(err)
	}
	check("the files table's note", files.Note, fmt.Sprintf("%d files, 2 places outside any repository, path mode relative", len(one.Files)))
	if n := len(files.Rows); n < 2 || !slices.Equal(files.Rows[n-2][:4], []string{"/tmp (scratch) (outside any repository)", "0", "2", "0"}) ||
		!slices.Equal(files.Rows[n-1][:4], []string{"~ (outside any repository)", "1", "0", "0"}) {
		t.Errorf("the files table ends %q; want /tmp (scratch) edited twice, then ~ read once", files.Rows[max(0, n-2):])
	}
	w.checkQuiet(t, onePage)

	// 5. At 420 px wide, the sticky header keeps to one line.
	narrow := openPage(t, ctx, b, 420, 900)
	narrow.theme(t, ctx, "light")
	narrow.load(t, ctx, page)
	var hdr struct{ Header, Scope, Line float64 }
	if err := narrow.Eval(ctx, `(() => { const s = document.querySelector('.scope');
		return {header: document.querySelector('header').getBoundingClientRect().height, scope: s.getBoundingClientRect().height, line: parseFloat(getComputedStyle(s).lineHeight)}; })()`, &hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.Header > 52 || hdr.Scope > hdr.Line+1 {
		t.Errorf("at 420 px wide the header is %.0f px high, its subtitle %.0f px (one line is %.0f)", hdr.Header, hdr.Scope, hdr.Line)
	}
	narrow.shot(t, ctx, "costs-narrow.png", false)
	narrow.checkQuiet(t, page)
}

// repoRows is the report's rule for its table by repository, as sessions
// and tokens per repository name: a session counts whole in each name its
// repositories have, once however many of them have that name, and under
// "" when it has none.
func repoRows(maps []*Map) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, m := range maps {
		names := map[string]bool{}
		for _, r := range m.Repos {
			names[r.Name] = true
		}
		if len(names) == 0 {
			names[""] = true
		}
		for n := range names {
			c := out[n]
			out[n] = [2]int64{c[0] + 1, c[1] + m.Totals.Tokens}
		}
	}
	return out
}

// TestBrowserRepositoriesCountEachSessionOnce opens a report of a session
// in two repositories, one in none, one in two checkouts that share a name
// (two repositories both named api) and one in a single repository: the
// table by repository counts each session whole in each of its
// repositories, the one without under "(no repository)", and the one whose
// two repositories share a name once in that name, not twice; the card's
// note that a session counts in each of its repositories shows for the
// first and not for the third alone.
func TestBrowserRepositoriesCountEachSessionOnce(t *testing.T) {
	b := browser(t)
	two, none, checkouts, one := synthMap(11, 60), synthMap(12, 60), synthMap(13, 60), synthMap(14, 60)
	two.Repos = []mapfile.Repo{{ID: "r0", Name: "api"}, {ID: "r1", Name: "lib"}}
	none.Repos = []mapfile.Repo{}
	checkouts.Repos = []mapfile.Repo{{ID: "r0", Name: "api", Remote: "github.com/acme/api"}, {ID: "r1", Name: "api", Remote: "github.com/acme/api"}}
	one.Repos = []mapfile.Repo{{ID: "r0", Name: "lib"}}
	maps := []*Map{two, none, checkouts, one}
	want := repoRows(maps)
	if len(want) != 3 || want["api"][0] != 2 || want["lib"][0] != 2 || want[""][0] != 1 {
		t.Fatalf("the rule counts %v", want)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, maps, Options{Scope: "4 sessions"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.load(t, ctx, page)
	type table struct {
		Rows map[string][2]int64
		Note string
	}
	read := func(search string) table {
		t.Helper()
		var got table
		if err := w.Eval(ctx, `(q => { const s = document.querySelector('#search'); s.value = q; s.dispatchEvent(new Event('input'));
			const c = [...document.querySelectorAll('.card')].find(c => c.querySelector('h2').firstChild.textContent === 'By repository');
			const rows = Object.fromEntries([...c.querySelectorAll('tbody tr')].filter(tr => tr.children.length > 2)
				.map(tr => [tr.children[0].textContent, [+tr.children[1].dataset.v, +tr.children[2].dataset.v]]));
			const note = c.querySelector('h2 small'); return {rows, note: note ? note.textContent : ''}; })(`+jsString(search)+`)`, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := read("")
	if len(all.Rows) != len(want) {
		t.Errorf("the table by repository has the rows %v, want %v", all.Rows, want)
	}
	for name, w := range want {
		label := name
		if name == "" {
			label = "(no repository)"
		}
		if all.Rows[label] != w {
			t.Errorf("the table by repository's row %q: %v sessions and tokens, want %v", label, all.Rows[label], w)
		}
	}
	if !strings.Contains(all.Note, "counts in each") {
		t.Errorf("a session in two repositories is shown, the card's note reads %q", all.Note)
	}
	alone := read(checkouts.Session.NativeID())
	if alone.Rows["api"] != [2]int64{1, checkouts.Totals.Tokens} || len(alone.Rows) != 1 {
		t.Errorf("the session of two checkouts named api alone: the table by repository has %v", alone.Rows)
	}
	if strings.Contains(alone.Note, "counts in each") {
		t.Errorf("the session of two checkouts named api alone: the card's note reads %q", alone.Note)
	}
	read("")
	w.checkQuiet(t, page)
}

// chartAxis checks the chart over time for each unit and metric given: the
// y labels are distinct, 0 and then a round step (1, 2 or 5 × 10^k, whole
// for counts) apart, each at the height of its value, the bars scaled to
// the top one (each day's bar ends at the height of its total, from the
// chart's table), the top the first step at or above the tallest bar; and
// no label of the chart lies outside its picture. It returns what is wrong.
const chartAxis = `((units, metrics) => {
  const out = [];
  const parse = s => { s = s.replace(/[$,]/g, ''); const m = {k: 1e3, M: 1e6, G: 1e9}[s.slice(-1)]; return m ? +s.slice(0, -1) * m : +s; };
  const set = (id, v) => { const el = document.querySelector('#' + id); el.value = v; el.dispatchEvent(new Event('change')); };
  for (const unit of units) for (const metric of metrics) {
    set('unit', unit); set('metric', metric);
    const at = 'per ' + unit + ' of ' + metric + ': ', svg = document.querySelector('#daychart svg'), vb = svg.viewBox.baseVal;
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBBox();
      if (b.x < 0 || b.y < 0 || b.x + b.width > vb.width || b.y + b.height > vb.height) out.push(at + 'the label ' + t.textContent + ' is cut at the edge (' + [b.x, b.y, b.width, b.height].map(Math.round) + ')');
    }
    const labels = [...svg.querySelectorAll('text[text-anchor=end]')], text = labels.map(t => t.textContent).join(' ');
    const v = labels.map(t => parse(t.textContent)), y = [...svg.querySelectorAll('line')].map(l => +l.getAttribute('y1'));
    if (new Set(v).size !== v.length) out.push(at + 'the y labels repeat: ' + text);
    const step = v[1] - v[0], top = v[v.length - 1], y0 = y[0], yt = y[y.length - 1], mag = 10 ** Math.floor(Math.log10(step) + 1e-9);
    if (v[0] !== 0 || ![1, 2, 5, 10].some(m => Math.abs(step - m * mag) <= 1e-9 * step) || (metric !== 'cost' && step % 1)) out.push(at + 'the y labels ' + text + ' do not go by a round step');
    if (v.some((x, g) => Math.abs(x - g * step) > 1e-9 * top)) out.push(at + 'the y labels ' + text + ' are not evenly spaced');
    v.forEach((x, g) => { if (Math.abs((y0 - y[g]) / (y0 - yt) - x / top) > 1e-6) out.push(at + 'the y label ' + labels[g].textContent + ' is not at its height (' + text + ')'); });
    const tops = new Map();
    for (const r of svg.querySelectorAll('rect:not([fill=transparent])')) { const d = +r.dataset.d; tops.set(d, Math.min(tops.has(d) ? tops.get(d) : Infinity, +r.getAttribute('y'))); }
    const totals = [...document.querySelectorAll('#daychart details tbody tr')].map(tr => +tr.children[tr.children.length - 2].dataset.v).filter(x => x > 0);
    const bars = [...tops.keys()].sort((a, b) => a - b);
    if (bars.length !== totals.length) { out.push(at + bars.length + ' bars for ' + totals.length + ' totals'); continue; }
    bars.forEach((d, j) => { const want = y0 - (y0 - yt) * totals[j] / top; if (Math.abs(tops.get(d) - want) > 0.02) out.push(at + 'the bar of ' + totals[j] + ' ends at y ' + tops.get(d) + ', its height on the axis is ' + want.toFixed(2)); });
    const max = Math.max(...totals);
    if (!(max <= top * (1 + 1e-9) && max > top - step)) out.push(at + 'the axis goes up to ' + top + ' for bars up to ' + max);
  }
  set('unit', 'auto'); set('metric', 'sessions');
  return out;
})`

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A session some of whose model requests recorded no usage, not all, shows
// its tokens and cost marked "*" in the session list, as show and list mark
// them, with a note under the list; one whose requests all did is not
// marked.
func TestBrowserPartlyRecordedUsage(t *testing.T) {
	b := browser(t)
	var partly, whole *Map
	for seed := uint64(1); partly == nil || whole == nil; seed++ {
		m := synthMap(seed, 60)
		n := 0
		for i := range m.Events {
			if m.Events[i].Kind == "llm" && !m.Events[i].NoUsage() {
				n++
			}
		}
		if m.Session.AgentTool != "claude-code" || n < 2 || m.Totals.Tokens == 0 {
			continue
		}
		if partly == nil {
			partly = m
			for i := range m.Events {
				if e := &m.Events[i]; e.Kind == "llm" {
					e.In, e.CW, e.CR, e.Out, e.Cost = 0, 0, 0, 0, 0 // the first request recorded none
					break
				}
			}
			continue
		}
		whole = m
	}
	page := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, []*Map{partly, whole}, Options{Scope: "2 sessions"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1400, 1000)
	w.load(t, ctx, page)
	var got struct {
		Rows map[string][2]string
		Note string
	}
	if err := w.Eval(ctx, `(() => ({rows: Object.fromEntries([...document.querySelectorAll('#sessions tbody tr[data-s]')].map(tr =>
		[tr.querySelector('a').title, [tr.children[7].textContent, tr.children[8].textContent]])),
		note: (document.querySelector('#partly') || {textContent: ''}).textContent}))()`, &got); err != nil {
		t.Fatal(err)
	}
	p, o := got.Rows[partly.Session.NativeID()], got.Rows[whole.Session.NativeID()]
	if !strings.HasSuffix(p[0], "*") || !strings.HasSuffix(p[1], "*") || strings.HasSuffix(o[0], "*") || strings.HasSuffix(o[1], "*") {
		t.Errorf("tokens and cost: partly recorded %q, recorded %q", p, o)
	}
	if !strings.Contains(got.Note, "1 session some of whose model requests recorded no token usage") {
		t.Errorf("the note under the list: %q", got.Note)
	}
	w.checkQuiet(t, page)
}
