package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/packaging/logfile"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// rootFlags collects --root agent=DIR overrides.
type rootFlags map[string][]string

func (r rootFlags) String() string { return "" }

func (r rootFlags) Set(v string) error {
	agent, dir, ok := strings.Cut(v, "=")
	switch {
	case !ok || dir == "":
		return errors.New("want agent=DIR")
	case agent != watchers.LayoutClaude && agent != watchers.LayoutCodex &&
		agent != watchers.LayoutCursor && agent != watchers.LayoutCursorApp &&
		agent != watchers.LayoutOpenCode && agent != watchers.LayoutCopilot && agent != watchers.LayoutGemini:
		return fmt.Errorf("unknown agent %q (claude, codex, cursor, cursor-app, opencode, copilot or gemini)", agent)
	}
	// A root is followed for as long as the daemon runs: made absolute
	// here, as the config requires it to be, it does not depend on the
	// directory the daemon was started from.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	r[agent] = append(r[agent], abs)
	return nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runDaemon(ctx, "run", args, stdout, stderr)
}

func cmdScan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runDaemon(ctx, "scan", args, stdout, stderr)
}

// runOnlyFlags are the flags of run that scan has no use for: it catches
// up once and exits, so it neither follows, nor reloads its config, nor
// exports on a schedule, nor lets quiet sessions go. scan refuses them,
// naming run, rather than list them in its help (scan --once=false was
// a following daemon).
type runOnlyFlags struct {
	once        *bool
	retireAfter *time.Duration
	configPoll  *time.Duration
	export      *exportFlags
}

func addRunOnlyFlags(fl *flag.FlagSet) runOnlyFlags {
	return runOnlyFlags{
		once:        fl.Bool("once", false, "catch up on every log present, write every map, and exit (what agentmap scan does)"),
		retireAfter: fl.Duration("retire-after", daemon.DefaultRetireAfter, "let go of a quiet session's records from memory after this long (read back on any news of it)"),
		configPoll:  fl.Duration("config-poll", 2*time.Second, "how often the config file is checked for changes (it is also reloaded on SIGHUP)"),
		export:      addExportFlags(fl),
	}
}

// runOnlyFlag reports whether name is one of runOnlyFlags.
func runOnlyFlag(name string) bool {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	addRunOnlyFlags(fl)
	return fl.Lookup(name) != nil
}

// refuseRunOnly finds a flag of run given to scan, up to a "--".
func refuseRunOnly(args []string) (string, bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && runOnlyFlag(name) {
			return name, true
		}
	}
	return "", false
}

// runDaemon is run and scan (run --once): name is the command the user
// typed, for its usage and its messages.
func runDaemon(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	cfgFile := fl.String("config", "", "the config file (default $"+config.EnvConfig+", else the user config directory's agentmap/config.toml)")
	dataDir := fl.String("data-dir", "", "where state.db and maps/ live (default: data_dir of the config)")
	idle := fl.Duration("idle", daemon.DefaultIdle, "write a session's map once it has been quiet this long")
	// A size as the config writes one (watch.max_line = "64MiB"), or a
	// number of bytes.
	maxLineSize := config.Size(watchers.DefaultMaxLine)
	fl.TextVar(&maxLineSize, "max-line", maxLineSize, "skip (and count) log lines longer than this: a size such as 64MiB or 512KiB, or a number of bytes")
	maxLine := new(int)
	level := fl.String("log-level", "", "debug, info, warn or error (default log.level of the config; warn for scan and run --once)")
	rescan := fl.Duration("rescan", daemon.DefaultRescan, "period of the full stat rescan behind file notifications")
	debounce := fl.Duration("debounce", daemon.DefaultDebounce, "quiet time gathering file notifications before reading")
	pathMode := fl.String("path-mode", "", "path mode of the maps: relative, dirs_only or hashed (default maps.path_mode of the config)")
	logFile := fl.String("log-file", "", "log to this file, capped at 10 MB and rotated (3 older files kept), instead of stderr (the macOS service does)")
	roots := rootFlags{}
	var ro runOnlyFlags
	if name == "scan" {
		if f, ok := refuseRunOnly(args); ok {
			fmt.Fprintf(stderr, "agentmap scan: --%s is a flag of agentmap run, not of scan (scan catches up once and exits; agentmap run follows the logs)\n", f)
			return exitUsage
		}
		// scan is run --once: the run-only flags keep what they mean then.
		scanOnly := flag.NewFlagSet(name, flag.ContinueOnError)
		ro = addRunOnlyFlags(scanOnly)
		*ro.once = true
	} else {
		ro = addRunOnlyFlags(fl)
	}
	once, retireAfter, configPoll, xf := ro.once, ro.retireAfter, ro.configPoll, ro.export
	fl.Var(roots, "root", "follow this directory instead of the agent's configured roots: agent=DIR (claude, codex, cursor, cursor-app, opencode, copilot, gemini); repeatable")
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: agentmap %s [flags]\n", name)
		if name == "scan" {
			fmt.Fprintln(stderr, "Catches up on every log present, writes every map that changed, and exits (run --once).")
			fmt.Fprintln(stderr, "With a daemon running on the same data directory, asks it to do the catch-up (through its control socket).")
			fmt.Fprintln(stderr, "Flags given override the config file.")
		} else {
			fmt.Fprintln(stderr, "Follows every agent's logs and writes a session's map when it goes quiet; stops on SIGINT or SIGTERM.")
			fmt.Fprintln(stderr, "Flags given override the config file; the file is reloaded on SIGHUP and when it changes.")
		}
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	if unexpectedArgs(fl, name, stderr) {
		return exitUsage
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	*maxLine = int(min(int64(maxLineSize), int64(watchers.MaxMaxLine)+1))
	ov := runOverrides{set: set, dataDir: *dataDir, idle: *idle, maxLine: *maxLine, level: *level,
		rescan: *rescan, debounce: *debounce, retireAfter: *retireAfter, pathMode: *pathMode, roots: roots, once: *once}
	if set["log-level"] {
		if _, err := parseLevel(*level); err != nil {
			fmt.Fprintf(stderr, "agentmap %s: unknown log level %q (%s)\n", name, *level, orList(config.LogLevels))
			return exitUsage
		}
	}
	// The flags take values under the config's floors (a test's idle of
	// a second), but not ones that mean nothing: 0 or less would fall back
	// to the defaults without a word.
	for _, f := range []struct {
		name string
		bad  bool
		want string
	}{
		{"idle", *idle <= 0, "a duration above 0"},
		{"rescan", *rescan <= 0, "a duration above 0"},
		{"debounce", *debounce < 0, "0 or more"},
		{"max-line", *maxLine <= 0 || *maxLine > watchers.MaxMaxLine, "a size above 0, at most 1GiB (64MiB, or a number of bytes)"},
	} {
		if set[f.name] && f.bad {
			fmt.Fprintf(stderr, "agentmap %s: --%s must be %s\n", name, f.name, f.want)
			return exitUsage
		}
	}
	if set["retire-after"] && (*retireAfter < config.MinRetireAfter || *retireAfter > config.MaxRetireAfter) {
		fmt.Fprintf(stderr, "agentmap %s: --retire-after must be between %s and %s\n", name,
			config.Duration{Duration: config.MinRetireAfter}, config.Duration{Duration: config.MaxRetireAfter})
		return exitUsage
	}
	if set["path-mode"] && !slices.Contains(config.PathModes, *pathMode) {
		fmt.Fprintf(stderr, "agentmap %s: unknown path mode %q (relative, dirs_only or hashed)\n", name, *pathMode)
		return exitUsage
	}
	if msg := xf.check(set); msg != "" {
		fmt.Fprintf(stderr, "agentmap %s: %s\n", name, msg)
		return exitUsage
	}
	var said bytes.Buffer
	c, code := loadConfig(*cfgFile, name, &said)
	if c != nil && c.DataDir == "" && !set["data-dir"] {
		// The defaults without a home (homeless), as in opsFlags.resolve.
		fmt.Fprintf(stderr, "agentmap %s: %v\n", name, errNoDataDir())
		return exitFailure
	}
	stderr.Write(said.Bytes())
	if c == nil {
		return code
	}
	eff, err := ov.apply(c)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", name, err)
		return exitFailure
	}
	if len(eff.live.Roots) == 0 && noHome() {
		// Following nothing, the command would look like a catch-up of
		// logs that are not there.
		fmt.Fprintf(stderr, "agentmap %s: no agent's logs to follow: %s is not set, and the agents keep their logs under it (set it, or give --root agent=DIR)\n", name, homeVar())
		return exitFailure
	}
	dataDirSeen(eff.dataDir)
	if *once {
		// A running daemon holds the state: it does the catch-up itself.
		if cl, err := daemon.Connect(eff.dataDir); err == nil {
			return scanThroughDaemon(ctx, cl, eff.dataDir, stdout, stderr)
		}
	}
	lvl := new(slog.LevelVar)
	lvl.Set(eff.level)
	logOut := stderr
	if *logFile != "" {
		lf, err := logfile.Open(*logFile, logfile.DefaultMax, logfile.DefaultKeep)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap %s: %v\n", name, err)
			return exitFailure
		}
		defer lf.Close()
		logOut = lf
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: lvl}))
	opt := daemon.Options{
		DataDir: eff.dataDir, Idle: eff.live.Idle, Once: *once, MaxLine: eff.maxLine, Logger: logger,
		Roots: eff.live.Roots, Rescan: eff.rescan, Debounce: eff.debounce, RetireAfter: eff.retireAfter, Producer: producer(),
		Mapper: eff.live.Mapper, MapIdentity: eff.live.MapIdentity, Exclude: eff.live.Exclude, ExcludeKey: eff.live.ExcludeKey, Control: !*once,
	}
	opt.Export = daemon.ExportFromConfig(c.Export)
	xf.apply(fl, &opt.Export, c.DataDir, eff.dataDir)
	opt.Sink = sinkOptions(c)
	unusableSink(name, opt.Sink, stderr)
	var bar *progress
	if *once {
		bar = newProgress(stderr)
		opt.Progress = bar.update
		opt.Rewriting = bar.rewriting
		opt.RewriteLeft = bar.rewriteLeft
	}
	d := daemon.New(opt)
	if !*once {
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		go reloadLoop(rctx, *cfgFile, *configPoll, ov, eff, d, lvl, logger)
	}
	err = d.Run(ctx)
	if *once && err == nil && ctx.Err() != nil {
		// Interrupted: the catch-up stopped where it was (all it
		// committed stands, and the next scan goes on from there).
		err = errInterrupted
	}
	if bar != nil {
		bar.finish(err)
	}
	switch {
	case errors.Is(err, state.ErrLocked) && *once && daemon.Held(eff.dataDir):
		// No socket answered above: a scan, or a daemon that could not
		// serve it, which flush tells apart in the same words.
		fmt.Fprintln(stderr, heldMessage(name, eff.dataDir))
		return exitFailure
	case errors.Is(err, state.ErrLocked):
		fmt.Fprintf(stderr, "agentmap %s: %v\n", name, err)
		return exitFailure
	case err != nil:
		fmt.Fprintf(stderr, "agentmap %s: %v\n", name, err)
		return exitFailure
	}
	if *once {
		printMapsDir(stdout, eff.dataDir, -1)
	}
	return exitOK
}

// runOverrides are the flags of `agentmap run`; those set on the command
// line win over the config file, at start and at every reload.
type runOverrides struct {
	set                    map[string]bool
	dataDir, level         string
	pathMode               string
	idle, rescan, debounce time.Duration
	retireAfter            time.Duration
	maxLine                int
	roots                  rootFlags
	once                   bool
	// readOnly reads the hash key without making one: status, which
	// writes nothing, reckons the maps' identity with it.
	readOnly bool
}

// effective is the configuration a daemon runs with.
type effective struct {
	dataDir          string
	level            slog.Level
	maxLine          int
	rescan, debounce time.Duration
	retireAfter      time.Duration
	live             daemon.Live
	// keyToMake is set, with runOverrides.readOnly, when the maps are to
	// be hashed with a key not made yet: live.MapIdentity is not the one
	// the daemon will have.
	keyToMake bool
	// sink is [sink.postgres] as read: the sender takes it at start, so a
	// reload that changes it says a restart is needed.
	sink config.SinkPostgres
}

func (o runOverrides) apply(c *config.Config) (effective, error) {
	e := effective{dataDir: c.DataDir, maxLine: int(c.Watch.MaxLine), rescan: c.Watch.Rescan.Duration,
		debounce: c.Watch.Debounce.Duration, retireAfter: c.Watch.RetireAfter.Duration, sink: c.Sink.Postgres}
	e.live.Idle = c.Flush.Idle.Duration
	var err error
	if e.level, err = parseLevel(c.Log.Level); err != nil {
		e.level = slog.LevelInfo
	}
	if o.once {
		e.level = slog.LevelWarn
	}
	if o.set["log-level"] {
		e.level, _ = parseLevel(o.level)
	}
	if o.set["data-dir"] {
		// The hash key lives in the data directory in effect, as
		// `export --data-dir` looks for it, unless the config puts it
		// elsewhere.
		if c.Maps.HashKeyFile == filepath.Join(c.DataDir, "hash.key") {
			c.Maps.HashKeyFile = filepath.Join(o.dataDir, "hash.key")
		}
		e.dataDir = o.dataDir
	}
	if e.dataDir == "" { // the defaults, without a home (homeless)
		return e, errNoDataDir()
	}
	if o.set["idle"] {
		e.live.Idle = o.idle
	}
	if o.set["max-line"] {
		e.maxLine = o.maxLine
	}
	if o.set["rescan"] {
		e.rescan = o.rescan
	}
	if o.set["debounce"] {
		e.debounce = o.debounce
	}
	if e.debounce == 0 {
		// 0 asks for no gathering (the file and the flag allow it); the
		// watcher takes 0 for "unset" and would gather 250 ms.
		e.debounce = time.Millisecond
	}
	if o.set["retire-after"] {
		e.retireAfter = o.retireAfter
	}
	e.live.Roots = watchers.OverrideRoots(daemon.RootsFromConfig(c), o.roots)
	mode := c.Maps.PathMode
	if o.set["path-mode"] {
		mode = o.pathMode
	}
	loadKey := config.LoadOrCreateHashKey
	if o.readOnly {
		loadKey = func(path string) ([]byte, error) {
			if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
				e.keyToMake = true // the identity is left to the new key
				return nil, nil
			}
			return config.LoadHashKey(path)
		}
	}
	bopt, err := builderOptionsKeyed(c, mode, loadKey)
	if err != nil {
		return e, err
	}
	e.live.Mapper, e.live.MapIdentity = daemon.OptionsMapper(bopt), bopt.Identity()
	if len(c.Privacy.Exclude) > 0 {
		e.live.Exclude, e.live.ExcludeKey = c.Excluded, c.ExcludeKey()
	}
	return e, nil
}

// builderOptions are the map options of a config: what `agentmap build
// --path-mode M --hash-key-file F --event-cap N` would use, so that the
// daemon's maps and build's agree byte for byte. The defaults are build's.
func builderOptions(c *config.Config, mode string) (builder.Options, error) {
	return builderOptionsKeyed(c, mode, config.LoadOrCreateHashKey)
}

// builderOptionsKeyed is builderOptions with the hash key read by loadKey.
func builderOptionsKeyed(c *config.Config, mode string, loadKey func(path string) ([]byte, error)) (builder.Options, error) {
	opt := builder.Options{PathMode: redact.Mode(mode), EventCap: c.Maps.EventCap, Producer: producer()}
	if opt.PathMode == redact.ModeHashed {
		key, err := loadKey(c.Maps.HashKeyFile)
		if err != nil {
			return opt, err
		}
		opt.HashKey = key
	}
	if len(c.Prices) > 0 {
		opt.Prices = map[string]builder.Price{}
		for prefix, p := range c.Prices {
			opt.Prices[strings.ToLower(prefix)] = priceOverride(p)
		}
	}
	return opt, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// reloadLoop reloads the config on SIGHUP and when the file changes (its
// size, mtime or existence, checked every poll, and unchanged at the check
// after: settledFile). A file with problems is
// reported, each problem with its key and line, and the running config is
// kept. data_dir is read at start only.
func reloadLoop(ctx context.Context, flagValue string, poll time.Duration, ov runOverrides,
	eff effective, d *daemon.Daemon, lvl *slog.LevelVar, log *slog.Logger) {
	hup := hangups // holding the hangups since the process began, for run
	notifyHangup(hup)
	defer signal.Stop(hup)
	path, err := config.Path(flagValue)
	if err != nil {
		return
	}
	w := settledFile{loaded: fileStamp(path)}
	// fromFile: the config in effect was read from the file, not the
	// defaults of a missing one.
	fromFile := w.loaded != stampAbsent
	t := time.NewTicker(max(poll, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		case <-t.C:
			if !w.changed(fileStamp(path)) {
				continue
			}
		}
		stamp := fileStamp(path)
		w.load(stamp)
		if stamp == stampAbsent && fromFile {
			// A config file gone (deleted, moved, a mount gone) is not a
			// wish for the defaults: they would drop privacy.exclude and
			// map what it keeps out. The config in effect stays until the
			// file is back or agentmap restarts, as for a file with
			// problems; a config file missing at the start is refused.
			log.Error("config file removed; keeping the one in effect (put it back, or restart agentmap to run on the defaults)", "component", "config", "path", path)
			d.ConfigRejected(path, []string{"the config file is gone: the one in effect is kept until it is back or agentmap restarts"})
			continue
		}
		c, err := config.Load(path)
		if err != nil {
			probs := config.Problems(err)
			for _, p := range probs {
				log.Error("config problem", "component", "config", "file", p.File, "line", p.Line, "key", p.Key, "problem", p.Msg)
			}
			if len(probs) == 0 {
				log.Error("config problem", "component", "config", "err", err)
			}
			log.Error("config not reloaded; keeping the one in effect", "component", "config", "path", path)
			d.ConfigRejected(path, problemLines(err))
			continue
		}
		next, err := ov.apply(c)
		if err != nil {
			log.Error("config not reloaded; keeping the one in effect", "component", "config", "path", path, "err", err)
			d.ConfigRejected(path, []string{err.Error()})
			continue
		}
		d.ConfigAccepted()
		fromFile = stamp != stampAbsent
		if next.dataDir != eff.dataDir {
			log.Warn("data_dir changed; it takes effect at the next start", "component", "config")
		}
		if next.maxLine != eff.maxLine || next.rescan != eff.rescan || next.debounce != eff.debounce || next.retireAfter != eff.retireAfter {
			log.Warn("watch settings changed; they take effect at the next start", "component", "config")
		}
		if next.sink != eff.sink {
			log.Warn("team database settings ([sink.postgres]) changed; they take effect at the next start (agentmap restart)", "component", "config")
		}
		lvl.Set(next.level)
		d.Reconfigure(next.live)
	}
}

// problemLines are a config error's problems, one line each.
func problemLines(err error) []string {
	probs := config.Problems(err)
	if len(probs) == 0 {
		return []string{err.Error()}
	}
	lines := make([]string, len(probs))
	for i, p := range probs {
		lines[i] = p.Error()
	}
	return lines
}

// settledFile decides when a changed config file is reloaded: once it has
// shown the same size and time at two checks in a row. An editor or a
// script that rewrites the file in place truncates it first; a check that
// falls between the truncation and the write sees an empty or half-written
// file, which may well parse (an empty file is all defaults) and would
// silently drop the user's settings, privacy.exclude among them, until the
// next change. Waiting for a second look costs one poll of delay.
type settledFile struct {
	loaded string // the stamp of the version in effect (or last rejected)
	seen   string // the stamp seen at the last check, if it differs from loaded
}

// changed reports whether the file, stamped st now, differs from the version
// loaded and has not moved since the last check.
func (w *settledFile) changed(st string) bool {
	if st == w.loaded {
		w.seen = ""
		return false
	}
	if st != w.seen {
		w.seen = st
		return false
	}
	return true
}

// load records that the version stamped st is being loaded.
func (w *settledFile) load(st string) { w.loaded, w.seen = st, "" }

// stampAbsent is the stamp of a config file that is not there (or cannot
// be looked at).
const stampAbsent = "absent"

// fileStamp identifies a version of the config file cheaply.
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return stampAbsent
	}
	return fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
}

// scanThroughDaemon asks the daemon that follows dataDir to catch up on
// every log and write every map that changed, and says what it did.
func scanThroughDaemon(ctx context.Context, cl *daemon.Client, dataDir string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "scan: a daemon is running on this data directory; asking it to catch up and flush")
	res, err := cl.Scan(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap scan: %v\n", err)
		return exitFailure
	}
	f := res.Flush
	failed := len(f.Failed) > 0 || f.Uncommitted > 0 || res.Unlisted > 0 || res.Unreadable > 0 || res.UnreadableDBs > 0
	outcome := "done by the daemon"
	if failed {
		outcome = "done by the daemon, with errors"
	}
	fmt.Fprintf(stderr, "scan: %s: %s checked, %s read, %s written, %s\n",
		outcome, counted(res.Files, "log"), progressSize(res.Bytes), counted(len(f.Flushed), "map"), counted(res.Sessions, "session"))
	for _, k := range f.Failed {
		fmt.Fprintf(stderr, "agentmap scan: the map of %s could not be written (the daemon retries it; agentmap status shows the error)\n", k)
	}
	if n := f.Uncommitted; n > 0 {
		// As a scan without a daemon says it, the maps of those lines
		// being written only once the commit succeeds.
		fmt.Fprintf(stderr, "agentmap scan: the lines of %s wait to be committed to the state database (see the daemon's log); the daemon tries them again and then writes their maps, and agentmap status counts them\n", counted(n, "log"))
	}
	switch n := res.Unlisted; {
	case n == 1:
		fmt.Fprintln(stderr, "agentmap scan: 1 log directory could not be listed (see the daemon's log); the daemon reads its logs at the first rescan that can, and agentmap status counts it")
	case n > 1:
		fmt.Fprintf(stderr, "agentmap scan: %d log directories could not be listed (see the daemon's log); the daemon reads their logs at the first rescan that can, and agentmap status counts them\n", n)
	}
	if n := res.Unreadable; n > 0 {
		fmt.Fprintf(stderr, "agentmap scan: %s could not be read (see the daemon's log); the daemon tries them again on a schedule, and agentmap status counts them\n", counted(n, "log"))
	}
	switch n := res.UnreadableDBs; {
	case n == 1:
		fmt.Fprintln(stderr, "agentmap scan: 1 database could not be read (see the daemon's log); the daemon tries it again on a schedule, and agentmap status counts it")
	case n > 1:
		fmt.Fprintf(stderr, "agentmap scan: %d databases could not be read (see the daemon's log); the daemon tries them again on a schedule, and agentmap status counts them\n", n)
	}
	if r := res.Rewrite; r != nil {
		// Its maps are up to date with the logs, but not all of them
		// with this version yet: "done" alone would say they were.
		fmt.Fprintf(stderr, "scan: the daemon is still writing every map again (%s): %s left; agentmap status shows how many\n",
			rewriteWhy(r), counted(r.Left, "session"))
	}
	printMapsDir(stdout, dataDir, res.Files)
	if failed {
		return exitFailure
	}
	return exitOK
}

// rewriteWhy says why a daemon writes every map again.
func rewriteWhy(r *daemon.RewriteStatus) string {
	if r.Auto {
		return "they were written by an earlier version or with other map options"
	}
	return "flush --all --rewrite"
}

// progress shows a catch-up: a bar redrawn in place on a terminal, a plain
// line every 10% otherwise.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	last     time.Time
	lastPct  int
	done     int64
	total    int64
	sessions int
	// seen is the most sessions a progress line counted: the sessions
	// met so far. The last word counts those with a map, as status and
	// list do, so that a log with nothing to map (a summary alone, a
	// rollout with no turn) counts in the first and not in the second;
	// finish says how many, where the numbers would disagree unexplained.
	seen  int
	drawn bool
	// started is the first update's time: the rate since tells the time
	// left.
	started time.Time
	done0   int64   // done at the first update
	fd      uintptr // of the terminal drawn on
	width   int     // of the last bar drawn
	// rewriteTotal is the sessions a rewrite of every map goes through
	// (rewriting), rewritePct the last 10% said, rewriteStart its start.
	rewriteTotal int
	rewritePct   int
	rewriteStart time.Time
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, lastPct: -10}
	if fd, ok := fdOf(w); ok {
		p.tty = isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
		p.fd = fd
	}
	return p
}

func (p *progress) update(done, total int64, sessions int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total, p.sessions = done, total, sessions
	p.seen = max(p.seen, sessions)
	// The rate is that of the reads since the first update: what it
	// counted already (a whole database, a first log) took no time seen
	// here, and would make the first estimates too short.
	if p.started.IsZero() {
		p.started, p.done0 = time.Now(), done
	}
	left := timeLeft(time.Since(p.started), done-p.done0, total-p.done0)
	pct := 100
	if total > 0 {
		pct = int(min(done, total) * 100 / total)
	}
	// Lines read again (a failed commit's, retried) count again in done:
	// of the history, no more than all of it is shown read.
	shown := done
	if total > 0 {
		shown = min(done, total)
	}
	if p.tty {
		if time.Since(p.last) < 100*time.Millisecond && pct != 100 {
			return
		}
		p.last = time.Now()
		const width = 30
		fill := pct * width / 100
		bar := fmt.Sprintf("scan [%s%s] %3d%%  %s / %s  %s",
			strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct, progressSize(shown), progressSize(total), counted(sessions, "session"))
		p.drawBar(bar, left)
		return
	}
	if pct/10 != p.lastPct/10 {
		p.lastPct = pct
		if left != "" {
			left = ", " + left
		}
		fmt.Fprintf(p.w, "scan: %d%% (%s of %s, %s%s)\n", pct, progressSize(shown), progressSize(total), counted(sessions, "session"), left)
	}
}

// rewriting says that the catch-up goes on with writing every map again
// (their options changed: an upgrade, new prices), which over a large
// history takes a while and would otherwise pass without a word.
func (p *progress) rewriting(sessions int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	fmt.Fprintf(p.w, "scan: the maps were written by an earlier version or with other map options (prices, path mode, event cap); writing the maps again (%s to go through)\n", counted(sessions, "session"))
	p.rewriteTotal, p.rewritePct, p.rewriteStart = sessions, -10, time.Now()
}

// rewriteLeft tells how far the writing of every map again has gone: a
// bar on a terminal, else a line every 10%, each with the time left at
// its rate so far (over 100,000 sessions it takes half a minute).
func (p *progress) rewriteLeft(left int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	total := p.rewriteTotal
	if total <= 0 {
		return
	}
	done := max(total-min(left, total), 0)
	pct := done * 100 / total
	est := timeLeft(time.Since(p.rewriteStart), int64(done), int64(total))
	if p.tty {
		const width = 30
		fill := pct * width / 100
		p.drawBar(fmt.Sprintf("scan [%s%s] %3d%%  %d / %s written again", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct, done, counted(total, "session")), est)
		return
	}
	if pct/10 != p.rewritePct/10 {
		p.rewritePct = pct
		if est != "" {
			est = ", " + est
		}
		fmt.Fprintf(p.w, "scan: writing the maps again: %d%% (%d of %s%s)\n", pct, done, counted(total, "session"), est)
	}
}

// drawBar draws a line of the bar, with the estimate est after it, over
// the last one: padded to it, so that a shorter one leaves none of it
// behind (with spaces, which every console draws, where an erase sequence
// needs a VT one), and no wider than the terminal, as a wider one would
// wrap and leave a row at every redraw (\r goes back to the start of the
// last row only): the estimate goes first, then the line's end.
func (p *progress) drawBar(bar, est string) {
	line := bar + " "
	if est != "" {
		line = bar + "  " + est + " "
	}
	if cols := termWidth(p.fd); cols > 0 && len(line) >= cols {
		line = bar + " "
		if len(line) >= cols {
			line = line[:cols-1]
		}
	}
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.drawn = true
}

// finish ends the progress with the scan's outcome: "done" when it
// succeeded, "done with errors" when it read everything but something
// failed, "stopped" when an error ended it early, and nothing
// when it failed before it started (a locked state, an unsafe data
// directory), where the error alone is the news.
func (p *progress) finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
	}
	started := p.lastPct >= 0 || p.drawn
	switch {
	case err == nil:
		fmt.Fprintf(p.w, "scan: done, %s read, %s%s\n", progressSize(p.done), counted(p.sessions, "session"), p.unmapped())
	case !started:
	case errors.Is(err, errInterrupted):
		// Whatever it had read: the maps were not all written.
		fmt.Fprintf(p.w, "scan: stopped, %s read, %s\n", progressSize(p.done), counted(p.sessions, "session"))
	case p.done >= p.total:
		// Read to the end (a second scan's nothing included), but
		// something failed (a log or a directory it could not read, a
		// map it could not write): the error says.
		fmt.Fprintf(p.w, "scan: done with errors, %s read, %s\n", progressSize(p.done), counted(p.sessions, "session"))
	default:
		fmt.Fprintf(p.w, "scan: stopped, %s read, %s\n", progressSize(p.done), counted(p.sessions, "session"))
	}
}

// unmapped tells the sessions met that made no map, when there are some.
func (p *progress) unmapped() string {
	if n := p.seen - p.sessions; n > 0 {
		return fmt.Sprintf(" (%d more had nothing to map)", n)
	}
	return ""
}

// logsFollowed is how many logs a status counts, of every agent.
func logsFollowed(st daemon.Status) int {
	n := 0
	for _, a := range st.Agents {
		n += a.Files
	}
	return n
}

// errInterrupted is a one-shot scan's error when a signal ended it.
var errInterrupted = errors.New("interrupted; what was read is kept, and the next scan goes on from there")

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// progressSize is mb for a scan's own progress lines, in kB below a
// megabyte: a first scan of a few small logs read "0.0 MB".
func progressSize(n int64) string {
	if n < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return mb(n)
}

// printMapsDir ends a scan with where its maps are, or, when there are none
// at all, says why before naming a directory that does not exist yet: no
// agent's logs were found, or the logs found (by this scan or an earlier
// one, which a second scan does not read again) held no session (a stray
// file named like a log, every line skipped).
//
// logs < 0 asks the state database (the scan has closed it), which counts
// the logs a second scan found and did not read again.
func printMapsDir(stdout io.Writer, dataDir string, logs int) {
	maps := daemon.MapsDir(dataDir)
	if _, err := os.Stat(maps); errors.Is(err, fs.ErrNotExist) {
		if logs < 0 {
			logs = 0
			if db, err := state.OpenReadOnly(daemon.StatePath(dataDir)); err == nil {
				if st, err := daemon.OfflineStatus(db, dataDir); err == nil {
					logs = logsFollowed(st)
				}
				db.Close()
			}
		}
		if logs > 0 {
			fmt.Fprintf(stdout, "no maps yet: %s found, holding no session (agentmap status counts their skipped lines); maps go in %s\n", counted(logs, "log"), maps)
			return
		}
		fmt.Fprintf(stdout, "no maps yet: no agent's logs were found (agentmap doctor shows where agentmap looks); maps go in %s\n", maps)
		return
	}
	fmt.Fprintf(stdout, "maps in %s\n", maps)
}
