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
		fmt.Fprintf(w, "retrying:   the lines of %d logs wait to be committed again (next try %s)\n",
			st.Uncommitted, formatTime(st.RetryAt))
	}
	if u := st.Unreadable; u != nil {
		fmt.Fprintf(w, "retrying:   %d logs cannot be read (%s; next try %s)\n",
			u.Count, u.Reason, formatTime(u.RetryAt))
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
		fmt.Fprintf(w, "retrying:   %d maps wait to be written again\n", st.FlushRetries)
	}
	if r := st.State; r != nil {
		at := formatTime(r.At)
		switch {
		case r.Aside != "":
			fmt.Fprintf(w, "state:      damaged at start (%s); rebuilt from the logs at %s, damaged file kept as %s\n",
				r.Reason, at, r.Aside)
		case r.Records == 0 && r.Reason != "":
			fmt.Fprintf(w, "state:      %s at start; rebuilt from the logs at %s\n", r.Reason, at)
		default:
			fmt.Fprintf(w, "state:      %d damaged records dropped at %s; %d logs read again from the start\n",
				r.Records, at, r.Sources)
		}
	}
}
