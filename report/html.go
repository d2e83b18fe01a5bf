package report

import (
	"bufio"
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// Filtered says that filters picked the sessions from a source that
	// has some: a report of none then says that none matched, rather than
	// that no session is mapped yet.
	Filtered bool
}

// Write renders maps as one self-contained HTML page.
func Write(w io.Writer, maps []*Map, opt Options) error {
	pages, err := PagesOf(maps)
	if err != nil {
		return err
	}
	return WritePages(w, pages, opt)
}

// WritePages renders the pages of maps (PageOf), in the order of their
// maps, as Write renders the maps: the same bytes. A command that reports
// on tens of thousands of maps keeps their pages instead of the maps.
func WritePages(w io.Writer, pages []Page, opt Options) error {
	if opt.Generated.IsZero() {
		opt.Generated = time.Now()
	}
	if opt.Title == "" {
		opt.Title = "agentmap report"
	}
	if !opt.Single {
		pages = pagesCountedOnce(pages) // the one session asked for is shown, whatever it is
	}
	// Newest first, the pages taken by pointer: a copy of 100,000 pages
	// to sort would be some 50 MB more held through the writing.
	order := make([]*Page, len(pages))
	for i := range pages {
		order[i] = &pages[i]
	}
	slices.SortStableFunc(order, func(a, b *Page) int {
		return cmp.Or(cmp.Compare(b.session.StartedAt, a.session.StartedAt), cmp.Compare(a.session.ID, b.session.ID))
	})
	st := newStrtab()
	// The page shows its times in the reader's zone, but the scope's dates
	// (--since, --until) are the generating machine's: the page says both.
	ov := overview{Version: 1, Generated: opt.Generated.Format(time.RFC3339), Zone: zoneLabel(opt.Generated), Single: opt.Single, Filtered: opt.Filtered,
		Sessions: make([][]any, 0, len(order)), Aggs: make([]agg, 0, len(order))}
	for _, p := range order {
		row, a := p.interned(st)
		ov.Sessions = append(ov.Sessions, row)
		ov.Aggs = append(ov.Aggs, a)
	}
	ov.Strings = st.list
	chunks, first, err := packPages(order)
	if err != nil {
		return err
	}
	ov.Chunks = first
	if ov.Chunks == nil {
		ov.Chunks = []int{}
	}
	packed, err := packJSON(ov)
	if err != nil {
		return fmt.Errorf("report: %w", err)
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
<header><a class="brand" href="#">%s</a><span class="scope" title="%[4]s">%[4]s</span>
<input id="search" type="search" placeholder="Search sessions: id, repo, model" aria-label="Search sessions"></header>
<div id="filters"></div>
<main id="view"><p class="muted">Loading…</p></main>
<footer id="foot"></footer>
<div id="tip" role="tooltip"></div>
<script type="application/x-agentmap" id="ov">%s</script>
`, html.EscapeString(opt.Title), css, html.EscapeString(opt.Title), html.EscapeString(opt.Scope), packed)
	// The script comes before the sessions' data: it draws the overview
	// while the browser reads on, and waits for the rest of the page only
	// when a session is opened. With 10,000 sessions that shows the
	// overview about half a second sooner than a script at the end, and
	// the whole page about as much later (bench: render-ms, loaded-ms).
	fmt.Fprintf(bw, "<script>%s</script>\n", script)
	for k, c := range chunks {
		fmt.Fprintf(bw, "<script type=\"application/x-agentmap\" id=\"c%d\">%s</script>\n", k, c)
	}
	fmt.Fprintf(bw, "</body></html>\n")
	return bw.Flush()
}

// zoneLabel names the zone of t: its offset from UTC ("UTC+9", "UTC-3:30",
// "UTC"), then the zone's name where one is known (an IANA name from TZ,
// else its abbreviation): "UTC+9 (Asia/Tokyo)", "UTC+1 (CET)".
func zoneLabel(t time.Time) string {
	abbr, off := t.Zone()
	s := "UTC"
	if off != 0 {
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		s += sign + strconv.Itoa(off/3600)
		if m := off % 3600 / 60; m != 0 {
			s += fmt.Sprintf(":%02d", m)
		}
	}
	name := t.Location().String()
	if name == "Local" || name == "" || strings.HasPrefix(name, ":") {
		name = abbr
	}
	if name == "" || name == "UTC" || strings.HasPrefix(name, "+") || strings.HasPrefix(name, "-") {
		return s
	}
	return s + " (" + name + ")"
}

// chunkBytes is about how much session data (JSON) is gzipped together:
// sessions side by side share their names and numbers, so one stream packs
// them tighter than one each, and a page of few, large elements is quicker
// for the browser to read than one of ten thousand. Opening a session
// inflates its chunk, a few milliseconds at this size.
const chunkBytes = 256 << 10

// packPages packs the session pages (their JSON) into chunks of
// consecutive sessions, on all cores (gzip is most of the cost of a large
// report); first[k] is the index of chunk k's first session.
func packPages(pages []*Page) (chunks []string, first []int, err error) {
	size := 0
	for j := range pages {
		if j == 0 || size+pages[j].size > chunkBytes {
			first = append(first, j)
			size = 0
		}
		size += pages[j].size + 1
	}
	chunks = make([]string, len(first))
	err = parallel(len(first), func(k int) error {
		end := len(pages)
		if k+1 < len(first) {
			end = first[k+1]
		}
		var doc bytes.Buffer
		doc.WriteByte('[')
		for j := first[k]; j < end; j++ {
			if j > first[k] {
				doc.WriteByte(',')
			}
			raw, err := pages[j].json()
			if err != nil {
				return err
			}
			doc.Write(raw)
		}
		doc.WriteByte(']')
		var err error
		chunks[k], err = packBytes(doc.Bytes())
		return err
	})
	return chunks, first, err
}

// parallel runs f(0) … f(n-1) on all cores and returns the first error.
func parallel(n int, f func(int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for j := int(next.Add(1) - 1); j < n; j = int(next.Add(1) - 1) {
				errs[j] = f(j)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Unpack returns the JSON documents a report carries (the overview, then
// each session page, in the overview's order), inflated: what an audit must
// search, since the page holds them compressed.
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
		id := s[:j]
		b, err := unpackJSON(s[j+2 : k])
		if err != nil {
			return nil, err
		}
		s = s[k:]
		if !strings.HasPrefix(id, "c") {
			out = append(out, b)
			continue
		}
		var pages []json.RawMessage
		if err := json.Unmarshal(b, &pages); err != nil {
			return nil, fmt.Errorf("report: data element %s: %w", id, err)
		}
		for _, p := range pages {
			out = append(out, p)
		}
	}
}
