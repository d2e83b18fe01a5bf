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
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentmap/agentmap/builder/prices"
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
		fmt.Fprintln(stderr, "usage: agentmap show [--json | --events] [--files N] ID")
		fmt.Fprintln(stderr, "Summarises one session's map. ID is the agent's session id, agent/id, or a unique prefix.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	if extraArgument(fl, "show", 1, "one session: its id, agent/id or a unique prefix", stderr) {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "agentmap show: name the session: its id, agent/id or a unique prefix (agentmap list shows them)")
		return exitUsage
	}
	if *top < 0 {
		fmt.Fprintf(stderr, "agentmap show: --files %d: give how many files to show (0 for none)\n", *top)
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
	es, err := b.entriesNamed(ctx, fl.Arg(0))
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
			// makes it, and a flush asked for by name compares the file,
			// in a running daemon or in its own process (flushInProcess).
			// On Windows the latter is a catch-up, which trusts the record.
			how := " writes it again (a daemon running or not)"
			if runtime.GOOS == "windows" {
				how = ", with the daemon running (agentmap start, or agentmap run), writes it again"
			}
			fmt.Fprintf(stderr, "agentmap show: the map file is damaged; agentmap flush %s/%s%s\n", e.Agent, e.ID, how)
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
	if priced := configPrices(*of.config); priced != nil {
		for _, m := range sum.Unpriced {
			if priced(m) {
				sum.Repriceable = append(sum.Repriceable, m)
			}
		}
	}
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

// findEntry picks the session an id names (daemon.Named): the first, in
// es's order, it names whole (its id, its key, or agent/id), else the one
// it names by a prefix. A key is the agent, a slash and the id: its
// prefix is looked at only when one was typed, so that "c" does not
// match every claude/, codex/ and cursor/ session.
func findEntry(es []daemon.Entry, id string) (daemon.Entry, error) {
	n := daemon.Named{ID: id, Key: keyOf(id)}
	var found []daemon.Entry
	for _, e := range es {
		if n.Exactly(e) {
			return e, nil
		}
		if n.Matches(e) {
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
	ID         string         `json:"id"`
	Agent      string         `json:"agentTool"`
	Path       string         `json:"path"`
	Live       bool           `json:"live,omitempty"`
	Start      string         `json:"startedAt,omitempty"`
	DurationMs int64          `json:"durationMs"`
	Models     []string       `json:"models,omitempty"`
	PathMode   string         `json:"pathMode"`
	Outcome    string         `json:"outcome"`
	Truncated  bool           `json:"truncated,omitempty"`
	Repos      []string       `json:"repos,omitempty"`
	Totals     mapfile.Totals `json:"totals"`
	Tasks      int            `json:"tasks"`
	Lanes      []showLane     `json:"lanes"`
	Files      []fileTouch    `json:"filesMostTouched"`
	Errors     []errorCount   `json:"errorsByClass"`
	// Unpriced names the models whose tokens have no price: the costs
	// leave them out and say "unpriced".
	Unpriced []string `json:"unpriced,omitempty"`
	// Repriceable are the unpriced models the config prices now: its
	// [prices] entry came after the map was written, which keeps its costs.
	Repriceable []string `json:"pricedSinceWritten,omitempty"`
	// NoUsage counts the model requests whose log recorded no token usage:
	// the token counts and the cost leave them out.
	NoUsage int `json:"requestsWithoutUsage,omitempty"`
	// Fast counts, per model, the requests served in fast mode, which are
	// billed at a multiple of the list price (report.ServedFast).
	Fast []fastUse `json:"fastMode,omitempty"`

	laneUnpriced map[string][]string
	laneNoUsage  map[string]int
}

// fastUse is a model's requests served in fast mode, of all its requests.
type fastUse struct {
	Model      string  `json:"model"`
	Requests   int     `json:"requests"`
	Of         int     `json:"of"`
	Multiplier float64 `json:"multiplier"`
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
		Lanes: laneModels(m), Unpriced: m.UnpricedModels("")}
	for _, a := range m.Agents {
		if u := m.UnpricedModels(a.ID); len(u) > 0 {
			if s.laneUnpriced == nil {
				s.laneUnpriced = map[string][]string{}
			}
			s.laneUnpriced[a.ID] = u
		}
	}
	var fast []fastUse
	for i := range m.Events {
		e := &m.Events[i]
		if e.Kind != "llm" {
			continue
		}
		if report.NoUsage(e) {
			s.NoUsage++
			if s.laneNoUsage == nil {
				s.laneNoUsage = map[string]int{}
			}
			s.laneNoUsage[e.Lane()]++
		}
		j := slices.IndexFunc(fast, func(f fastUse) bool { return f.Model == e.Model })
		if j < 0 {
			fast, j = append(fast, fastUse{Model: e.Model}), len(fast)
		}
		fast[j].Of++
		if x, ok := report.ServedFast(e); ok {
			fast[j].Requests++
			fast[j].Multiplier = x
		}
	}
	for _, f := range fast {
		if f.Requests > 0 {
			s.Fast = append(s.Fast, f)
		}
	}
	for i := range s.Lanes {
		s.Lanes[i].NoUsage = s.laneNoUsage[s.Lanes[i].ID]
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
		s.Lanes = []showLane{}
	}
	return s
}

// showLane is a map's lane as show gives it: the map's agent record (its
// model field as the map has it), and the models its requests used.
type showLane struct {
	mapfile.Agent
	// Models are the distinct models of the lane's requests, in the order
	// of their first use: a map names no model for its main agent, which
	// may switch models, and "-" would read as none.
	Models []string `json:"models,omitempty"`
	// NoUsage counts the lane's requests that recorded no token usage, as
	// the session's requestsWithoutUsage does: a lane of "tokens": 0 with
	// requests is then usage not recorded, not free.
	NoUsage int `json:"requestsWithoutUsage,omitempty"`
}

// model is what the lanes table says of a lane's model: its own, else the
// models its requests used (the report's lanes say the same).
func (l showLane) model() string {
	if l.Model != "" {
		return l.Model
	}
	return strings.Join(l.Models, ", ")
}

// laneModels is the map's lanes, each with the models its requests used.
func laneModels(m *mapfile.Map) []showLane {
	used := map[string][]string{}
	for i := range m.Events {
		e := &m.Events[i]
		if e.Kind == "llm" && e.Model != "" && !slices.Contains(used[e.Lane()], e.Model) {
			used[e.Lane()] = append(used[e.Lane()], e.Model)
		}
	}
	lanes := make([]showLane, len(m.Agents))
	for i, a := range m.Agents {
		lanes[i] = showLane{Agent: a, Models: used[a.ID]}
	}
	return lanes
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
		models := make([]string, len(s.Models))
		for i, m := range s.Models {
			models[i] = m
			// Fast mode is billed at a multiple of the list price: said
			// where the model is, as the cost alone hides it.
			if j := slices.IndexFunc(s.Fast, func(f fastUse) bool { return f.Model == m }); j >= 0 {
				f := s.Fast[j]
				models[i] += fmt.Sprintf(" (fast mode: %d of %s, priced %sx)", f.Requests, counted(f.Of, "request"),
					strconv.FormatFloat(f.Multiplier, 'f', -1, 64))
			}
		}
		fmt.Fprintf(w, "models    %s\n", strings.Join(models, ", "))
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
	switch {
	case t.Tokens == 0 && s.NoUsage > 0:
		// Not "0 tokens": the requests used tokens; the log does not say how many.
		fmt.Fprintf(w, "  %s, usage not recorded: tokens and cost unknown\n", counted(s.NoUsage, "model request"))
	case s.NoUsage > 0:
		fmt.Fprintf(w, "  %s tokens (%s output), cost %s; %s recorded no usage, which these leave out\n", formatTokens(t.Tokens),
			formatTokens(t.OutputTokens), formatCost(t.CostUSD, s.Unpriced), counted(s.NoUsage, "model request"))
	default:
		fmt.Fprintf(w, "  %s tokens (%s output), cost %s\n", formatTokens(t.Tokens), formatTokens(t.OutputTokens), formatCost(t.CostUSD, s.Unpriced))
	}
	if len(s.Repriceable) > 0 {
		verb := "is"
		if len(s.Repriceable) > 1 {
			verb = "are"
		}
		fmt.Fprintf(w, "  %s %s priced in the config since this map was written: agentmap flush %s reprices it\n",
			strings.Join(s.Repriceable, ", "), verb, s.ID)
	}
	fmt.Fprintf(w, "  %s touched, %s, %s created, %s\n", counted(t.FilesTouched, "file"), counted(t.Commits, "commit"),
		counted(t.PRsCreated, "PR"), counted(t.Errors, "error"))
	if len(s.Lanes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "lanes")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  LANE\tKIND\tTYPE\tMODEL\tCALLS\tREQUESTS\tTOKENS\tCOST\tOUTCOME")
		var partly []string
		for _, a := range s.Lanes {
			tokens, cost := formatTokens(a.Tokens), formatCost(a.Cost, s.laneUnpriced[a.ID])
			switch none := s.laneNoUsage[a.ID]; {
			case a.Tokens == 0 && none > 0:
				tokens, cost = "-", "not recorded"
			case a.Tokens == 0 && a.Requests == 0:
				tokens, cost = "-", "-" // no model request in the lane (a Cursor subagent's), as its cost says
			case none > 0:
				// Figures that leave some of its requests out: marked,
				// and said under the table, as the totals say it of the
				// session, so that they do not read as the lane's whole.
				tokens, cost = tokens+"*", cost+"*"
				partly = append(partly, fmt.Sprintf("  * %s: %d of its %s recorded no usage, which its tokens and cost leave out",
					a.ID, none, counted(a.Requests, "model request")))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", a.ID, dash(a.Kind), dash(a.SubagentType), dash(a.model()),
				a.Calls, a.Requests, tokens, cost, dash(a.Outcome))
		}
		tw.Flush()
		for _, l := range partly {
			fmt.Fprintln(w, l)
		}
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

// configPrices reports which models the prices of the config in effect
// price (its [prices] over the embedded table), or is nil when the config
// cannot be read: a map keeps the costs it was written with, so a model
// unpriced in it may be priced now. The config's problems are for config
// check to tell; here they only leave this out.
func configPrices(flagValue string) func(model string) bool {
	c, _ := loadConfig(flagValue, "show", io.Discard)
	if c == nil || len(c.Prices) == 0 {
		return nil
	}
	table := prices.Default().With(priceOverrides(c))
	return func(model string) bool {
		_, ok := table.Lookup(model)
		return ok
	}
}
