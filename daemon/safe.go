package daemon

import (
	"fmt"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

// A parser or builder bug must not take the daemon down: the same line
// would crash it again after every restart. A panic becomes an error (the
// line is counted as skipped, the map as not mappable), named without
// content.

func safeLine(p watchers.Parser, line []byte, out []event.Event) (evs []event.Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			evs, err = out, fmt.Errorf("parser panic: %T", r)
		}
	}()
	return p.Line(line, out)
}

func safeMap(m Mapper, events []event.Event) (b Built, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = Built{}, fmt.Errorf("builder panic: %T", r)
		}
	}()
	return m(events)
}
