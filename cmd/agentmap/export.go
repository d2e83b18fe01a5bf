package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/watchers"
)

// Files the export command keeps in the data directory until the daemon's
// state holds them: the AttemptDB device id (created once, never changed)
// and the next source_seq of this device.
const (
	deviceIDFile = "device-id"
	nextSeqFile  = "attemptdb-next-seq"
)

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	env := watchers.OSEnv(runtime.GOOS)
	fl := flag.NewFlagSet("export", flag.ContinueOnError)
	fl.SetOutput(stderr)
	format := fl.String("format", "", "bundle, jsonl, attemptdb, agentscope or sentience (required)")
	since := fl.String("since", "", "only sessions started since: a date (2026-05-01), an RFC 3339 time, or an age (72h, 7d)")
	agent := fl.String("agent", "", "only this agent's sessions: claude, codex, cursor, opencode, copilot or gemini")
	mode := fl.String("path-mode", "", "re-render relative maps as dirs_only or hashed (default: as stored)")
	keyFile := fl.String("hash-key-file", "", "key of hashed mode (default: <data dir>/hash.key, the daemon's)")
	out := fl.String("out", "-", "output file (written atomically; .gz gzips the line formats), or - for stdout")
	dataDir := fl.String("data-dir", daemon.DefaultDataDir(env), "where maps/ and the device id live")
	firstSeq := fl.Uint64("first-seq", 0, "attemptdb: first source_seq (default: the one after the previous export)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap export --format F [flags] [MAP-FILES...]")
		fmt.Fprintln(stderr, "Exports session maps (the store's, or the files given) for other tools.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	f, err := export.ParseFormat(*format)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap export: %v\n", err)
		return exitUsage
	}
	sel := export.Selection{}
	if *since != "" {
		if sel.Since, err = parseSince(*since, time.Now()); err != nil {
			fmt.Fprintf(stderr, "agentmap export: %v\n", err)
			return exitUsage
		}
	}
	switch *agent {
	case "", "claude", "codex", "cursor", "opencode", "copilot", "gemini":
	default:
		fmt.Fprintf(stderr, "agentmap export: unknown agent %q (claude, codex, cursor, opencode, copilot or gemini)\n", *agent)
		return exitUsage
	}
	opts := export.Options{PathMode: redact.Mode(*mode), Producer: producer(), Now: time.Now()}
	switch opts.PathMode {
	case "", redact.ModeRelative, redact.ModeDirsOnly:
	case redact.ModeHashed:
		path := *keyFile
		if path == "" {
			path = filepath.Join(*dataDir, "hash.key")
		}
		if opts.HashKey, err = config.LoadOrCreateHashKey(path); err != nil {
			fmt.Fprintf(stderr, "agentmap export: %v\n", err)
			return exitFailure
		}
	default:
		fmt.Fprintf(stderr, "agentmap export: unknown path mode %q (relative, dirs_only or hashed)\n", *mode)
		return exitUsage
	}
	if f == export.AttemptDB {
		if opts.DeviceID, err = export.LoadOrCreateDeviceID(filepath.Join(*dataDir, deviceIDFile)); err != nil {
			fmt.Fprintf(stderr, "agentmap export: %v\n", err)
			return exitFailure
		}
		opts.FirstSeq = *firstSeq
		if opts.FirstSeq == 0 {
			if opts.FirstSeq, err = export.LoadNextSeq(filepath.Join(*dataDir, nextSeqFile)); err != nil {
				fmt.Fprintf(stderr, "agentmap export: %v\n", err)
				return exitFailure
			}
		}
	}

	files := fl.Args()
	if len(files) == 0 {
		files, err = export.StoreFiles(daemon.MapsDir(*dataDir), *agent, sel.Since)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap export: %v\n", err)
			return exitFailure
		}
	} else if *agent != "" {
		fmt.Fprintln(stderr, "agentmap export: --agent selects from the store; it does not apply to files given")
		return exitUsage
	}
	failed := false
	bad := func(file string, err error) {
		fmt.Fprintf(stderr, "agentmap export: %s: %v\n", file, err)
		failed = true
	}
	if ctx.Err() != nil {
		return exitFailure
	}
	var res export.Result
	if *out == "-" {
		res, err = export.Write(stdout, f, opts, false, sel, files, bad)
		if err == nil && res.Sessions == 0 {
			err = export.ErrEmpty
		}
	} else {
		res, err = export.WriteFile(*out, f, opts, sel, files, bad)
	}
	if errors.Is(err, export.ErrEmpty) {
		fmt.Fprintln(stderr, "agentmap export: no session map matched")
		return exitFailure
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentmap export: %v\n", err)
		return exitFailure
	}
	if f == export.AttemptDB {
		if err := export.SaveNextSeq(filepath.Join(*dataDir, nextSeqFile), res.NextSeq); err != nil {
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

// parseSince reads --since: a date, an RFC 3339 time, or an age in hours
// (72h) or days (7d).
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q is not a date, an RFC 3339 time or an age like 72h or 7d", s)
}
