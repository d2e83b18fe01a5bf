package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state"
)

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("status", flag.ContinueOnError)
	fl.SetOutput(stderr)
	of := addOpsFlags(fl)
	asJSON := fl.Bool("json", false, "print the status as JSON")
	noService := fl.Bool("no-service", false, "do not ask the service manager")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap status [--json] [--config FILE | --data-dir DIR]")
		fmt.Fprintln(stderr, "Shows the service, the daemon and, per agent, the files followed and the sessions kept.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	if unexpectedArgs(fl, "status", stderr) {
		return exitUsage
	}
	b, code := of.open("status", stderr)
	if b == nil {
		return code
	}
	defer b.close()
	st, running, err := b.status(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap status: %v\n", err)
		return exitFailure
	}
	if !running {
		sinkOffInConfig(st.Sink, *of.config)
		if b.db != nil {
			st.Rewrite = pendingRewrite(b.db, *of.config, b.dataDir)
		}
	}
	service := ""
	if !*noService {
		if service, err = serviceStatus(); err != nil {
			service = "unknown (" + err.Error() + ")"
		}
	}
	var newest time.Time
	if b.locked {
		newest = b.newestMap()
	}
	if *asJSON {
		if st.Agents == nil {
			st.Agents = []daemon.AgentStatus{} // a list, if empty, as scripts index it
		}
		out := struct {
			Service string `json:"service,omitempty"`
			Running bool   `json:"running"`
			// Held: a scan, or a daemon without a socket, holds the
			// state; NewestMap is then the newest map in the store.
			Held      bool      `json:"heldWithoutSocket,omitempty"`
			NewestMap time.Time `json:"newestMap,omitzero"`
			// Excluded hides the status's own: the logs privacy.exclude
			// keeps out are counted by a running daemon, which reads their
			// first records; the state keeps nothing of them, so without
			// one the count is not known, and left out rather than 0.
			Excluded *int `json:"excluded,omitempty"`
			daemon.Status
		}{Service: service, Running: running, Held: b.locked, NewestMap: newest, Status: st}
		if running {
			out.Excluded = &st.Excluded
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return exitOK
	}
	writeStatus(stdout, service, b.describe(), running, st, b.locked, newest)
	return exitOK
}

// writeStatus renders a status for people. held says a scan, or a daemon
// without a socket, holds the state, which cannot be read then; newest is
// the newest map in the store.
func writeStatus(w io.Writer, service, daemonState string, running bool, st daemon.Status, held bool, newest time.Time) {
	if service != "" {
		fmt.Fprintf(w, "service:    %s\n", service)
	}
	fmt.Fprintf(w, "daemon:     %s\n", daemonState)
	if running {
		fmt.Fprintf(w, "pid:        %d, up %s (since %s)\n", st.PID, roundDuration(st.Uptime), formatTime(st.Started))
	}
	fmt.Fprintf(w, "data dir:   %s\n", st.DataDir)
	if running {
		c := st.CatchUp
		switch {
		case c.Running:
			pct := 100
			if c.Total > 0 {
				pct = int(min(c.Done, c.Total) * 100 / c.Total)
			}
			left := ""
			if est := timeLeft(c.Elapsed, c.Done, c.Total); est != "" {
				left = ", " + est
			}
			fmt.Fprintf(w, "catch-up:   %d%% (%s of %s of existing history read%s)\n", pct, mb(c.Done), mb(c.Total), left)
		case !c.Finished.IsZero():
			fmt.Fprintf(w, "catch-up:   done at %s (%s read)\n", formatTime(c.Finished), mb(c.Done))
		default:
			fmt.Fprintln(w, "catch-up:   waiting for the first scan")
		}
	}
	switch {
	case held && newest.IsZero():
		fmt.Fprintln(w, "last flush: unknown while a scan or a daemon without a socket holds the state")
	case held:
		fmt.Fprintf(w, "last flush: unknown while a scan or a daemon without a socket holds the state; the newest map in the store was written at %s\n", formatTime(newest))
	case st.LastFlush.IsZero():
		fmt.Fprintln(w, "last flush: never")
	default:
		fmt.Fprintf(w, "last flush: %s\n", formatTime(st.LastFlush))
	}
	if running {
		if e := st.LastError; e != nil {
			if e.Cause != "" {
				fmt.Fprintf(w, "last error: %s %s: %s: %s\n", formatTime(e.At), e.Component, e.Message, e.Cause)
			} else {
				fmt.Fprintf(w, "last error: %s %s: %s\n", formatTime(e.At), e.Component, e.Message)
			}
		} else {
			fmt.Fprintln(w, "last error: none")
		}
		if st.Excluded > 0 {
			fmt.Fprintf(w, "excluded:   %s kept out by privacy.exclude\n", counted(st.Excluded, "log"))
		}
		if n := st.Unrecognised; n > 0 {
			fmt.Fprintf(w, "unmapped:   %s routed to no session (not recognised, or no session id in the lines or the file name; the log names each), passed over until changed\n",
				counted(n, "log"))
		}
		writeFaultStatus(w, st)
		if st.Notifications != "" {
			fmt.Fprintf(w, "watching:   %s\n", st.Notifications)
		}
	} else {
		writeStateRepair(w, st.State)
	}
	if e := st.ConfigError; e != nil {
		fmt.Fprintf(w, "config:     reload of %s rejected at %s; the previous config stays in effect:\n", e.Path, formatTime(e.At))
		for _, p := range e.Problems {
			fmt.Fprintf(w, "            %s\n", p)
		}
	}
	if len(st.SkippedSessions) > 0 {
		parts := make([]string, len(st.SkippedSessions))
		for i, s := range st.SkippedSessions {
			parts[i] = fmt.Sprintf("%s (%d)", s.Session, s.Lines)
		}
		fmt.Fprintf(w, "skipped:    lines in %s\n", strings.Join(parts, ", "))
	}
	if l := st.LongLines; l != nil {
		logs := fmt.Sprintf("%d logs end", l.Logs)
		if l.Logs == 1 {
			logs = "1 log ends"
		}
		fmt.Fprintf(w, "waiting:    %s in a line still being written, %s so far, longer than the cap on a line (watch.max_line = \"%s\"): skipped and counted once it ends; BEHIND counts it until then\n",
			logs, mb(l.Bytes), config.Size(l.Cap))
	}
	if n := st.Reread; n > 0 {
		logs := fmt.Sprintf("%d logs", n)
		if n == 1 {
			logs = "1 log"
		}
		when := "being read again from their start"
		if !running {
			when = "read again from their start by the next scan or start of the service"
		}
		fmt.Fprintf(w, "reread:     %s read by an earlier version of agentmap's parsers, %s, so that their maps say what this version reads\n", logs, when)
	}
	if r := st.Rewrite; r != nil {
		why := "flush --all --rewrite"
		if r.Auto {
			why = "maps written by an earlier version or with other map options"
		}
		if r.Pending {
			fmt.Fprintf(w, "rewrite:    %s: %s, written again by the next scan or start of the service\n", why, counted(r.Left, "map"))
		} else {
			fmt.Fprintf(w, "rewrite:    writing every map again (%s): %s left\n", why, counted(r.Left, "session"))
		}
	}
	writeExportStatus(w, st.Export)
	writeSinkStatus(w, st.Sink)
	if len(st.Agents) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "AGENT\tFILES\tLIVE\tFLUSHED\tBEHIND\tSKIPPED LINES\t")
	for _, a := range st.Agents {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\t\n", a.Agent, a.Files, a.Live, a.Flushed, mb(a.Behind), a.Skipped)
	}
	tw.Flush()
}

func roundDuration(d time.Duration) time.Duration { return d.Round(time.Second) }

// timeLeft estimates the time a read of total bytes still takes, done of
// them read in elapsed, at that rate: "about 3 min left", or "" while too
// little is known (under 5 seconds, or 2% read) for the rate to mean much.
// Rounded up, and coarse (seconds by fives, then minutes, then hours and
// minutes), as the rate of a catch-up moves with the sizes of the logs.
func timeLeft(elapsed time.Duration, done, total int64) string {
	if elapsed < 5*time.Second || done <= 0 || total <= done || done*50 < total {
		return ""
	}
	left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
	if secs := int(math.Ceil(left.Seconds()/5)) * 5; secs < 60 {
		return fmt.Sprintf("about %d s left", max(secs, 5))
	}
	mins := int(math.Ceil(left.Minutes()))
	if mins < 60 {
		return fmt.Sprintf("about %d min left", mins)
	}
	if mins%60 == 0 {
		return fmt.Sprintf("about %d h left", mins/60)
	}
	return fmt.Sprintf("about %d h %d min left", mins/60, mins%60)
}

// pendingRewrite is the rewrite of maps written with other options that
// the next scan or start of the service will make, reckoned with the
// options of the config as the service would read it, without a daemon.
// Nil when it cannot be told (a config with problems, a hash key that
// cannot be read).
func pendingRewrite(db *state.DB, configFlag, dataDir string) *daemon.RewriteStatus {
	c, _ := loadConfig(configFlag, "status", io.Discard)
	if c == nil {
		return nil
	}
	eff, err := runOverrides{set: map[string]bool{"data-dir": true}, dataDir: dataDir, readOnly: true}.apply(c)
	if err != nil {
		return nil
	}
	id := eff.live.MapIdentity
	if eff.keyToMake {
		// A new key hashes every path anew: no map was written with it.
		id = "a hash key not made yet"
	}
	r, _ := daemon.PendingRewrite(db, id)
	return r
}
