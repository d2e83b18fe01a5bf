package report

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

// drawnText is a JavaScript function that draws the timeline again and
// returns the texts it wrote on its canvas, with where: [text, x, y].
const drawnText = `(() => { const tl = window.agentmap.timeline, g = tl.c.getContext('2d'), out = [], fill = g.fillText;
	g.fillText = function (s, x, y) { out.push([String(s), x, y]); return fill.apply(this, arguments); };
	try { tl.draw(); } finally { delete g.fillText; }
	return out; })`

// TestBrowserLaneLabelsTellSubagentsApart: seven subagents of one long
// type ("memory-graph-analyst") have seven labels on the timeline, each
// ending with the start of its lane's id: a label too long for the gutter
// loses the end of its type, never the id that tells the lanes apart.
func TestBrowserLaneLabelsTellSubagentsApart(t *testing.T) {
	b := browser(t)
	m := synthMap(21, 300)
	m.Agents = m.Agents[:1]
	var ids []string
	for i := range 7 {
		id := fmt.Sprintf("sa-%02x%010x", 0xa0+i, 0x1234567*(i+1))
		ids = append(ids, id)
		m.Agents = append(m.Agents, mapfile.Agent{ID: id, Kind: "subagent", Parent: "main", SubagentType: "memory-graph-analyst"})
	}
	for i := range m.Events {
		if i%3 == 1 {
			m.Events[i].Agent = ids[i%len(ids)]
		} else {
			m.Events[i].Agent = ""
		}
	}
	page := writePage(t, t.TempDir(), "session.html", []*Map{m}, Options{Single: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1200, 900)
	w.load(t, ctx, page)
	var drawn [][3]any
	if err := w.Eval(ctx, drawnText+`()`, &drawn); err != nil {
		t.Fatal(err)
	}
	var gutter float64
	if err := w.Eval(ctx, `window.agentmap.timeline.gutter`, &gutter); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, d := range drawn {
		if x, _ := d[1].(float64); x == 6 {
			labels = append(labels, d[0].(string))
		}
	}
	if len(labels) != len(m.Agents) {
		t.Fatalf("the timeline draws %d lane labels for %d lanes: %q", len(labels), len(m.Agents), labels)
	}
	seen := map[string]bool{}
	for i, id := range ids {
		l := labels[1+i]
		if want := " · " + strings.TrimPrefix(id, "sa-")[:6]; !strings.HasSuffix(l, want) || !strings.HasPrefix(l, "memory-") {
			t.Errorf("the lane %s of type memory-graph-analyst is labelled %q: want its type, cut, and %q", id, l, want)
		}
		if seen[l] {
			t.Errorf("two lanes are labelled %q", l)
		}
		seen[l] = true
	}
	var widths []float64
	if err := w.Eval(ctx, `(labels => { const g = window.agentmap.timeline.c.getContext('2d'); g.font = '11px system-ui, sans-serif';
		return labels.map(l => g.measureText(l).width); })(`+jsString(strings.Join(labels, "\n"))+`.split('\n'))`, &widths); err != nil {
		t.Fatal(err)
	}
	for i, px := range widths {
		if 6+px > gutter {
			t.Errorf("the label %q is %.0f px wide: it runs past the gutter of %.0f px", labels[i], px, gutter)
		}
	}
	w.checkQuiet(t, page)
}

// TestBrowserTimelineAxisExact: zoomed in to any extent, the timeline's
// axis labels the gridlines with their exact times: the labels go by one
// step, the step between the gridlines, and each is the time of its line
// (at 250 ms a step, 0:03.25 and 0:03.50, not 0:03.3 and 0:03.5).
func TestBrowserTimelineAxisExact(t *testing.T) {
	b := browser(t)
	m, _, _ := timelineMap()
	page := writePage(t, t.TempDir(), "session.html", []*Map{m}, Options{Single: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := openPage(t, ctx, b, 1200, 900)
	w.load(t, ctx, page)
	label := regexp.MustCompile(`^(?:(\d+):)??(\d+):(\d\d)(\.\d+)?$`)
	parse := func(s string) (float64, bool) {
		p := label.FindStringSubmatch(s)
		if p == nil {
			return 0, false
		}
		h, _ := strconv.ParseFloat("0"+p[1], 64)
		mn, _ := strconv.ParseFloat(p[2], 64)
		sec, _ := strconv.ParseFloat(p[3]+p[4], 64)
		return ((h*60+mn)*60 + sec) * 1000, true
	}
	steps := map[float64]bool{}
	for _, span := range []float64{600, 1400, 2500, 5000, 12000, 40000, 200000, 900000, 3 * 3600e3} {
		var drawn [][3]any
		if err := w.Eval(ctx, `(() => { window.agentmap.timeline.set(3000, `+fmt.Sprint(3000+span)+`); return `+drawnText+`(); })()`, &drawn); err != nil {
			t.Fatal(err)
		}
		var at []float64
		var text []string
		for _, d := range drawn {
			if y, _ := d[2].(float64); y != 11 {
				continue
			}
			v, ok := parse(d[0].(string))
			if !ok {
				t.Errorf("zoomed to %.0f ms, the axis label %q is not a time", span, d[0])
				continue
			}
			at, text = append(at, v), append(text, d[0].(string))
		}
		if len(at) < 3 {
			t.Errorf("zoomed to %.0f ms, the axis has %d labels: %q", span, len(at), text)
			continue
		}
		step := at[1] - at[0]
		steps[step] = true
		for i := 1; i < len(at); i++ {
			if d := at[i] - at[i-1]; d < step-0.5 || d > step+0.5 {
				t.Errorf("zoomed to %.0f ms, the axis labels %q do not go by one step", span, text)
				break
			}
		}
		for i, v := range at {
			if v/step != float64(int64(v/step+0.5)) {
				t.Errorf("zoomed to %.0f ms, the axis label %q is not on a multiple of its step of %.0f ms", span, text[i], step)
			}
		}
	}
	for _, s := range []float64{250, 500, 1000} {
		if !steps[s] {
			t.Errorf("no zoom chose an axis step of %.0f ms (chose %v): the test no longer covers it", s, steps)
		}
	}
	w.checkQuiet(t, page)
}

// TestBrowserOutputsApartFromEdits: in the light and in the dark theme the
// timeline's colour of outputs (commits, pull requests) is unlike every
// other kind's, an edit's first (both were once the same green), by at
// least 25 (CIE ΔE, as the chart's colours are), and stands out from the
// page's background (a contrast of 3:1, as WCAG asks of a graphic).
func TestBrowserOutputsApartFromEdits(t *testing.T) {
	b := browser(t)
	m, _, _ := timelineMap()
	page := writePage(t, t.TempDir(), "session.html", []*Map{m}, Options{Single: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, theme := range []string{"light", "dark"} {
		w := openPage(t, ctx, b, 1200, 900)
		w.theme(t, ctx, theme)
		w.load(t, ctx, page)
		// the legend's swatches, as drawn: "rgb(r, g, b)" made #rrggbb
		var got struct {
			Legend     map[string]string
			Background string
		}
		if err := w.Eval(ctx, `(() => { const hex = c => '#' + c.match(/\d+/g).slice(0, 3).map(v => (+v).toString(16).padStart(2, '0')).join('');
			return {legend: Object.fromEntries([...document.querySelectorAll('.legend span')].filter(s => s.querySelector('.sw')).map(s => [s.textContent, hex(getComputedStyle(s.querySelector('.sw')).backgroundColor)])),
				background: hex(getComputedStyle(document.querySelector('.tlwrap')).backgroundColor)}; })()`, &got); err != nil {
			t.Fatal(err)
		}
		out, ok := got.Legend["output"]
		if !ok || got.Legend["edit"] == "" {
			t.Fatalf("%s theme: the timeline's legend has no output or no edit: %v", theme, got.Legend)
		}
		for kind, c := range got.Legend {
			if kind == "output" {
				continue
			}
			if d := deltaE(out, c); d < 25 {
				t.Errorf("%s theme: outputs (%s) and %s (%s) are %.1f apart (ΔE), too alike", theme, out, kind, c, d)
			}
		}
		if c := contrast(out, got.Background); c < 3 {
			t.Errorf("%s theme: outputs (%s) on the timeline's background (%s) have a contrast of %.2f", theme, out, got.Background, c)
		}
		w.checkQuiet(t, page)
	}
}

// contrast is the WCAG contrast ratio of two sRGB colours #rrggbb.
func contrast(a, b string) float64 {
	lum := func(h string) float64 {
		var l float64
		for i, w := range []float64{0.2126, 0.7152, 0.0722} {
			v, _ := strconv.ParseUint(h[1+2*i:3+2*i], 16, 8)
			x := float64(v) / 255
			if x <= 0.04045 {
				x /= 12.92
			} else {
				x = math.Pow((x+0.055)/1.055, 2.4)
			}
			l += w * x
		}
		return l
	}
	la, lb := lum(a), lum(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}
