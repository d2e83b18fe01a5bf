package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/internal/regular"
	"github.com/agentmap/agentmap/watchers"
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
	listed := f.apply(es)
	parents := spawnedIn(b.store.Root, es, listed)
	if *asJSON {
		if err := writeListJSON(stdout, listed, parents); err != nil {
			fmt.Fprintf(stderr, "agentmap list: %v\n", err)
			return exitFailure
		}
		return unreadableMaps(listed, b.store.Root, stderr)
	}
	if len(es) == 0 {
		// Not "no sessions", which a filter that keeps none says too.
		fmt.Fprintln(stdout, noMapsYet)
		return exitOK
	}
	writeList(stdout, listed, parents)
	writeRepriceNote(stdout, listed, configPrices(*of.config))
	return unreadableMaps(listed, b.store.Root, stderr)
}

// unreadableMaps names the map files of es that could not be read (as
// usage, report and show name them) and is the exit code: 1 when there
// are any, since the listing lacks what they hold.
func unreadableMaps(es []daemon.Entry, root string, stderr io.Writer) int {
	var paths []string
	for _, e := range es {
		if e.Unreadable {
			paths = append(paths, filepath.Join(root, e.Path))
		}
	}
	if len(paths) == 0 {
		return exitOK
	}
	shown := paths[:min(len(paths), 5)]
	more := ""
	if len(paths) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(paths)-len(shown))
	}
	fmt.Fprintf(stderr, "agentmap list: %s could not be read (listed with what the state records of them, if anything): %s%s; agentmap validate names what is wrong, agentmap flush ID writes one again\n",
		counted(len(paths), "map file"), strings.Join(shown, ", "), more)
	return exitFailure
}

// writeListJSON prints the entries as one indented JSON array, an element
// at a time through a buffer: the bytes json.Encoder would print for the
// whole array, without holding them all (some 70 MB at 100,000 sessions).
func writeListJSON(w io.Writer, es []daemon.Entry, parents map[string]string) error {
	if len(es) == 0 {
		_, err := fmt.Fprintln(w, "[]")
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("[\n")
	for i, e := range es {
		b, err := json.MarshalIndent(listEntry{Entry: e, Parent: parents[e.Key]}, "  ", "  ")
		if err != nil {
			// A cost that is not a number (a price of inf in the config):
			// no half-written array passes for the listing.
			return fmt.Errorf("session %s: %w", e.Key, err)
		}
		bw.WriteString("  ")
		bw.Write(b)
		if i < len(es)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// listEntry is a session as list --json prints it: the entry, and the key
// of the session that spawned it when its map is a lane of that session's
// map too (a Codex agent's thread), whose tokens and cost hold its own.
type listEntry struct {
	daemon.Entry
	Parent string `json:"parent,omitempty"`
	// Recorded, always nil, hides the entry's own (where it came from,
	// which only spawnedIn reads): the shallower name wins, and omitempty
	// leaves it out.
	Recorded *struct{} `json:"recorded,omitempty"`
}

// spawnedIn finds the sessions of listed that another session of the
// store spawned, and whose own map is a lane of that session's map too (a
// Codex agent's thread): child key → parent key. The parent's totals hold
// the child's, which usage, the report and the team database's views
// count once, in the parent (report.countedOnce); a listing that shows
// both must not read as twice the tokens and cost. A child's lane in its
// parent is watchers.LaneID of its id, and a map lists its lanes first
// (its keys are sorted), so only the start of each map of the agents
// listed is read.
func spawnedIn(root string, all, listed []daemon.Entry) map[string]string {
	agents := map[string]bool{}
	for _, e := range listed {
		// Claude Code starts no session into another's map (a subagent is
		// a lane only, a fork's copied lines stay the parent's): the
		// commonest maps are not opened.
		agents[e.Agent] = e.Agent != watchers.LayoutClaude
	}
	// Which maps may hold a listed session's lane: when every listed
	// session comes from a state record, only those of the parents the
	// records name, so that a listing opens no map but theirs; a map no
	// record names (a state rebuilt from the logs, maps copied in) may be
	// any session's child, and every map of its agent is looked at.
	narrow, parentsNamed := true, map[string]bool{}
	for _, e := range listed {
		narrow = narrow && e.Recorded
		if e.Parent != "" {
			parentsNamed[e.Parent] = true
		}
	}
	// lane id → the sessions whose maps have a subagent lane of that id,
	// per agent (a parent and its child are of one agent).
	lanes := map[string][]string{}
	for _, e := range all {
		if !agents[e.Agent] || (narrow && !parentsNamed[e.Key]) {
			continue
		}
		for _, id := range subagentLanes(filepath.Join(root, e.Path)) {
			k := e.Agent + "\x00" + id
			lanes[k] = append(lanes[k], e.Key)
		}
	}
	var parents map[string]string
	for _, e := range listed {
		for _, p := range lanes[e.Agent+"\x00"+watchers.LaneID(e.ID)] {
			if p != e.Key {
				if parents == nil {
					parents = map[string]string{}
				}
				parents[e.Key] = p
				break
			}
		}
	}
	return parents
}

// subagentLanes reads the ids of the subagent lanes of a map from the
// start of its file: "agents" is the first key of a map, as keys are
// sorted. A map that does not start so, or cannot be read, has none here.
func subagentLanes(path string) []string {
	f, err := regular.Open(path) // a named pipe in a map's place is no wait
	if err != nil {
		return nil
	}
	defer f.Close()
	return lanesOf(f)
}

// lanesOf reads the subagent lanes from an open map file.
func lanesOf(f *os.File) []string {
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil
		}
		defer zr.Close()
		r = zr
	}
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	if t, err := dec.Token(); err != nil || t != "agents" {
		return nil
	}
	var lanes []struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	}
	if dec.Decode(&lanes) != nil {
		return nil
	}
	var ids []string
	for _, a := range lanes {
		if a.Kind == "subagent" {
			ids = append(ids, a.ID)
		}
	}
	return ids
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
	// Something written as a date or a time that is not one: say what
	// is wrong with it, not only what a window looks like.
	if len(s) >= len("2006-01-02") && s[4] == '-' && s[7] == '-' {
		switch {
		case len(s) == len("2006-01-02"):
			if _, err := time.Parse(time.DateOnly, s); err != nil {
				return time.Time{}, errors.New("not a date: want year-month-day, such as 2006-01-02, with a month of 01 to 12 and a day of that month")
			}
		case s[10] != 'T' && s[10] != 't':
			return time.Time{}, errors.New("an RFC 3339 time has a T between the date and the time, and its zone: 2006-01-02T15:04:05Z")
		case !strings.ContainsAny(s[10:], "Zz+") && strings.Count(s[10:], "-") == 0:
			return time.Time{}, errors.New("a time needs its zone, as RFC 3339 writes one: 2006-01-02T15:04:05Z, or 2006-01-02T15:04:05+02:00")
		}
		return time.Time{}, errors.New("want a date such as 2006-01-02 or an RFC 3339 time such as 2006-01-02T15:04:05Z")
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
			return time.Time{}, errors.New(windowWanted)
		}
		return now.Add(-time.Duration(n * float64(unit))), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, errors.New(windowWanted)
	}
	return now.Add(-d), nil
}

// windowWanted says what --since and --until take.
const windowWanted = "want a window such as 7d, 12h or 2w, a date such as 2006-01-02, or an RFC 3339 time such as 2006-01-02T15:04:05Z"

// writeList renders the table of `agentmap list`. A session another listed
// session spawned (parents: child key → parent key) comes right under its
// parent, marked ↳, as ccusage shows a row's parts under it: its tokens
// and cost are part of the parent's, not more.
func writeList(w io.Writer, es []daemon.Entry, parents map[string]string) {
	if len(es) == 0 {
		fmt.Fprintln(w, "no sessions")
		return
	}
	listed := map[string]bool{}
	for _, e := range es {
		listed[e.Key] = true
	}
	children := map[string][]daemon.Entry{}
	for _, e := range es {
		if p := parents[e.Key]; p != "" && listed[p] {
			children[p] = append(children[p], e)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tREPO\tSTART\tDURATION\tCALLS\tTOKENS\tCOST\tOUTCOME")
	spawned := 0
	shown := map[string]bool{}
	var row func(e daemon.Entry, depth int)
	row = func(e daemon.Entry, depth int) {
		shown[e.Key] = true
		writeListRow(tw, e, depth)
		for _, c := range children[e.Key] {
			if !shown[c.Key] {
				spawned++
				row(c, depth+1)
			}
		}
	}
	for _, e := range es {
		if p := parents[e.Key]; p != "" && listed[p] {
			continue // under its parent
		}
		row(e, 0)
	}
	for _, e := range es {
		if !shown[e.Key] {
			row(e, 0) // parents in a loop, which no log makes: listed all the same
		}
	}
	tw.Flush()
	partly := 0
	for _, e := range es {
		if partlyRecorded(e) {
			partly++
		}
	}
	if partly > 0 {
		fmt.Fprintf(w, "\n* %s some of whose model requests recorded no token usage: the tokens and cost are those of the others (agentmap show ID says how many).\n",
			counted(partly, "session"))
	}
	switch {
	case spawned == 1:
		fmt.Fprintln(w, "\n↳ a session spawned by the one above it: its tokens and cost are part of that session's, counted once by agentmap usage.")
	case spawned > 1:
		fmt.Fprintf(w, "\n↳ %d sessions spawned by the one above each: their tokens and cost are part of that session's, counted once by agentmap usage.\n", spawned)
	}
}

func writeListRow(tw io.Writer, e daemon.Entry, depth int) {
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
	switch {
	case e.Unreadable:
		outcome = "map unreadable" // named below the table
	case outcome == "":
		outcome = "-"
	}
	if e.Live {
		outcome += " (live)"
	}
	id := e.ID
	if depth > 0 {
		id = strings.Repeat("  ", depth-1) + "↳ " + id
	}
	tokens, cost := formatTokens(e.Tokens), formatCost(e.CostUSD, e.Unpriced)
	switch {
	case e.Tokens == 0 && e.Requests > 0:
		// Its requests recorded no token usage (Cursor's): not 0, and
		// not free, but not known.
		tokens, cost = "-", "not recorded"
	case partlyRecorded(e):
		// Some of its requests recorded none: the figures are the
		// others', marked as show marks them (the note below says so).
		tokens, cost = tokens+"*", cost+"*"
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", id, e.Agent, repo, start,
		formatDuration(e.DurationMs), e.Calls, tokens, cost, outcome)
}

// writeRepriceNote names the models the listed costs leave out as unpriced
// that the config prices now (priced; nil: none can be read): a map keeps
// the costs it was written with.
func writeRepriceNote(w io.Writer, es []daemon.Entry, priced func(model string) bool) {
	if priced == nil {
		return
	}
	var models []string
	for _, e := range es {
		for _, m := range e.Unpriced {
			if priced(m) && !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
	}
	if len(models) == 0 {
		return
	}
	slices.Sort(models)
	verb, it := "is", "it"
	if len(models) > 1 {
		verb, it = "are", "them"
	}
	fmt.Fprintf(w, "\n%s %s priced in the config since the maps that leave %s out were written: the service reprices them once it has read the config, and so does the next agentmap scan (agentmap flush --all --rewrite: at once).\n",
		strings.Join(models, ", "), verb, it)
}

// formatDuration writes a duration as the report does (report.js dur): a
// tenth of a second under ten seconds, so that 2.8 s is not 2s here and
// 2.8s there, and a 68 ms session not 0s. Each form is chosen for the
// figure as rounded, so that 59.7 s is 1m00s, not 60s, and 9.97 s 10s.
func formatDuration(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	// Hours from the milliseconds themselves: a map's duration may be
	// beyond what a time.Duration holds (292 years; a map of another
	// writer), which would print a negative one.
	if ms < 10_000 {
		if s := fmt.Sprintf("%.1f", float64(ms)/1000); s != "10.0" {
			return s + "s"
		}
	}
	secs := ms/1000 + (ms%1000+500)/1000 // rounded, without overflow
	switch {
	case secs < 60:
		return strconv.FormatInt(secs, 10) + "s"
	case secs < 3600:
		return fmt.Sprintf("%dm%02ds", secs/60, secs%60)
	}
	return fmt.Sprintf("%dh%02dm", secs/3600, secs/60%60)
}

// formatTokens writes a token count short: 812, 4.1k (not 4124, beside
// 16k), 16k, 3.2M, 1.4G; each unit chosen for the figure as rounded, so
// that 999,700 is 1.0M, not 1000k.
func formatTokens(n int64) string {
	if n < 1e3 {
		return strconv.FormatInt(n, 10)
	}
	if n < 1e4 {
		if s := fmt.Sprintf("%.1f", float64(n)/1e3); s != "10.0" {
			return s + "k"
		}
	}
	if n < 1e6 {
		if s := fmt.Sprintf("%.0f", float64(n)/1e3); s != "1000" {
			return s + "k"
		}
	}
	if n < 1e9 {
		if s := fmt.Sprintf("%.1f", float64(n)/1e6); s != "1000.0" {
			return s + "M"
		}
	}
	return fmt.Sprintf("%.1fG", float64(n)/1e9)
}

// formatCost writes a cost for a person (see prices.CostText).
func formatCost(usd float64, unpriced []string) string {
	return prices.CostText(usd, unpriced, "-")
}

// partlyRecorded reports whether some of e's model requests, not all,
// recorded no token usage: its tokens and cost leave them out.
func partlyRecorded(e daemon.Entry) bool {
	return e.NoUsage > 0 && e.NoUsage < e.Requests && e.Tokens > 0
}
