package main

import (
	"errors"
	"flag"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/report"
	"github.com/agentmap/agentmap/watchers/agents"
)

// The selectors every command that picks sessions shares (list, export,
// and the commands that come after them), so that --agent, --outcome,
// --repo, --since and --until mean the same thing, and fail the same way,
// everywhere. The one exception is what --since and --until bound in
// usage: the time of each model request, which its rows are grouped by,
// rather than the start of each session (windowOfRequests).

// agentNames are the agents of the registry, in its order.
func agentNames() []string {
	names := make([]string, len(agents.All))
	for i, a := range agents.All {
		names[i] = a.Name
	}
	return names
}

// orList renders names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// agentNamed returns the registry's name of an agent given by that name or
// by its maps' agentTool (claude-code, as the report and the maps say it),
// in any case; "" is any agent.
func agentNamed(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	lower := strings.ToLower(name)
	for _, a := range agents.All {
		if a.Name == lower || a.Tool == lower {
			return a.Name, nil
		}
	}
	return "", fmt.Errorf("--agent: unknown agent %q (%s)", name, orList(agentNames()))
}

// checkOutcome accepts "" or an outcome of the format, in any case.
func checkOutcome(o string) error {
	if o == "" || slices.Contains(builder.Outcomes, strings.ToLower(o)) {
		return nil
	}
	return fmt.Errorf("--outcome: unknown outcome %q (%s)", o, orList(builder.Outcomes))
}

// checkRepo accepts "" or a repository name or glob (api, api*).
func checkRepo(glob string) error {
	if _, err := path.Match(glob, ""); err != nil {
		return fmt.Errorf("--repo: malformed glob %q", glob)
	}
	return nil
}

// selectorFlags are --agent, --since, --until, --repo and --outcome, defined
// with the same words for every command that picks sessions.
type selectorFlags struct {
	agent, since, until, repo, outcome *string
	fl                                 *flag.FlagSet
}

func addSelectorFlags(fl *flag.FlagSet) selectorFlags {
	return selectorFlags{
		fl:      fl,
		agent:   fl.String("agent", "", "only this agent's sessions ("+orList(agentNames())+")"),
		since:   fl.String("since", "", "only sessions started since (each session whole, by its start): "+sinceValues),
		until:   fl.String("until", "", "only sessions started before (each session whole, by its start): "+untilValues),
		repo:    fl.String("repo", "", "only sessions in a repo of this name (a glob: api*)"),
		outcome: fl.String("outcome", "", "only sessions with this outcome ("+orList(builder.Outcomes)+")"),
	}
}

// given lists the selectors set, as a command line gives them
// (--since "7d"), for a message that says what kept every session out.
func (s selectorFlags) given() []string {
	var out []string
	for _, f := range []struct {
		name  string
		value *string
	}{{"agent", s.agent}, {"since", s.since}, {"until", s.until}, {"repo", s.repo}, {"outcome", s.outcome}} {
		if *f.value != "" {
			out = append(out, fmt.Sprintf("--%s %q", f.name, *f.value))
		}
	}
	return out
}

// The values --since and --until take, the same for every command.
const (
	sinceValues = "a window back from now (30m, 12h, 7d, 2w), a date (2006-01-02, local midnight) or an RFC 3339 time"
	untilValues = "a window back from now, a date (that whole day included) or an RFC 3339 time"
)

// windowOfRequests rewords --since and --until for a command that counts
// model requests by their own time (usage), not sessions by their start:
// the time it groups its rows by, so that a day of a table over a window
// is that day's row of the table without one.
func windowOfRequests(fl *flag.FlagSet) {
	fl.Lookup("since").Usage = "only model requests made since (by each request's own time; a session started before counts its requests after): " + sinceValues
	fl.Lookup("until").Usage = "only model requests made before (by each request's own time; a session that goes on after counts its requests before): " + untilValues
}

// parse checks every selector; the error names the flag and what it takes.
func (s selectorFlags) parse(now time.Time) (listFilter, error) {
	if err := noEmptyValue(s.fl, "agent", "since", "until", "repo", "outcome", "maps", "session", "from", "device"); err != nil {
		return listFilter{}, err
	}
	w, err := parseWindowFlags(*s.since, *s.until, now)
	agent, agentErr := agentNamed(*s.agent)
	if err = firstErr(err, agentErr, checkOutcome(*s.outcome), checkRepo(*s.repo)); err != nil {
		return listFilter{}, err
	}
	return listFilter{agent: agent, repo: *s.repo, outcome: *s.outcome, window: w}, nil
}

// reportFilter is the same selection for the maps a report, a usage table
// or an export reads.
func (f listFilter) reportFilter() report.Filter {
	return report.Filter{Since: f.since, Until: f.until, Agent: f.agent, Repo: f.repo, Outcome: f.outcome}
}

// timeBound reads --since or --until (flag names it in the error): a window
// back from now (30m, 12h, 7d, 2w), a date (2006-01-02, local midnight) or an
// RFC 3339 time. "" is no bound.
func timeBound(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := parseWindow(s, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: %w", flag, s, err)
	}
	return t, nil
}

// window is a --since/--until pair; until is exclusive, and --until a
// date takes in that whole day.
type window struct{ since, until time.Time }

func parseWindowFlags(since, until string, now time.Time) (window, error) {
	var w window
	var err error
	if w.since, err = timeBound("since", since, now); err != nil {
		return w, err
	}
	if w.until, err = timeBound("until", until, now); err != nil {
		return w, err
	}
	if _, err := time.ParseInLocation(time.DateOnly, until, time.Local); err == nil {
		w.until = w.until.AddDate(0, 0, 1) // --until a date: that whole day
	}
	if !w.since.IsZero() && !w.until.IsZero() && !w.since.Before(w.until) {
		return w, errors.New("--since must be before --until")
	}
	return w, nil
}

// contains says whether t is inside the window; an unknown time (zero) is
// inside only a window without bounds.
func (w window) contains(t time.Time) bool {
	if w.since.IsZero() && w.until.IsZero() {
		return true
	}
	if t.IsZero() {
		return false
	}
	return !t.Before(w.since) && (w.until.IsZero() || t.Before(w.until))
}

// timeLayout is how times are printed for people: local, with the zone.
const timeLayout = "2006-01-02 15:04:05 MST"

// formatTime prints a time in the local zone with its zone name.
func formatTime(t time.Time) string { return t.Local().Format(timeLayout) }

// firstErr is the first of errs that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// noEmptyValue refuses a flag of names given an empty value (--agent= or
// --agent ""): a selector left empty would select every session, which a
// script passing an unset variable (--agent="$AGENT") did not ask for.
func noEmptyValue(fl *flag.FlagSet, names ...string) error {
	if fl == nil {
		return nil
	}
	var err error
	fl.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(names, f.Name) && f.Value.String() == "" {
			err = fmt.Errorf("--%s is empty: give a value, or leave the flag out", f.Name)
		}
	})
	return err
}

// given reports whether the flag name was set on the command line.
func given(fl *flag.FlagSet, name string) bool {
	set := false
	if fl != nil {
		fl.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	}
	return set
}
