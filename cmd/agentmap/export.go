package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/report"
)

// Files the export command keeps in the data directory until the daemon's
// state holds them: the AttemptDB device id (created once, never changed)
// and the next source_seq of this device.
const (
	deviceIDFile = "device-id"
	nextSeqFile  = "attemptdb-next-seq"
)

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("export", flag.ContinueOnError)
	fl.SetOutput(stderr)
	format := fl.String("format", "", "bundle, jsonl, attemptdb, agentscope or sentience (required)")
	sf := addSelectorFlags(fl)
	mode := fl.String("path-mode", "", "re-render relative maps as dirs_only or hashed (default: as stored)")
	keyFile := fl.String("hash-key-file", "", "key of hashed mode (default: <data dir>/hash.key, the daemon's)")
	out := fl.String("out", "-", "output file (written atomically; a name ending in .gz gzips it), or - for stdout")
	of := addOpsFlags(fl)
	firstSeq := fl.Uint64("first-seq", 0, "attemptdb: first source_seq (default: the one after the previous export)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap export --format bundle|jsonl|attemptdb|agentscope|sentience [--since D] [--until D] [--agent A] [--repo R] [--outcome O] [--path-mode M] [--hash-key-file F] [--out PATH] [--config F | --data-dir D] [--first-seq N] [MAP-FILES...]")
		fmt.Fprintln(stderr, "Exports session maps (the store's, or the files given) for other tools.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err)
	}
	if *format == "" {
		fmt.Fprintln(stderr, "agentmap export: --format is required: bundle, jsonl, attemptdb, agentscope or sentience")
		return exitUsage
	}
	f, err := export.ParseFormat(*format)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap export: %v\n", err)
		return exitUsage
	}
	pick, err := sf.parse(time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "agentmap export: %v\n", err)
		return exitUsage
	}
	if f != export.AttemptDB && *firstSeq != 0 {
		fmt.Fprintf(stderr, "agentmap export: --first-seq applies to --format attemptdb only\n")
		return exitUsage
	}
	sel := export.Selection{Since: pick.since, Until: pick.until}
	if pick.repo != "" || pick.outcome != "" {
		sel.Match = report.Filter{Repo: pick.repo, Outcome: pick.outcome}.Keep
	}
	if code := checkExportOutput(*out, f, stdout, stderr); code != exitOK {
		return code
	}
	dataDir, code := of.resolve("export", stderr)
	if dataDir == "" {
		return code
	}
	if of.givenDirMissing("export", dataDir, stderr) {
		return exitFailure
	}
	opts := export.Options{PathMode: redact.Mode(*mode), Producer: producer(), Now: time.Now()}
	switch opts.PathMode {
	case "", redact.ModeRelative, redact.ModeDirsOnly:
	case redact.ModeHashed:
		// The data directory's key (the daemon's) is made on first use, as
		// the daemon makes it; a key named by the flag must be there.
		if *keyFile == "" {
			opts.HashKey, err = config.LoadOrCreateHashKey(filepath.Join(dataDir, "hash.key"))
		} else {
			opts.HashKey, err = config.LoadHashKey(*keyFile)
		}
		if err != nil {
			fmt.Fprintf(stderr, "agentmap export: %v\n", err)
			return exitFailure
		}
	default:
		fmt.Fprintf(stderr, "agentmap export: unknown path mode %q (relative, dirs_only or hashed)\n", *mode)
		return exitUsage
	}
	if f == export.AttemptDB {
		if opts.DeviceID, err = export.LoadOrCreateDeviceID(filepath.Join(dataDir, deviceIDFile)); err != nil {
			fmt.Fprintf(stderr, "agentmap export: %v\n", err)
			return exitFailure
		}
		opts.FirstSeq = *firstSeq
		if opts.FirstSeq == 0 {
			if opts.FirstSeq, err = export.LoadNextSeq(filepath.Join(dataDir, nextSeqFile)); err != nil {
				fmt.Fprintf(stderr, "agentmap export: %v\n", err)
				return exitFailure
			}
		}
	}

	files := fl.Args()
	if len(files) == 0 {
		maps := daemon.MapsDir(dataDir)
		if _, err := os.Stat(maps); os.IsNotExist(err) {
			// Before the first scan: an empty store, as list sees it.
			fmt.Fprintf(stderr, "agentmap export: no session map matched: %s holds no maps yet (agentmap scan writes them)\n", maps)
			return exitFailure
		}
		files, err = export.StoreFiles(maps, pick.agent, sel.Since)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap export: %v\n", err)
			return exitFailure
		}
		if len(files) == 0 && pick.agent == "" && sel.Since.IsZero() {
			fmt.Fprintf(stderr, "agentmap export: no session map matched: %s holds no maps yet (agentmap scan writes them)\n", maps)
			return exitFailure
		}
	} else if pick.agent != "" {
		fmt.Fprintln(stderr, "agentmap export: --agent selects from the store; it does not apply to files given")
		return exitUsage
	}
	// Once stdout has failed, every map after it fails to be written the
	// same way: that is one error, said once below, not one per map.
	w, ok := stdout.(*outWriter)
	if !ok {
		w = &outWriter{w: stdout}
	}
	failed := false
	bad := func(file string, err error) {
		failed = true
		if *out == "-" && w.failed() != nil {
			return
		}
		fmt.Fprintf(stderr, "agentmap export: %s: %v\n", file, err)
	}
	if ctx.Err() != nil {
		return exitFailure
	}
	var res export.Result
	if *out == "-" {
		res, err = export.Write(w, f, opts, false, sel, files, bad)
		if werr := w.failed(); werr != nil {
			fmt.Fprintf(stderr, "agentmap export: %v\n", werr)
			return exitFailure
		}
		if err == nil && res.Sessions == 0 {
			err = export.ErrEmpty
		}
	} else {
		res, err = export.WriteFile(*out, f, opts, sel, files, bad)
	}
	if errors.Is(err, export.ErrEmpty) {
		fmt.Fprintf(stderr, "agentmap export: %s\n", noMapMatched(sf.given(), fl.NArg(), daemon.MapsDir(dataDir)))
		return exitFailure
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentmap export: %v\n", err)
		return exitFailure
	}
	if f == export.AttemptDB {
		if err := export.SaveNextSeq(filepath.Join(dataDir, nextSeqFile), res.NextSeq); err != nil {
			fmt.Fprintf(stderr, "agentmap export: keep next source_seq: %v\n", err)
			return exitFailure
		}
	}
	if *out != "-" {
		fmt.Fprintf(stderr, "%s: %d session(s)\n", *out, res.Sessions)
	}
	if res.Duplicates > 0 {
		fmt.Fprintf(stderr, "agentmap export: %d map(s) of a session already exported were skipped\n", res.Duplicates)
	}
	if failed {
		return exitFailure
	}
	return exitOK
}

// noMapMatched says that an export found no map to write, and, when
// selectors were given, which ones kept every map out and what to try: a
// bare "no session map matched" left the user to wonder whether the
// store was empty or the window too narrow. files is the number of map
// files given (0: the store in maps).
func noMapMatched(selectors []string, files int, maps string) string {
	if len(selectors) == 0 {
		return "no session map matched"
	}
	them, it := "the filter", "it"
	if len(selectors) > 1 {
		them, it = "the filters", "them"
	}
	what := "no session map in " + maps + " matched"
	switch {
	case files == 1:
		what = "the map file given did not match"
	case files > 1:
		what = fmt.Sprintf("none of the %d map files given matched", files)
	}
	s := fmt.Sprintf("%s %s: change %s or leave %s out", what, strings.Join(selectors, " "), them, it)
	if files == 0 {
		s += " (agentmap list shows the sessions there and when each started)"
	}
	return s
}

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	fd, ok := fdOf(w)
	return ok && (isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd))
}

// checkExportOutput refuses what would go wrong quietly: a bundle (a
// gzipped tar) sprayed on a terminal, and an output file in a directory
// that does not exist (export creates no directories).
func checkExportOutput(out string, f export.Format, stdout, stderr io.Writer) int {
	if out == "-" {
		if f == export.Bundle && isTerminal(stdout) {
			fmt.Fprintln(stderr, "agentmap export: a bundle is binary (a gzipped tar) and stdout is a terminal: give --out FILE.tar.gz, or pipe it (| tar tz)")
			return exitUsage
		}
		return exitOK
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		fmt.Fprintf(stderr, "agentmap export: --out %s is a directory: give the file to write\n", out)
		return exitUsage
	}
	if !outputDirExists("export", "--out", out, stderr) {
		return exitFailure
	}
	return exitOK
}
