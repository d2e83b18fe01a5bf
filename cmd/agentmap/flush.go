package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/agentmap/agentmap/daemon"
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
		fmt.Fprintln(stderr, "Without a running daemon it runs a catch-up (agentmap scan), which writes every map that changed.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	if *all == (fl.NArg() == 1) || fl.NArg() > 1 {
		fl.Usage()
		return exitUsage
	}
	if *rewrite && !*all {
		fmt.Fprintln(stderr, "agentmap flush: --rewrite goes with --all (a session named by its id is always written)")
		return exitUsage
	}
	dataDir, code := of.resolve("flush", stderr)
	if dataDir == "" {
		return code
	}
	c, err := daemon.Connect(dataDir)
	if err != nil {
		if err != daemon.ErrNoDaemon {
			fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
			return exitFailure
		}
		if *rewrite {
			fmt.Fprintln(stderr, "agentmap flush: --rewrite needs the running daemon, which holds the sessions (agentmap start, or agentmap run)")
			return exitFailure
		}
		// Nothing follows the logs: a one-shot catch-up reads what they
		// gained and writes every map that changed, the named one with them.
		fmt.Fprintln(stderr, "agentmap flush: no daemon is running; catching up once instead (a map that is up to date is left as it is)")
		scan := []string{"--once", "--data-dir", dataDir}
		if *of.config != "" {
			scan = append(scan, "--config", *of.config)
		}
		if code := cmdRun(ctx, scan, stdout, stderr); code != exitOK || fl.NArg() == 0 {
			return code
		}
		// The catch-up wrote every map; the one asked for must be among them.
		b, err := openBackend(dataDir)
		if err == nil {
			defer b.close()
			var es []daemon.Entry
			if es, err = b.entries(ctx); err == nil {
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
	if *rewrite {
		res, err = c.Rewrite(ctx)
	} else {
		res, err = c.Flush(ctx, fl.Arg(0), *all)
	}
	if err != nil {
		if !*all {
			fmt.Fprintf(stderr, "agentmap flush: %s: %v\n", fl.Arg(0), err)
		} else {
			fmt.Fprintf(stderr, "agentmap flush: %v\n", err)
		}
		return exitFailure
	}
	for _, k := range res.Flushed {
		fmt.Fprintf(stdout, "flushed %s\n", k)
	}
	if *rewrite {
		fmt.Fprintln(stdout, rewriteLine(res))
	}
	for _, k := range res.Failed {
		fmt.Fprintf(stdout, "failed %s (the daemon retries it; agentmap status shows the error)\n", k)
	}
	switch {
	case *rewrite: // said above
	case len(res.Flushed) == 0 && len(res.Failed) == 0 && res.Current > 0:
		fmt.Fprintln(stdout, "up to date: nothing to flush")
	case len(res.Flushed) == 0 && len(res.Failed) == 0:
		fmt.Fprintln(stdout, "no sessions")
	}
	if len(res.Failed) > 0 {
		return exitFailure
	}
	return exitOK
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
