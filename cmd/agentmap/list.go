package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/daemon"
)

func cmdList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("list", flag.ContinueOnError)
	fl.SetOutput(stderr)
	of := addOpsFlags(fl)
	sf := addSelectorFlags(fl)
	asJSON := fl.Bool("json", false, "print the sessions as JSON")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap list [--agent A] [--since 7d] [--until D] [--repo R] [--outcome O] [--json]")
		fmt.Fprintln(stderr, "Lists the sessions in the map store, newest first.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err)
	}
	if unexpectedArgs(fl, "list", stderr) {
		return exitUsage
	}
	f, err := sf.parse(time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "agentmap list: %v\n", err)
		return exitUsage
	}
	b, code := of.open("list", stderr)
	if b == nil {
		return code
	}
	defer b.close()
	es, err := b.entries(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap list: %v\n", err)
		return exitFailure
	}
	es = f.apply(es)
	if *asJSON {
		if es == nil {
			es = []daemon.Entry{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(es)
		return exitOK
	}
	writeList(stdout, es)
	return exitOK
}

// listFilter keeps the entries that match every filter set.
type listFilter struct {
	agent, repo, outcome string
	window
}

func (f listFilter) apply(es []daemon.Entry) []daemon.Entry {
	var out []daemon.Entry
	for _, e := range es {
		if f.keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func (f listFilter) keep(e daemon.Entry) bool {
	if f.agent != "" && !strings.EqualFold(e.Agent, f.agent) {
		return false
	}
	if f.outcome != "" && !strings.EqualFold(e.Outcome, f.outcome) {
		return false
	}
	if !f.window.contains(e.Start) {
		return false
	}
	if f.repo != "" {
		found := false
		for _, r := range e.Repos {
			if ok, _ := path.Match(strings.ToLower(f.repo), strings.ToLower(r)); ok {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// parseWindow reads a window back from now (30m, 12h, 7d, 2w) or a date.
func parseWindow(s string, now time.Time) (time.Time, error) {
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	unit := time.Duration(0)
	switch {
	case strings.HasSuffix(s, "d"):
		unit = 24 * time.Hour
	case strings.HasSuffix(s, "w"):
		unit = 7 * 24 * time.Hour
	}
	if unit != 0 {
		n, err := strconv.ParseFloat(s[:len(s)-1], 64)
		if err != nil || n < 0 {
			return time.Time{}, errors.New("want a window such as 7d, 12h or 2w, or a date such as 2006-01-02")
		}
		return now.Add(-time.Duration(n * float64(unit))), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, errors.New("want a window such as 7d, 12h or 2w, or a date such as 2006-01-02")
	}
	return now.Add(-d), nil
}

// writeList renders the table of `agentmap list`.
func writeList(w io.Writer, es []daemon.Entry) {
	if len(es) == 0 {
		fmt.Fprintln(w, "no sessions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tREPO\tSTART\tDURATION\tCALLS\tTOKENS\tCOST\tOUTCOME")
	for _, e := range es {
		repo := "-"
		if len(e.Repos) > 0 {
			repo = e.Repos[0]
			if len(e.Repos) > 1 {
				repo += fmt.Sprintf(" +%d", len(e.Repos)-1)
			}
		}
		start := "-"
		if !e.Start.IsZero() {
			start = e.Start.Local().Format("2006-01-02 15:04 MST")
		}
		outcome := e.Outcome
		if outcome == "" {
			outcome = "-"
		}
		if e.Live {
			outcome += " (live)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", e.ID, e.Agent, repo, start,
			formatDuration(e.DurationMs), e.Calls, formatTokens(e.Tokens), formatCost(e.CostUSD, e.Unpriced), outcome)
	}
	tw.Flush()
}

func formatDuration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case ms <= 0:
		return "-"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func formatTokens(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// formatCost writes a cost for a person (see prices.CostText).
func formatCost(usd float64, unpriced []string) string {
	return prices.CostText(usd, unpriced, "-")
}
