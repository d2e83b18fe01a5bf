package daemon

import (
	"errors"
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

// errBuilderPanic is a map not built because the builder panicked: a bug
// of ours, not a verdict on the session, so its last map is kept.
var errBuilderPanic = errors.New("builder panic")

func safeMap(m Mapper, events []event.Event) (b Built, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = Built{}, fmt.Errorf("%w: %T", errBuilderPanic, r)
		}
	}()
	return m(events)
}
