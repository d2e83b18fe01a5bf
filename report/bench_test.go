package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmap/agentmap/internal/cputime"
	"github.com/agentmap/agentmap/report/internal/cdp"
)

// BenchmarkReport measures writing the report of 1,000 and 10,000
// synthetic sessions (20 to 219 events each) and its size, then, when a
// Chromium is installed, the time the browser takes from navigation to
// the rendered overview (render-ms, one load). The last case is one
// session of 20,000 events: render-ms is the time to its drawn timeline,
// redraw-ms the time to draw all of it again (a wheel step or a drag).
// For the overviews, filter-ms is the time to narrow it to one agent,
// loaded-ms the time from navigation until the browser has read the whole
// page (the overview is drawn before), and open-ms the time to a session's
// page opened from the overview after that.
// cpu-s/op is the CPU time of one report (both cores), the figure to
// compare on a busy machine, where ns/op waits for a core.
//
//	go test ./report -run '^$' -bench Report -benchtime 3x
func BenchmarkReport(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			maps := synthMaps(n)
			benchWrite(b, maps, Options{})
		})
	}
	b.Run("session-events=20000", func(b *testing.B) {
		benchWrite(b, []*Map{synthMap(42, 20000)}, Options{Single: true})
	})
}

func benchWrite(b *testing.B, maps []*Map, opt Options) {
	var buf bytes.Buffer
	cpu0, runs := cputime.Process(), 0
	for b.Loop() {
		runs++
		buf.Reset()
		if err := Write(&buf, maps, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len())/1e6, "MB")
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(runs), "cpu-s/op")
	b.StopTimer()
	if _, err := cdp.Find(); err != nil {
		b.Logf("no render time: %v", err)
		return
	}
	page := filepath.Join(b.TempDir(), "report.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	br := browser(b)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := openPage(b, ctx, br, 1400, 1000)
	ms := w.load(b, ctx, page)
	if opt.Single {
		var marks int
		w.Eval(ctx, `+document.querySelector('canvas.timeline').dataset.marks`, &marks)
		if marks != len(maps[0].Events) {
			b.Errorf("the timeline draws %d marks of %d events", marks, len(maps[0].Events))
		}
		// A redraw of the whole session, as every wheel step or drag at
		// the widest zoom does.
		var draw float64
		if err := w.Eval(ctx, `(() => { const tl = window.agentmap.timeline, t0 = performance.now(); for (let i = 0; i < 20; i++) tl.set(tl.min - i, tl.max); return (performance.now() - t0) / 20; })()`, &draw); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(draw, "redraw-ms")
	} else {
		// The overview again for one agent's sessions (a filter), and a
		// session's page opened from it.
		var filter float64
		if err := w.Eval(ctx, `(() => { const s = document.querySelector('[data-f=agent]'), t0 = performance.now(); s.value = s.options[1].value;
			s.dispatchEvent(new Event('change', {bubbles: true})); return performance.now() - t0; })()`, &filter); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(filter, "filter-ms")
		// The overview is drawn while the browser still reads the sessions'
		// data that follows the script: loaded-ms is when it has all.
		var loaded float64
		if err := w.Eval(ctx, `new Promise(done => { const wait = () => document.readyState === 'complete' ? done(performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd) : setTimeout(wait, 5); wait(); })`, &loaded); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(loaded, "loaded-ms")
		var open float64
		if err := w.Eval(ctx, `new Promise(done => { const t0 = performance.now(); location.hash = '#s/' + document.querySelector('#sessions tr[data-s]').dataset.s;
			const wait = () => document.body.dataset.view === 'session' ? done(performance.now() - t0) : setTimeout(wait, 1); wait(); })`, &open); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(open, "open-ms")
	}
	w.checkQuiet(b, page)
	b.ReportMetric(ms, "render-ms")
}
