package builder

import (
	"time"

	"github.com/agentmap/agentmap/builder/event"
)

// The times a map keeps are within these bounds: a time before 2000 or
// from 2100 on is no time an agent ran (a log's number of seconds since
// some start, a year 9999, a damaged line), and one would put a session
// in 1970 or give it a duration of centuries, which no duration type
// holds.
var (
	minTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	maxTime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

func plausible(t int64) bool { return t >= minTime && t < maxTime }

// plausibleTimes returns events with every time out of bounds replaced: an
// event's time by the time of the event before it in its lane (the line
// before it in the log), or, for a lane's first events, by the first time
// in bounds after them; a session's start or end by none. events itself
// when every time is in bounds (the rule case), else a copy (events may be
// shared). A time of 0 is a time the log did not give, and stays.
func plausibleTimes(events []event.Event) []event.Event {
	bad := func(t int64) bool { return t != 0 && !plausible(t) }
	first := -1
	for i := range events {
		e := &events[i]
		if bad(e.T) || e.Session != nil && (bad(e.Session.StartT) || bad(e.Session.EndT)) {
			first = i
			break
		}
	}
	if first < 0 {
		return events
	}
	out := make([]event.Event, len(events))
	copy(out, events)
	last := map[string]int64{} // the last time in bounds of each lane
	var pending []int          // events of a lane with no time in bounds yet
	for i := range out {
		e := &out[i]
		if e.Session != nil && (bad(e.Session.StartT) || bad(e.Session.EndT)) {
			s := *e.Session
			if bad(s.StartT) {
				s.StartT = 0
			}
			if bad(s.EndT) {
				s.EndT = 0
			}
			e.Session = &s
		}
		switch {
		case e.T == 0:
		case plausible(e.T):
			last[e.Agent] = e.T
			kept := pending[:0]
			for _, j := range pending {
				if out[j].Agent == e.Agent {
					out[j].T = e.T
				} else {
					kept = append(kept, j)
				}
			}
			pending = kept
		case last[e.Agent] != 0:
			e.T = last[e.Agent]
		default:
			pending = append(pending, i)
		}
	}
	// A lane with no time in bounds at all keeps none.
	for _, j := range pending {
		out[j].T = 0
	}
	return out
}
