package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/export/mapfile"
)

// WriteEvents prints a map's events one per line, aligned: sequence, time
// since the start, lane, kind, what ran, and the signals (failure, retry,
// duration, tokens). It prints only map fields, so it is as safe to show
// as the map.
func WriteEvents(w io.Writer, m *Map) {
	// A lane is named by its id, as show's lanes and the report name it
	// (the subagent's type is in those): the same word in every view.
	lanes := map[string]string{}
	for _, a := range m.Agents {
		lanes[a.ID] = a.ID
	}
	rows := [][]string{{"SEQ", "TIME", "LANE", "KIND", "WHAT", "DETAIL"}}
	for i := range m.Events {
		e := &m.Events[i]
		lane := lanes[e.Lane()]
		if lane == "" {
			lane = e.Lane()
		}
		what := eventLabel(m, e)
		if what == "" {
			what = "-"
		}
		rows = append(rows, []string{strconv.Itoa(i), clock(e.T), lane, e.Kind, what, eventDetail(m, e)})
	}
	writeGrid(w, rows, 6, false)
	if m.Session.Truncated {
		fmt.Fprintf(w, "\nthe map was cut at its event cap: %d events shown; the totals count the whole session.\n", len(m.Events))
	}
}

func clock(ms int64) string {
	s := ms / 1000
	return fmt.Sprintf("%d:%02d:%02d.%03d", s/3600, s/60%60, s%60, ms%1000)
}

func eventDetail(m *Map, e *mapfile.Event) string {
	var d []string
	if e.Err || e.Kind == "error" {
		f := "FAILED"
		if e.ErrClass != "" {
			f += " " + e.ErrClass
		}
		d = append(d, f)
	}
	if e.ExitCode != nil && *e.ExitCode != 0 {
		d = append(d, "exit "+strconv.Itoa(*e.ExitCode))
	}
	if e.RetryOf != nil {
		d = append(d, "retry of #"+strconv.Itoa(*e.RetryOf))
	}
	switch e.Kind {
	case "llm":
		if e.NoUsage() {
			// Not 0 of each: the log did not say (docs/costs.md).
			d = append(d, "usage not recorded")
		} else {
			d = append(d, fmt.Sprintf("in %d  out %d  cache read %d  cache write %d", e.In, e.Out, e.CR, e.CW))
		}
		if e.Latency != nil {
			d = append(d, "latency "+msText(*e.Latency))
		}
	case "delay", "compaction":
		d = append(d, msText(e.Ms))
	case "user":
		d = append(d, strconv.Itoa(e.Chars)+" chars")
	}
	if e.Dur != nil && *e.Dur > 0 {
		d = append(d, msText(*e.Dur))
	}
	if n := len(e.Targets); n > 0 {
		t := e.Targets[0]
		name := t.Label
		if t.File != nil {
			name, _ = m.FilePath(*t.File)
		}
		if n > 1 {
			name += fmt.Sprintf(" +%d", n-1)
		}
		d = append(d, name)
	}
	return strings.Join(d, "  ")
}

// msText writes a duration as list and show write one from a minute on
// (2m01s, 1h02m), and under it to the tenth of a second or in ms.
func msText(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	case ms < 3_600_000:
		return fmt.Sprintf("%dm%02ds", ms/60_000, ms/1000%60)
	}
	return fmt.Sprintf("%dh%02dm", ms/3_600_000, ms/60_000%60)
}
