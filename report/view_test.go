package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

// TestChartColoursApart: the colours of the chart over time, and the grey
// of its "other", are far enough apart (CIE76 ΔE over 25) that no two
// series read as one.
func TestChartColoursApart(t *testing.T) {
	m := regexp.MustCompile(`const PALETTE = \[([^\]]*)\]`).FindStringSubmatch(script)
	o := regexp.MustCompile(`const OTHER = '(#[0-9a-f]{6})'`).FindStringSubmatch(script)
	if m == nil || o == nil {
		t.Fatal("report.js names no PALETTE and OTHER")
	}
	colours := regexp.MustCompile(`#[0-9a-f]{6}`).FindAllString(m[1], -1)
	colours = append(colours, o[1])
	if len(colours) < 10 {
		t.Fatalf("the palette has %d colours", len(colours))
	}
	for i, a := range colours {
		for _, b := range colours[i+1:] {
			if d := deltaE(a, b); d < 25 {
				t.Errorf("the chart colours %s and %s are %.1f apart (ΔE), too alike", a, b, d)
			}
		}
	}
}

// deltaE is the CIE76 distance of two sRGB colours #rrggbb.
func deltaE(a, b string) float64 {
	lab := func(h string) [3]float64 {
		var c [3]float64
		for i := range c {
			v, _ := strconv.ParseUint(h[1+2*i:3+2*i], 16, 8)
			x := float64(v) / 255
			if x > 0.04045 {
				x = math.Pow((x+0.055)/1.055, 2.4)
			} else {
				x /= 12.92
			}
			c[i] = x
		}
		f := func(v float64) float64 {
			if v > 0.008856 {
				return math.Cbrt(v)
			}
			return 7.787*v + 16.0/116
		}
		x := f((c[0]*0.4124 + c[1]*0.3576 + c[2]*0.1805) / 0.95047)
		y := f(c[0]*0.2126 + c[1]*0.7152 + c[2]*0.0722)
		z := f((c[0]*0.0193 + c[1]*0.1192 + c[2]*0.9505) / 1.08883)
		return [3]float64{116*y - 16, 500 * (x - y), 200 * (y - z)}
	}
	p, q := lab(a), lab(b)
	return math.Sqrt((p[0]-q[0])*(p[0]-q[0]) + (p[1]-q[1])*(p[1]-q[1]) + (p[2]-q[2])*(p[2]-q[2]))
}

// TestEventLabelNamesTheRepository: a commit and a pull request are known
// by their repository's name (and a pull request by its number), not by
// the id the map gives the repository; in the page and in show --events.
func TestEventLabelNamesTheRepository(t *testing.T) {
	m := &Map{Schema: "agentplay/v1", Session: mapfile.Session{ID: "local:codex:x", AgentTool: "codex"},
		Repos: []mapfile.Repo{{ID: "r0", Name: "web-app"}, {ID: "r1", Name: "shared-lib"}},
		Events: []mapfile.Event{
			{Seq: 0, T: 10, Kind: "commit", Repo: "r1", SHA: "abc1234"},
			{Seq: 1, T: 20, Kind: "pr_merge", Repo: "r0", Number: 12},
			{Seq: 2, T: 30, Kind: "pr_comment", Repo: "r0"},
			{Seq: 3, T: 40, Kind: "commit", Repo: "r9"}, // a repository the map does not list
		}}
	want := []string{"shared-lib", "web-app #12", "web-app", "r9"}
	p := buildSessionPage(m)
	for i, w := range want {
		if got := p.events[i].Label; got != w {
			t.Errorf("event %d (%s) is labelled %q, want %q", i, m.Events[i].Kind, got, w)
		}
	}
	var out strings.Builder
	WriteEvents(&out, m)
	for _, w := range want[:3] {
		if !strings.Contains(out.String(), w) {
			t.Errorf("show --events does not name %q:\n%s", w, out.String())
		}
	}
}

// TestZoneLabel: the zone a report was generated in, as its footer names it.
func TestZoneLabel(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skipf("no zone database: %v", err)
	}
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 3, 2, 14, 5, 0, 0, time.UTC), "UTC"},
		{time.Date(2026, 3, 2, 14, 5, 0, 0, tokyo), "UTC+9 (Asia/Tokyo)"},
		{time.Date(2026, 3, 2, 14, 5, 0, 0, time.FixedZone("IST", 5*3600+1800)), "UTC+5:30 (IST)"},
		{time.Date(2026, 3, 2, 14, 5, 0, 0, time.FixedZone("", -3*3600)), "UTC-3"},
	} {
		if got := zoneLabel(c.at); got != c.want {
			t.Errorf("zoneLabel(%s) = %q, want %q", c.at, got, c.want)
		}
	}
}

// show --events says "usage not recorded" of a request whose log gave
// none, never 0 of each; names a lane by its id, as show's lanes and the
// report do; and writes a duration of minutes as list does.
func TestEventsAsTheOtherViewsSayThem(t *testing.T) {
	dur := int64(121_000)
	m := &Map{Schema: "agentplay/v1", Session: mapfile.Session{ID: "local:claude-code:x", AgentTool: "claude-code"},
		Agents: []mapfile.Agent{{ID: "main", Kind: "main"}, {ID: "sa-a396f02b61f8", Kind: "subagent", SubagentType: "general-purpose"}},
		Events: []mapfile.Event{
			{Seq: 0, T: 10, Kind: "llm", Agent: "main", Model: "m"},
			{Seq: 1, T: 20, Kind: "llm", Agent: "sa-a396f02b61f8", Model: "m", In: 5, Out: 7, CR: 100},
			{Seq: 2, T: 30, Kind: "exec", Agent: "sa-a396f02b61f8", Dur: &dur},
		}}
	var out strings.Builder
	WriteEvents(&out, m)
	got := out.String()
	for _, want := range []string{"usage not recorded", "in 5  out 7  cache read 100  cache write 0", "sa-a396f02b61f8", "2m01s"} {
		if !strings.Contains(got, want) {
			t.Errorf("show --events lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"in 0", "general-purpose:", "121.0s"} {
		if strings.Contains(got, not) {
			t.Errorf("show --events says %q:\n%s", not, got)
		}
	}
}
