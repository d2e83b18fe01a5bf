package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentmap/agentmap/report"
)

// mapFlags are the flags that choose and filter the maps a report or a
// usage table reads.
type mapFlags struct {
	ops  opsFlags
	maps *string
	sel  selectorFlags
	team teamFlags
	// noMaps is set by source when the local store (or the directory
	// --maps names) holds no map at all; storeKnown when it looked (not
	// for a bundle, a jsonl export or --from, whose content is not counted
	// before the read).
	noMaps, storeKnown *bool
}

func addMapFlags(fl *flag.FlagSet) mapFlags {
	return mapFlags{
		ops:  addOpsFlags(fl),
		maps: fl.String("maps", "", "read the maps of this directory, map file, bundle (export --format bundle) or jsonl export instead of the local store (- reads them from standard input)"),
		sel:  addSelectorFlags(fl),
		team: addTeamFlags(fl),

		noMaps: new(bool), storeKnown: new(bool),
	}
}

// filter reads the filter flags, checked as every command that picks
// sessions checks them; on failure it has reported on stderr.
func (f mapFlags) filter(cmd string, stderr io.Writer) (report.Filter, bool) {
	s, err := f.sel.parse(time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", cmd, err)
		return report.Filter{}, false
	}
	return s.reportFilter(), true
}

// source opens where the maps are: --maps, else the local store as the
// daemon lists it (over its control socket when it runs). The name it
// returns is for the report's heading, so it holds no directory.
func (f mapFlags) source(ctx context.Context, cmd string, stderr io.Writer) (report.Source, string, int) {
	if f.team.set() {
		return f.team.source(cmd, f, stderr)
	}
	if p := *f.maps; p != "" {
		if given(f.sel.fl, "data-dir") {
			// --maps is read instead of the local store: a data directory
			// given with it would be passed over without a word.
			fmt.Fprintf(stderr, "agentmap %s: --maps and --data-dir are two sources; give one (--maps reads maps instead of the data directory's store)\n", cmd)
			return nil, "", exitUsage
		}
		if p == "-" {
			if f, ok := mapsStdin.(*os.File); ok && isTerminal(f) {
				// Typed maps are no maps: the command would wait on the
				// keyboard for a bundle or an export.
				fmt.Fprintf(stderr, "agentmap %s: --maps -: standard input is a terminal: pipe the maps in (agentmap export --format jsonl | agentmap %s --maps -), or name a file or directory\n", cmd, cmd)
				return nil, "", exitUsage
			}
			return report.Stream{Name: "standard input", R: mapsStdin}, "standard input", exitOK
		}
		st, err := os.Stat(p)
		switch {
		case err != nil:
			// As a missing --data-dir or input is said: the path, what
			// is wrong with it, exit 1.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			fmt.Fprintf(stderr, "agentmap %s: --maps %s: %v\n", cmd, p, err)
			return nil, "", exitFailure
		case st.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0:
			// A pipe (a process substitution) is read once, as it comes:
			// it cannot be read ahead to tell what it holds. Left open
			// for the command's life: it reads it to its end.
			file, err := os.Open(p)
			if err != nil {
				fmt.Fprintf(stderr, "agentmap %s: --maps: %v\n", cmd, err)
				return nil, "", exitUsage
			}
			return report.Stream{Name: p, R: file}, "piped maps", exitOK
		case st.IsDir():
			*f.noMaps, *f.storeKnown = !holdsMapFile(p), true
			return report.Dir(p), filepath.Base(p), exitOK
		case strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz") || isBundle(p):
			return report.Bundle(p), filepath.Base(p), exitOK
		case strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".jsonl.gz") || report.IsLines(p):
			return report.Lines(p), filepath.Base(p), exitOK
		}
		return report.Files{Root: filepath.Dir(p), Paths: []string{filepath.Base(p)}}, filepath.Base(p), exitOK
	}
	b, code := f.ops.open(cmd, stderr)
	if b == nil {
		return nil, "", code
	}
	defer b.close()
	if b.client == nil && b.db == nil {
		// No state to list from (a daemon that holds it without a socket,
		// or a store filled by other means): the store's files.
		rels, _ := b.store.List()
		*f.noMaps, *f.storeKnown = len(rels) == 0, true
		return report.Dir(b.store.Root), localStore, exitOK
	}
	es, err := b.entries(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", cmd, err)
		return nil, "", exitFailure
	}
	*f.noMaps, *f.storeKnown = len(es) == 0, true
	src := report.Files{Root: b.store.Root}
	for _, e := range es {
		src.Paths = append(src.Paths, e.Path)
	}
	return src, localStore, exitOK
}

// mapsStdin is what `--maps -` reads (tests give their own).
var mapsStdin io.Reader = os.Stdin

// isBundle reports whether the file at p is a tar, gzipped or not,
// whatever its name: `export --format bundle --out F` writes one under any
// name the user gives, and a map (.json.gz) is gzip too, so the tar header
// decides.
func isBundle(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		r = zr
	}
	var block [512]byte
	if _, err := io.ReadFull(r, block[:]); err != nil {
		return false
	}
	return string(block[257:262]) == "ustar" // POSIX and GNU tar headers alike
}

// localStore names the store in a report's heading: a report is made to be
// shared, and the store's path names the user's home.
const localStore = "the local map store"

// collectMaps reads the maps; unreadable ones are reported and skipped,
// and counted. ok is false when the source itself cannot be read
// (sourceError): it has said so, and nothing is to be written.
func collectMaps(ctx context.Context, cmd string, src report.Source, flt report.Filter, stderr io.Writer) (maps []*report.Map, skipped int, ok bool) {
	skipped, ok = readMaps(ctx, cmd, src, flt, stderr, func(m *report.Map) { maps = append(maps, m) })
	if !ok {
		return nil, 0, false
	}
	return maps, skipped, true
}

// readMaps is collectMaps handing each map to each instead of holding
// them all.
func readMaps(ctx context.Context, cmd string, src report.Source, flt report.Filter, stderr io.Writer, each func(*report.Map)) (skipped int, ok bool) {
	errs := report.CollectEach(ctx, src, flt, each)
	for _, err := range errs {
		if errors.As(err, new(sourceError)) {
			if cmd == "report" {
				fmt.Fprintf(stderr, "agentmap %s: %v; nothing written\n", cmd, err)
			} else {
				fmt.Fprintf(stderr, "agentmap %s: %v\n", cmd, err)
			}
			return 0, false
		}
	}
	for i, err := range errs {
		if i == 10 {
			fmt.Fprintf(stderr, "agentmap %s: … and %d more unreadable maps\n", cmd, len(errs)-10)
			break
		}
		fmt.Fprintf(stderr, "agentmap %s: skipped: %v\n", cmd, err)
	}
	return len(errs), true
}

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("report", flag.ContinueOnError)
	fl.SetOutput(stderr)
	mf := addMapFlags(fl)
	out := fl.String("o", "report.html", "the HTML file to write (- for stdout)")
	open := fl.Bool("open", false, "open the report in the default browser")
	session := fl.String("session", "", "only this session's page (its id or a unique prefix)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap report [--since 30d] [--until D] [--agent A] [--repo R] [--outcome O] [--session ID] [--maps DIR|bundle.tar.gz|maps.jsonl|- | --from URL|team [--device D]] [--config F | --data-dir D] [-o report.html] [--open]")
		fmt.Fprintln(stderr, "Writes one self-contained HTML file (no network, no external file) with an overview of the sessions and a page per session.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err)
	}
	if unexpectedArgs(fl, "report", stderr) {
		return exitUsage
	}
	flt, ok := mf.filter("report", stderr)
	if !ok {
		return exitUsage
	}
	flt.Session = *session
	switch {
	case *out == "":
		fmt.Fprintln(stderr, "agentmap report: -o is empty: give the file to write, or - for standard output")
		return exitUsage
	case *out == "-" && *open:
		fmt.Fprintln(stderr, "agentmap report: --open needs a file to open: -o - writes to standard output")
		return exitUsage
	}
	if *out != "-" {
		if fi, err := os.Stat(*out); err == nil && fi.IsDir() {
			fmt.Fprintf(stderr, "agentmap report: -o %s is a directory: give the file to write\n", *out)
			return exitUsage
		}
		if !outputDirExists("report", "-o", *out, stderr) {
			return exitFailure
		}
	}
	src, where, code := mf.source(ctx, "report", stderr)
	if src == nil {
		return code
	}
	var pages []report.Page
	var skipped int
	if *session != "" {
		maps, n, ok := collectMaps(ctx, "report", src, flt, stderr) // the few whose ids start so
		if !ok {
			return exitFailure
		}
		m, err := oneSession(maps, *session)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap report: --session: %v\n", err)
			return exitFailure
		}
		p, err := report.PageOf(m)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap report: %v\n", err)
			return exitFailure
		}
		pages, skipped = []report.Page{p}, n
	} else {
		var err error
		if pages, skipped, err = readPages(ctx, src, flt, stderr); err != nil {
			if !errors.Is(err, errSaid) {
				fmt.Fprintf(stderr, "agentmap report: %v\n", err)
			}
			return exitFailure
		}
	}
	if skipped > 0 && len(pages) == 0 {
		// Nothing to show but maps that could not be read: a page of no
		// session would pass for a report, and replace one there before.
		if flt == (report.Filter{}) && *session == "" {
			fmt.Fprintf(stderr, "agentmap report: no map of %s could be read (skipped above); nothing written\n", where)
		} else {
			fmt.Fprintf(stderr, "agentmap report: no session in %s matches, and %s could not be read (skipped above); nothing written\n",
				where, counted(skipped, "map"))
		}
		return exitFailure
	}
	// A spawned agent is one session with its parent, on the page and in
	// what is said of it.
	shown := len(pages)
	if *session == "" {
		shown = report.PageSessions(pages)
	}
	// A filter that keeps none of the sessions of a store that has some is
	// told from a store with none: mapping the logs is no answer to it.
	opt := report.Options{Single: *session != "", Scope: describeScope(shown, where, flt), Filtered: flt != (report.Filter{}) && *mf.storeKnown && !*mf.noMaps}
	if opt.Single {
		opt.Title = "agentmap session " + pages[0].NativeID()
	}
	if *out == "-" {
		if err := report.WritePages(stdout, pages, opt); err != nil {
			fmt.Fprintf(stderr, "agentmap report: %v\n", err)
			return exitFailure
		}
		if skipped > 0 {
			return exitFailure // the page leaves out maps it could not read, said above
		}
		return exitOK
	}
	var buf strings.Builder
	if err := report.WritePages(&buf, pages, opt); err != nil {
		fmt.Fprintf(stderr, "agentmap report: %v\n", err)
		return exitFailure
	}
	if err := writeOutput(ctx, *out, []byte(buf.String())); err != nil {
		fmt.Fprintf(stderr, "agentmap report: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "agentmap report: %s -> %s (%d KiB)\n", counted(shown, "session"), *out, buf.Len()/1024)
	if shown == 0 {
		// A page of empty tables, said: a store not yet filled, or a
		// filter that keeps no session.
		if *mf.maps == "" && !mf.team.set() && flt == (report.Filter{}) {
			fmt.Fprintf(stderr, "agentmap report: no sessions in %s yet (agentmap scan maps the logs present)\n", where)
		} else {
			fmt.Fprintf(stderr, "agentmap report: no session in %s matches\n", where)
		}
	}
	code = exitOK
	if skipped > 0 {
		code = exitFailure
	}
	if *open {
		// The report is written, but not all that was asked is done: exit
		// 1, as for an unreadable map, with the file's URL to open by hand.
		if err := openInBrowser(*out); err != nil {
			fmt.Fprintf(stderr, "agentmap report: %v\n", err)
			code = exitFailure
		}
	}
	return code
}

// errSaid is an error already said to the user.
var errSaid = errors.New("said")

// pageBatch is how many maps a report reads before it makes their pages
// (on every core) and lets them go.
const pageBatch = 256

// readPages reads the maps, as collectMaps does, and keeps their report
// pages rather than the maps: a report of 100,000 sessions held 2 GB of
// maps. errSaid: the source could not be read, and that is said.
func readPages(ctx context.Context, src report.Source, flt report.Filter, stderr io.Writer) ([]report.Page, int, error) {
	var pages []report.Page
	var batch []*report.Map
	var failed error
	flush := func() {
		if failed != nil || len(batch) == 0 {
			clear(batch)
			batch = batch[:0]
			return
		}
		ps, err := report.PagesOf(batch)
		pages, failed = append(pages, ps...), err
		clear(batch) // the maps go as soon as their pages are made
		batch = batch[:0]
	}
	skipped, ok := readMaps(ctx, "report", src, flt, stderr, func(m *report.Map) {
		if failed != nil {
			return // the report will not be written: no map is kept
		}
		if batch = append(batch, m); len(batch) == pageBatch {
			flush()
		}
	})
	if !ok {
		return nil, 0, errSaid
	}
	flush()
	return pages, skipped, failed
}

// oneSession picks the map an id names: exactly, else by a unique prefix.
func oneSession(maps []*report.Map, id string) (*report.Map, error) {
	var found []*report.Map
	for _, m := range maps {
		if m.Session.ID == id || m.Session.NativeID() == id || (strings.Contains(id, "/") && strings.HasSuffix(id, "/"+m.Session.NativeID())) {
			return m, nil
		}
		found = append(found, m) // the filter kept only prefixes of id
	}
	switch len(found) {
	case 0:
		return nil, errors.New("no session matches that id (agentmap list shows them)")
	case 1:
		return found[0], nil
	}
	slices.SortStableFunc(found, func(a, b *report.Map) int { // newest first, as list
		ta, _ := a.Start()
		tb, _ := b.Start()
		return tb.Compare(ta)
	})
	keys := make([]string, len(found))
	for i, m := range found {
		name, err := agentNamed(m.Session.AgentTool)
		if err != nil {
			name = m.Session.AgentTool
		}
		keys[i] = name + "/" + m.Session.NativeID()
	}
	return nil, ambiguousPrefix(id, keys, "agentmap list shows them all")
}

func describeScope(n int, where string, f report.Filter) string {
	parts := []string{counted(n, "session") + " from " + where}
	if !f.Since.IsZero() {
		parts = append(parts, "since "+f.Since.Local().Format(time.DateOnly))
	}
	if !f.Until.IsZero() {
		parts = append(parts, "before "+f.Until.Local().Format(time.DateOnly))
	}
	if f.Agent != "" {
		parts = append(parts, "agent "+f.Agent)
	}
	if f.Repo != "" {
		parts = append(parts, "repo "+f.Repo)
	}
	return strings.Join(parts, ", ")
}

func cmdUsage(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("usage", flag.ContinueOnError)
	fl.SetOutput(stderr)
	mf := addMapFlags(fl)
	windowOfRequests(fl)
	breakdown := fl.Bool("breakdown", false, "a line per model under each row (daily, weekly, monthly, session)")
	asJSON := fl.Bool("json", false, "print the table as JSON")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap usage [daily|weekly|monthly|session|model] [--since D] [--until D] [--agent A] [--repo R] [--outcome O] [--breakdown] [--json] [--maps DIR|bundle.tar.gz|maps.jsonl|- | --from URL|team [--device D]] [--config F | --data-dir D]")
		fmt.Fprintln(stderr, "Prints tokens (input, output, cache create, cache read) and cost per day, week, month, session or model.")
		fmt.Fprintln(stderr, "Each model request counts at its own time, in the local zone: the time the rows are grouped by and the time --since and --until select, so a session that straddles a bound counts only its requests inside. --agent, --repo and --outcome select sessions.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err)
	}
	period := report.Daily
	var groupings []string
	for _, p := range report.Periods() {
		groupings = append(groupings, string(p))
	}
	switch fl.NArg() {
	case 0:
	case 1:
		period = report.Period(fl.Arg(0))
		if !slices.Contains(groupings, fl.Arg(0)) {
			fmt.Fprintf(stderr, "agentmap usage: unknown grouping %q (%s)\n", fl.Arg(0), orList(groupings))
			return exitUsage
		}
	default:
		fmt.Fprintf(stderr, "agentmap usage: one grouping, not %d: %s (see agentmap help usage)\n", fl.NArg(), orList(groupings))
		return exitUsage
	}
	if *breakdown && period == report.ByModel {
		// A row of usage model is one model already: a line per model
		// under it would be the row again.
		fmt.Fprintln(stderr, "agentmap usage: --breakdown splits the rows of daily, weekly, monthly or session by model; the rows of model are models already")
		return exitUsage
	}
	flt, ok := mf.filter("usage", stderr)
	if !ok {
		return exitUsage
	}
	flt, within := report.UsageFilter(flt)
	src, _, code := mf.source(ctx, "usage", stderr)
	if src == nil {
		return code
	}
	if team, ok := src.(teamSource); ok {
		team.activeSince = within.Since
		src = team
	}
	// Each map is read, kept as the little a usage table reads of it,
	// and let go: a store of 100,000 sessions is totalled in tens of MB.
	var sessions []report.UsageSession
	skipped, ok := readMaps(ctx, "usage", src, flt, stderr, func(m *report.Map) { sessions = append(sessions, report.UsageOf(m)) })
	if !ok {
		return exitFailure
	}
	tab := report.UsageOfSessions(sessions, period, time.Local, within)
	if *mf.maps == "" && !mf.team.set() {
		// The local store: a model its maps left unpriced that the config
		// prices now is named with the flush that reprices it.
		if priced := configPrices(*mf.ops.config); priced != nil {
			tab.NotePrices(priced)
		}
	}
	switch {
	case *asJSON:
		report.WriteUsageJSON(stdout, tab, *breakdown)
	case *mf.noMaps:
		// Not "no model requests", which a window with none says too.
		fmt.Fprintln(stdout, noMapsYet)
	default:
		report.WriteUsageTable(stdout, tab, *breakdown)
	}
	if skipped > 0 {
		// The totals are short of what was asked: a table that looks
		// whole, and an exit 0, would pass for the full count.
		msg := fmt.Sprintf("agentmap usage: the table leaves out %s that could not be read (skipped above)", counted(skipped, "map"))
		if *mf.maps == "" && !mf.team.set() {
			msg += ": agentmap flush --all --rewrite writes the store's maps again"
		}
		fmt.Fprintln(stderr, msg)
		return exitFailure
	}
	return exitOK
}

// holdsMapFile reports whether the directory dir holds a map file (.json.gz
// or .json, as report.Dir reads them) anywhere below it; it stops at the
// first.
func holdsMapFile(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && (strings.HasSuffix(p, ".json.gz") || strings.HasSuffix(p, ".json")) {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}
