package report

import (
	"bufio"
	"cmp"
	_ "embed"
	"fmt"
	"html"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// The page is rendered in the browser from compact data by a small
// hand-written script (report.js): SVG for the charts, a canvas for the
// session timeline, which must draw 20,000 marks and redraw them on every
// zoom or pan step. Nothing is fetched: the CSS and script are inlined and
// the data travels in the page as gzipped, base64-encoded JSON that the
// browser's DecompressionStream inflates, the overview at load and a
// session's events only when its page is opened.

//go:embed assets/report.css
var css string

//go:embed assets/report.js
var script string

// Options tune a report.
type Options struct {
	// Title heads the page.
	Title string
	// Generated stamps the page (default: now).
	Generated time.Time
	// Single makes a report of one session's page (agentmap report
	// --session): the page opens on it and has no overview.
	Single bool
	// Scope says which sessions were asked for (the command's filters),
	// shown under the title.
	Scope string
}

// Write renders maps as one self-contained HTML page.
func Write(w io.Writer, maps []*Map, opt Options) error {
	if opt.Generated.IsZero() {
		opt.Generated = time.Now()
	}
	if opt.Title == "" {
		opt.Title = "agentmap report"
	}
	maps = slices.Clone(maps)
	slices.SortStableFunc(maps, func(a, b *Map) int {
		return cmp.Or(cmp.Compare(b.Session.StartedAt, a.Session.StartedAt), cmp.Compare(a.Session.ID, b.Session.ID))
	})
	st := newStrtab()
	ov := overview{Version: 1, Generated: opt.Generated.UTC().Format(time.RFC3339), Single: opt.Single}
	for _, m := range maps {
		ov.Sessions = append(ov.Sessions, sessionRow(st, m, len(m.Events)))
		ov.Aggs = append(ov.Aggs, sessionAgg(st, m))
	}
	ov.Strings = st.list
	if ov.Sessions == nil {
		ov.Sessions = [][]any{}
		ov.Aggs = []agg{}
	}
	packed, err := packJSON(ov)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	pages, err := packPages(maps)
	if err != nil {
		return err
	}

	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>%s</title>
<style>%s</style>
</head><body data-view="loading">
<header><a class="brand" href="#">%s</a><span class="scope">%s</span>
<input id="search" type="search" placeholder="Search sessions: id, repo, model" aria-label="Search sessions"></header>
<div id="filters"></div>
<main id="view"><p class="muted">Loading…</p></main>
<div id="tip" role="tooltip"></div>
<script type="application/x-agentmap" id="ov">%s</script>
`, html.EscapeString(opt.Title), css, html.EscapeString(opt.Title), html.EscapeString(opt.Scope), packed)
	for i, p := range pages {
		fmt.Fprintf(bw, "<script type=\"application/x-agentmap\" id=\"s%d\">%s</script>\n", i, p)
	}
	fmt.Fprintf(bw, "<script>%s</script>\n</body></html>\n", script)
	return bw.Flush()
}

// packPages packs every session page on all cores (gzip is most of the
// cost of a large report).
func packPages(maps []*Map) ([]string, error) {
	pages := make([]string, len(maps))
	errs := make([]error, len(maps))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= len(maps) {
					return
				}
				pages[j], errs[j] = packJSON(buildSessionPage(maps[j]))
			}
		})
	}
	wg.Wait()
	for j, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("report: session %s: %w", maps[j].Session.NativeID(), err)
		}
	}
	return pages, nil
}

// Unpack returns the JSON documents a report carries (the overview, then
// each session page), inflated: what an audit must search, since the page
// holds them compressed.
func Unpack(page []byte) ([][]byte, error) {
	var out [][]byte
	s := string(page)
	const open = `<script type="application/x-agentmap" id="`
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return out, nil
		}
		s = s[i+len(open):]
		j := strings.Index(s, `">`)
		k := strings.Index(s, "</script>")
		if j < 0 || k < j {
			return nil, fmt.Errorf("report: malformed data element")
		}
		b, err := unpackJSON(s[j+2 : k])
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		s = s[k:]
	}
}
