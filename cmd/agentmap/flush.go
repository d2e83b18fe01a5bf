package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state"
)

func cmdFlush(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("flush", flag.ContinueOnError)
	fl.SetOutput(stderr)
	of := addOpsFlags(fl)
	all := fl.Bool("all", false, "flush every session with changes")
	rewrite := fl.Bool("rewrite", false, "with --all: write every map again, up to date or not, with the map options in effect (after a change of path mode)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap flush ID | --all [--rewrite]")
		fmt.Fprintln(stderr, "Writes the maps of live sessions now instead of when they go quiet; a session named by its id is written even if its map is up to date.")
		fmt.Fprintln(stderr, "Without a running daemon, --all runs a catch-up (agentmap scan), which writes every map that changed; ID and --all --rewrite catch up and write in this process as the daemon would.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	// One line that says what to give, not the usage: each of these left
	// the user to find the word that was wrong or missing.
	if extraArgument(fl, "flush", 1, "one session id, or --all", stderr) {
		return exitUsage
	}
	switch {
	case *all && fl.NArg() == 1:
		fmt.Fprintf(stderr, "agentmap flush: the id %q and --all do not go together: give one (--all flushes every session)\n", fl.Arg(0))
		return exitUsage
	case *rewrite && !*all:
		fmt.Fprintln(stderr, "agentmap flush: --rewrite goes with --all: agentmap flush --all --rewrite (a session named by its id is always written)")
		return exitUsage
	case !*all && fl.NArg() == 0:
		fmt.Fprintln(stderr, "agentmap flush: name the session by its id (agentmap list shows them), or give --all for every session")
		return exitUsage
	}
	var said bytes.Buffer
	dataDir, code := of.resolve("flush", &said)
	if dataDir == "" {
		stderr.Write(said.Bytes())
		return code
	}
	c, err := daemon.Connect(dataDir)
	held := err == daemon.ErrNoDaemon && daemon.Held(dataDir)
	// What resolve said of the config (its problems, as a warning; no
	// config directory) the catch-up in this process says again, as it
	// loads the same file (its problems then an error): said once, by
	// the catch-up, when there is one.
	if err != daemon.ErrNoDaemon || held || (*rewrite && runtime.GOOS == "windows") {
		stderr.Write(said.Bytes())
	}
	if err != nil {
		if err != daemon.ErrNoDaemon {
			fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
			return exitFailure
		}
		if held {
			// Not "no daemon": a scan, or a daemon that could not serve
			// its socket (a read-only data directory), which a flush here
			// would only find in its way after saying there was none.
			fmt.Fprintln(stderr, heldMessage("flush", dataDir))
			return exitFailure
		}
		if (*rewrite || !*all) && runtime.GOOS != "windows" {
			return flushInProcess(ctx, of, dataDir, fl.Arg(0), stdout, stderr)
		}
		if *rewrite {
			// No control socket on Windows to ask a daemon of this process.
			fmt.Fprintln(stderr, "agentmap flush: --rewrite needs the running daemon, which holds the sessions (agentmap start, or agentmap run)")
			return exitFailure
		}
		// Nothing follows the logs: a one-shot catch-up reads what they
		// gained and writes every map that changed, the named one with them.
		fmt.Fprintln(stderr, "agentmap flush: no daemon is running; catching up once instead (a map that is up to date is left as it is)")
		// As agentmap scan: its progress and its errors say "scan", which
		// the line above named, not "run".
		scan := []string{"--data-dir", dataDir}
		if *of.config != "" {
			scan = append(scan, "--config", *of.config)
		}
		if code := cmdScan(ctx, scan, stdout, stderr); code != exitOK || fl.NArg() == 0 {
			return code
		}
		// The catch-up wrote every map; the one asked for must be among them.
		b, err := openBackend(dataDir)
		if err == nil {
			defer b.close()
			var es []daemon.Entry
			if es, err = b.entriesNamed(ctx, fl.Arg(0)); err == nil {
				_, err = findEntry(es, fl.Arg(0))
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "agentmap flush: %s: %v\n", fl.Arg(0), err)
			return exitFailure
		}
		return exitOK
	}
	var res daemon.FlushResult
	switch {
	case *rewrite:
		res, err = c.Rewrite(ctx)
	case *all:
		res, err = c.Flush(ctx, "", true)
	default:
		var key string
		if key, err = daemonKey(ctx, c, fl.Arg(0)); err == nil {
			res, err = c.Flush(ctx, key, false)
		}
	}
	if err != nil {
		if !*all {
			fmt.Fprintf(stderr, "agentmap flush: %s: %v\n", fl.Arg(0), err)
		} else {
			fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
		}
		return exitFailure
	}
	code = printFlush(stdout, stderr, res, *rewrite, *all, "the daemon retries it; agentmap status shows the error",
		"see the daemon's log; the daemon tries them again, and agentmap status counts them")
	if *all && !*rewrite {
		// The maps it has not written again yet are up to date with the
		// logs but not with this version: "up to date" alone would say
		// they were.
		if st, err := c.Status(ctx); err == nil && st.Rewrite != nil {
			fmt.Fprintf(stderr, "agentmap flush: the daemon is still writing every map again (%s): %s left; agentmap status shows how many\n",
				rewriteWhy(st.Rewrite), counted(st.Rewrite.Left, "session"))
		}
	}
	return code
}

// daemonKey is the key of the session id names among the store's maps, as
// list and show name them (findEntry: by its map's id, its key, or
// agent/id), for the daemon, which knows its sessions by their keys. An id
// that names several is the same error as without a daemon. One that names
// no map is handed on as a key (its agent spelled as keys spell it), for
// a live session with no map yet, which the daemon finds among those it
// follows; so is one when the store cannot say (the daemon's own answer
// then says what is wrong).
func daemonKey(ctx context.Context, c *daemon.Client, id string) (string, error) {
	es, err := c.Named(ctx, daemon.Named{ID: id, Key: keyOf(id)})
	if err != nil {
		return keyOf(id), nil
	}
	e, err := findEntry(es, id)
	switch {
	case err == nil:
		return e.Key, nil
	case errors.Is(err, errNoEntry):
		return keyOf(id), nil
	}
	return "", err
}

// printFlush says what a flush wrote; retry says what becomes of a map
// that could not be written, wait of lines that wait to be committed.
func printFlush(stdout, stderr io.Writer, res daemon.FlushResult, rewrite, all bool, retry, wait string) int {
	for _, k := range res.Flushed {
		fmt.Fprintf(stdout, "flushed %s\n", k)
	}
	if rewrite {
		fmt.Fprintln(stdout, rewriteLine(res))
	}
	for _, k := range res.Failed {
		fmt.Fprintf(stdout, "failed %s (%s)\n", k, retry)
	}
	lines := "the lines of " + counted(res.Uncommitted, "log")
	for _, k := range res.Behind {
		fmt.Fprintf(stderr, "agentmap flush: the map of %s could not be written with its latest lines: they wait to be committed to the state database, with %s in all (%s)\n",
			k, lines, wait)
	}
	// A flush of every session while lines wait on a failed commit (a
	// full disk) has not made the maps up to date, whatever it wrote.
	waiting := all && res.Uncommitted > 0
	if waiting {
		fmt.Fprintf(stderr, "agentmap flush: %s wait to be committed to the state database (%s); their maps are written once they are\n", lines, wait)
	}
	switch {
	case rewrite, waiting: // said above
	case len(res.Flushed) == 0 && len(res.Failed) == 0 && len(res.Behind) == 0 && res.Current > 0:
		fmt.Fprintln(stdout, "up to date: nothing to flush")
	case len(res.Flushed) == 0 && len(res.Failed) == 0 && len(res.Behind) == 0:
		fmt.Fprintln(stdout, "no sessions")
	}
	if len(res.Failed) > 0 || len(res.Behind) > 0 || waiting {
		return exitFailure
	}
	return exitOK
}

// flushInProcess is flush ID and flush --all --rewrite without a running
// daemon. A map is made from what the state database holds of its session,
// which only a daemon reads and writes (scan's catch-up writes the maps
// that changed, and leaves the others as they are): this process runs one
// on the data directory, as scan does, with the config in effect (its map
// options and prices), asks it over its control socket what the command
// asks a running daemon (a catch-up, then the one map or every map), and
// stops it. Its lock keeps another daemon off the data directory
// meanwhile. id is "" for --rewrite.
func flushInProcess(ctx context.Context, of opsFlags, dataDir, id string, stdout, stderr io.Writer) int {
	c, code := loadConfig(*of.config, "flush", stderr)
	if c == nil {
		return code
	}
	// once: the log level of a command (warnings), as scan's.
	ov := runOverrides{set: map[string]bool{"data-dir": true}, dataDir: dataDir, once: true}
	eff, err := ov.apply(c)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
		return exitFailure
	}
	sink := sinkOptions(c)
	unusableSink("flush", sink, stderr)
	fmt.Fprintln(stderr, "agentmap flush: no daemon is running; catching up and writing the maps in this process")
	// A following daemon, as only one serves the control socket, with
	// nothing scheduled: no exports, and the team database's queue takes
	// the maps written (sent now, or by the next daemon or scan).
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: eff.level}))
	d := daemon.New(daemon.Options{
		DataDir: eff.dataDir, Idle: eff.live.Idle, MaxLine: eff.maxLine, Logger: logger, Roots: eff.live.Roots,
		Rescan: eff.rescan, Debounce: eff.debounce, RetireAfter: eff.retireAfter, Producer: producer(),
		Mapper: eff.live.Mapper, MapIdentity: eff.live.MapIdentity, Exclude: eff.live.Exclude, ExcludeKey: eff.live.ExcludeKey, Control: true, Sink: sink,
		// Maps of other options are written by --rewrite below, which
		// counts them, or by the next daemon or scan: one begun here
		// would be cut short when this process stops.
		NoAutoRewrite: true,
	})
	dctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- d.Run(dctx) }()
	stopped := false
	finish := func() error {
		if stopped {
			return nil
		}
		stopped = true
		stop()
		return <-ran
	}
	defer finish()
	cl, ended, err := awaitControl(ctx, dataDir, ran)
	if err != nil {
		stopped = ended
		fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
		return exitFailure
	}
	scan, err := cl.Scan(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "agentmap flush: caught up: %s checked, %s read, %s written\n",
		counted(scan.Files, "log"), progressSize(scan.Bytes), counted(len(scan.Flush.Flushed), "map"))
	var res daemon.FlushResult
	if id == "" {
		res, err = cl.Rewrite(ctx)
	} else {
		// Named as list and show name it: the store's sessions.
		var es []daemon.Entry
		var e daemon.Entry
		if es, err = cl.Named(ctx, daemon.Named{ID: id, Key: keyOf(id)}); err == nil {
			if e, err = findEntry(es, id); err == nil {
				res, err = cl.Flush(ctx, e.Key, false)
			}
		}
	}
	if err != nil {
		if id != "" {
			fmt.Fprintf(stderr, "agentmap flush: %s: %v\n", id, err)
		} else {
			fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
		}
		return exitFailure
	}
	if err := finish(); err != nil && !errors.Is(err, state.ErrLocked) {
		// A lock error says another daemon took the data directory first,
		// the one whose socket answered: the work asked of it is done.
		fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
		return exitFailure
	}
	return printFlush(stdout, stderr, res, id == "", id == "", "the error is logged above; agentmap flush writes it again",
		"see the log above; they are read again at the next run")
}

// awaitControl waits for the daemon of this process to answer on its
// control socket, or for its Run to end (ran; ended is then true: a daemon
// started on the data directory meanwhile holds its lock, or the state
// cannot be opened).
func awaitControl(ctx context.Context, dataDir string, ran <-chan error) (cl *daemon.Client, ended bool, err error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if cl, err := daemon.Connect(dataDir); err == nil {
			return cl, false, nil
		}
		select {
		case err := <-ran:
			if err == nil {
				err = errors.New("the daemon of this process stopped before it answered")
			}
			return nil, true, err
		case <-ctx.Done():
			return nil, false, errInterrupted
		case <-tick.C:
		}
	}
}

// rewriteLine says what flush --all --rewrite did: the maps written again
// and those that were the same bytes already, which are left as they are.
// Sessions that make no map are in neither.
func rewriteLine(res daemon.FlushResult) string {
	written := res.Rewritten - res.Current
	if res.Current == 0 {
		return "written again: " + counted(written, "map")
	}
	return fmt.Sprintf("written again: %s; up to date already: %d", counted(written, "map"), res.Current)
}
