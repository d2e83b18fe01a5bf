package main

import (
	"fmt"
	"io"

	"github.com/agentmap/agentmap/daemon"
)

// writeFaultStatus adds the lines about faults the daemon is living with:
// logs, databases or directories it cannot read, writes it retries, a
// damaged state database it repaired.
func writeFaultStatus(w io.Writer, st daemon.Status) {
	if st.Uncommitted > 0 {
		fmt.Fprintf(w, "retrying:   the lines of %s wait to be committed again (next try %s)\n",
			counted(st.Uncommitted, "log"), formatTime(st.RetryAt))
	}
	if u := st.Unreadable; u != nil {
		fmt.Fprintf(w, "retrying:   %s cannot be read (%s; next try %s)\n",
			counted(u.Count, "log"), u.Reason, formatTime(u.RetryAt))
	}
	if u := st.UnreadableDBs; u != nil {
		what := fmt.Sprintf("%d databases cannot", u.Count)
		if u.Count == 1 {
			what = "1 database cannot"
		}
		fmt.Fprintf(w, "retrying:   %s be read (%s; next try %s): their sessions are not updated\n",
			what, u.Reason, formatTime(u.RetryAt))
	}
	if u := st.Unlisted; u != nil {
		what := fmt.Sprintf("%d log directories cannot", u.Count)
		if u.Count == 1 {
			what = "1 log directory cannot"
		}
		fmt.Fprintf(w, "retrying:   %s be listed (%s; tried again at each rescan): their logs are not read\n", what, u.Reason)
	}
	if st.FlushRetries > 0 {
		what := counted(st.FlushRetries, "map") + " wait"
		if st.FlushRetries == 1 {
			what = "1 map waits"
		}
		if st.FlushRetryAt.IsZero() { // a daemon from before the time was told
			fmt.Fprintf(w, "retrying:   %s to be written again\n", what)
		} else {
			fmt.Fprintf(w, "retrying:   %s to be written again (next try %s)\n", what, formatTime(st.FlushRetryAt))
		}
	}
	writeStateRepair(w, st.State)
}

// writeStateRepair tells a repair of the state database: this daemon's,
// or, for a week, one an earlier scan or daemon made (also when no
// daemon runs).
func writeStateRepair(w io.Writer, r *daemon.StateRepair) {
	if r != nil {
		at := formatTime(r.At)
		start, by := "at start", ""
		if r.Earlier {
			// A repair a process before this one made, shown for a week.
			start = "at the start of a " + r.By
			if r.By == "" {
				start = "at an earlier start"
			}
			by = " (by an earlier " + r.By + ")"
			if r.By == "" {
				by = " (earlier)"
			}
		}
		switch {
		case r.Aside != "":
			fmt.Fprintf(w, "state:      damaged %s (%s); rebuilt from the logs at %s, damaged file kept as %s\n",
				start, r.Reason, at, r.Aside)
		case r.Records == 0 && r.Reason != "":
			fmt.Fprintf(w, "state:      %s %s; rebuilt from the logs at %s\n", r.Reason, start, at)
		default:
			fmt.Fprintf(w, "state:      %s dropped at %s%s; %s read again from the start\n",
				counted(r.Records, "damaged record"), at, by, counted(r.Sources, "log"))
		}
	}
}
