package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/report"
)

func cmdShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("show", flag.ContinueOnError)
	fl.SetOutput(stderr)
	of := addOpsFlags(fl)
	asJSON := fl.Bool("json", false, "print the summary as JSON")
	top := fl.Int("files", 10, "how many of the most touched files to show")
	events := fl.Bool("events", false, "list the session's events, one per line")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap show [--json | --events] ID")
		fmt.Fprintln(stderr, "Summarises one session's map. ID is the agent's session id, agent/id, or a unique prefix.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	if fl.NArg() != 1 {
		fl.Usage()
		return exitUsage
	}
	if *asJSON && *events {
		// The events are lines of text, not JSON: one of the two would
		// be dropped without a word.
		fmt.Fprintln(stderr, "agentmap show: --json and --events do not go together: give one")
		return exitUsage
	}
	b, code := of.open("show", stderr)
	if b == nil {
		return code
	}
	defer b.close()
	es, err := b.entries(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap show: %v\n", err)
		return exitFailure
	}
	e, err := findEntry(es, fl.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "agentmap show: %v\n", err)
		if errors.Is(err, errNoEntry) && b.hasLiveSessions(ctx) {
			// A session a daemon follows has no map until it goes quiet;
			// without a daemon, or with nothing live, the hint would mislead.
			fmt.Fprintf(stderr, "agentmap show: if %s is a session still being written, it has no map yet: agentmap flush %s writes it now\n", fl.Arg(0), fl.Arg(0))
		}
		return exitFailure
	}
	doc, err := mapfile.ReadFile(filepath.Join(b.store.Root, e.Path))
	if err != nil {
		fmt.Fprintf(stderr, "agentmap show: %s: %v\n", e.Path, err)
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			// Damaged on disk after it was written: the state holds what
			// makes it, and a flush asked for by name compares the file.
			fmt.Fprintf(stderr, "agentmap show: the map file is damaged; agentmap flush %s/%s, with the daemon running (agentmap start, or agentmap run), writes it again\n", e.Agent, e.ID)
		}
		return exitFailure
	}
	if *events {
		report.WriteEvents(stdout, doc.Map)
		return exitOK
	}
	sum := summarize(doc.Map, *top)
	sum.Path = filepath.Join(b.store.Root, e.Path)
	sum.Live = e.Live
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(sum)
		return exitOK
	}
	writeSummary(stdout, sum)
	return exitOK
}

// errNoEntry is findEntry's error for an id that names no map.
var errNoEntry = errors.New("no session in the store matches that id (agentmap list shows them)")

// findEntry picks the session an id names: exactly (native id or key),
// else by a unique prefix.
func findEntry(es []daemon.Entry, id string) (daemon.Entry, error) {
	var found []daemon.Entry
	key := keyOf(id)
	for _, e := range es {
		if e.ID == id || e.Key == key {
			return e, nil
		}
		// A key is the agent, a slash and the id: its prefix is looked at
		// only when one was typed, so that "c" does not match every
		// claude/, codex/ and cursor/ session.
		if strings.HasPrefix(e.ID, id) || strings.Contains(id, "/") && strings.HasPrefix(e.Key, key) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return daemon.Entry{}, errNoEntry
	case 1:
		return found[0], nil
	}
	// Newest first, as list shows them.
	slices.SortStableFunc(found, func(a, b daemon.Entry) int {
		if c := b.Start.Compare(a.Start); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	keys := make([]string, len(found))
	for i, e := range found {
		keys[i] = e.Key
	}
	return daemon.Entry{}, ambiguousPrefix(id, keys, "agentmap list shows them all")
}

// keyOf spells an agent/id as the store's keys do, with the agent's
// registry name, whichever of its names was typed: claude-code/ID (the
// agent as the maps and list --agent name it) is the key claude/ID.
// Anything else is left as typed.
func keyOf(id string) string {
	agent, rest, ok := strings.Cut(id, "/")
	if !ok {
		return id
	}
	if name, err := agentNamed(agent); err == nil && name != "" {
		return name + "/" + rest
	}
	return id
}

// summary is what `agentmap show` prints of a map.
type summary struct {
	ID         string          `json:"id"`
	Agent      string          `json:"agentTool"`
	Path       string          `json:"path"`
	Live       bool            `json:"live,omitempty"`
	Start      string          `json:"startedAt,omitempty"`
	DurationMs int64           `json:"durationMs"`
	Models     []string        `json:"models,omitempty"`
	PathMode   string          `json:"pathMode"`
	Outcome    string          `json:"outcome"`
	Truncated  bool            `json:"truncated,omitempty"`
	Repos      []string        `json:"repos,omitempty"`
	Totals     mapfile.Totals  `json:"totals"`
	Tasks      int             `json:"tasks"`
	Lanes      []mapfile.Agent `json:"lanes"`
	Files      []fileTouch     `json:"filesMostTouched"`
	Errors     []errorCount    `json:"errorsByClass"`
	// Unpriced names the models whose tokens have no price: the costs
	// leave them out and say "unpriced".
	Unpriced []string `json:"unpriced,omitempty"`

	laneUnpriced map[string][]string
}

type fileTouch struct {
	Path  string `json:"path"`
	Repo  string `json:"repo,omitempty"`
	Reads int    `json:"reads"`
	Edits int    `json:"edits"`
}

type errorCount struct {
	Class string `json:"class"`
	Count int    `json:"count"`
}

func summarize(m *mapfile.Map, top int) summary {
	s := summary{ID: m.Session.NativeID(), Agent: m.Session.AgentTool, Start: m.Session.StartedAt,
		DurationMs: m.Session.DurationMs, Models: m.Session.Models, PathMode: m.Session.PathMode,
		Outcome: m.Session.Outcome, Truncated: m.Session.Truncated, Totals: m.Totals, Tasks: len(m.Tasks),
		Lanes: m.Agents, Unpriced: m.UnpricedModels("")}
	for _, a := range m.Agents {
		if u := m.UnpricedModels(a.ID); len(u) > 0 {
			if s.laneUnpriced == nil {
				s.laneUnpriced = map[string][]string{}
			}
			s.laneUnpriced[a.ID] = u
		}
	}
	repoName := map[string]string{}
	for _, r := range m.Repos {
		s.Repos = append(s.Repos, r.Name)
		repoName[r.ID] = r.Name
	}
	files := make([]fileTouch, 0, len(m.Files))
	for _, f := range m.Files {
		files = append(files, fileTouch{Path: f.Path, Repo: repoName[f.Repo], Reads: f.Reads, Edits: f.Edits})
	}
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if a.Reads+a.Edits != b.Reads+b.Edits {
			return a.Reads+a.Edits > b.Reads+b.Edits
		}
		if a.Edits != b.Edits {
			return a.Edits > b.Edits
		}
		return a.Path < b.Path
	})
	if top >= 0 && len(files) > top {
		files = files[:top]
	}
	s.Files = files
	counts := map[string]int{}
	for _, e := range m.Events {
		if !e.Err && e.Kind != "error" {
			continue
		}
		class := e.ErrClass
		if class == "" {
			class = "unclassified"
		}
		counts[class]++
	}
	s.Errors = []errorCount{}
	for c, n := range counts {
		s.Errors = append(s.Errors, errorCount{c, n})
	}
	sort.Slice(s.Errors, func(i, j int) bool {
		if s.Errors[i].Count != s.Errors[j].Count {
			return s.Errors[i].Count > s.Errors[j].Count
		}
		return s.Errors[i].Class < s.Errors[j].Class
	})
	if s.Lanes == nil {
		s.Lanes = []mapfile.Agent{}
	}
	return s
}

func writeSummary(w io.Writer, s summary) {
	// The agent as list and the store's keys name it (claude, not the
	// map's claude-code), the same for every agent.
	agent := s.Agent
	if name, err := agentNamed(agent); err == nil && name != "" {
		agent = name
	}
	fmt.Fprintf(w, "session   %s (%s)\n", s.ID, agent)
	fmt.Fprintf(w, "map       %s\n", s.Path)
	if len(s.Repos) > 0 {
		fmt.Fprintf(w, "repos     %s\n", strings.Join(s.Repos, ", "))
	}
	start := "-"
	if t, err := time.Parse(time.RFC3339Nano, s.Start); err == nil {
		start = formatTime(t)
	}
	// A duration of 0 is left out, as show leaves out what a map does not
	// say: a map's duration runs from its first event's time to its
	// last's, and a log that times only the session's start gives every
	// event that one time.
	if s.DurationMs > 0 {
		fmt.Fprintf(w, "started   %s, lasted %s\n", start, formatDuration(s.DurationMs))
	} else {
		fmt.Fprintf(w, "started   %s\n", start)
	}
	if len(s.Models) > 0 {
		fmt.Fprintf(w, "models    %s\n", strings.Join(s.Models, ", "))
	}
	outcome := s.Outcome
	if s.Live {
		outcome += " (the session changed since; its map will be rewritten)"
	}
	fmt.Fprintf(w, "outcome   %s\n", outcome)
	if s.Truncated {
		fmt.Fprintln(w, "truncated yes (over maps.event_cap)")
	}
	fmt.Fprintf(w, "paths     %s\n", s.PathMode)
	t := s.Totals
	fmt.Fprintln(w)
	fmt.Fprintln(w, "totals")
	fmt.Fprintf(w, "  %s, %s, %s, %s, %s\n", counted(t.Calls, "call"), counted(t.Requests, "model request"),
		counted(t.UserTurns, "user turn"), counted(s.Tasks, "task"), counted(t.Subagents, "subagent"))
	fmt.Fprintf(w, "  %s tokens (%s output), cost %s\n", formatTokens(t.Tokens), formatTokens(t.OutputTokens), formatCost(t.CostUSD, s.Unpriced))
	fmt.Fprintf(w, "  %s touched, %s, %s created, %s\n", counted(t.FilesTouched, "file"), counted(t.Commits, "commit"),
		counted(t.PRsCreated, "PR"), counted(t.Errors, "error"))
	if len(s.Lanes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "lanes")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  LANE\tKIND\tTYPE\tMODEL\tCALLS\tREQUESTS\tTOKENS\tCOST\tOUTCOME")
		for _, a := range s.Lanes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", a.ID, dash(a.Kind), dash(a.SubagentType), dash(a.Model),
				a.Calls, a.Requests, formatTokens(a.Tokens), formatCost(a.Cost, s.laneUnpriced[a.ID]), dash(a.Outcome))
		}
		tw.Flush()
	}
	if len(s.Files) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "files most touched")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  READS\tEDITS\tFILE")
		for _, f := range s.Files {
			name := f.Path
			if f.Repo != "" {
				name = f.Repo + ": " + f.Path
			}
			fmt.Fprintf(tw, "  %d\t%d\t%s\n", f.Reads, f.Edits, name)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	if len(s.Errors) == 0 {
		fmt.Fprintln(w, "errors    none")
		return
	}
	fmt.Fprintln(w, "errors by class")
	for _, e := range s.Errors {
		fmt.Fprintf(w, "  %5d  %s\n", e.Count, e.Class)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
