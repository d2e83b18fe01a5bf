package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
)

// exportFlags override the config's [export] schedule for one run; a flag
// not given leaves the config's value.
type exportFlags struct {
	every   *time.Duration
	dir     *string
	formats *string
	keep    *int
	since   *string
}

func addExportFlags(fl *flag.FlagSet) *exportFlags {
	return &exportFlags{
		every:   fl.Duration("export-every", 0, "export the store this often (default: every of the config's [export]; 0: off)"),
		dir:     fl.String("export-dir", "", "where scheduled exports go (default: dir of [export])"),
		formats: fl.String("export-formats", "", "comma-separated formats of scheduled exports (default: formats of [export])"),
		keep:    fl.Int("export-keep", 0, "how many scheduled exports of each format to keep, 0 for all (default: keep of [export])"),
		since:   fl.String("export-since", "", "sessions of each scheduled export: incremental, all, or a window such as 7d (default: since of [export])"),
	}
}

// check says what is wrong with the values of the flags given (set), ""
// when nothing is: a value that means nothing is a usage error at the
// start, as the config file's are problems, where the daemon would log
// "scheduled exports are off" and follow the logs without them.
func (x *exportFlags) check(set map[string]bool) string {
	if set["export-every"] && *x.every < 0 {
		return fmt.Sprintf("--export-every %s: want 0 (off) or a period such as 1h", *x.every)
	}
	if set["export-formats"] {
		var seen []string
		for _, f := range strings.Split(*x.formats, ",") {
			switch {
			case !slices.Contains(config.ExportFormats, f):
				return fmt.Sprintf("--export-formats %q: %q is not a format (%s)", *x.formats, f, orList(config.ExportFormats))
			case slices.Contains(seen, f):
				return fmt.Sprintf("--export-formats %q: %q is listed twice", *x.formats, f)
			}
			seen = append(seen, f)
		}
	}
	if set["export-keep"] && *x.keep < 0 {
		return fmt.Sprintf("--export-keep %d: want how many exports of each format to keep, 0 for all", *x.keep)
	}
	if s := *x.since; set["export-since"] && s != config.SinceIncremental && s != config.SinceAll {
		if _, ok := (config.Export{Since: s}).SinceWindow(); !ok {
			return fmt.Sprintf("--export-since %q: want incremental, all or a window such as 7d", s)
		}
	}
	return ""
}

// apply lays the flags given over o (the config's schedule). An export
// dir that follows the config's data_dir follows --data-dir too.
func (x *exportFlags) apply(fl *flag.FlagSet, o *daemon.ExportOptions, cfgDataDir, dataDir string) {
	if o.Dir == filepath.Join(cfgDataDir, "exports") {
		o.Dir = filepath.Join(dataDir, "exports")
	}
	fl.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "export-every":
			o.Every = *x.every
		case "export-dir":
			o.Dir = *x.dir
		case "export-formats":
			o.Formats = strings.Split(*x.formats, ",")
		case "export-keep":
			o.Keep = *x.keep
		case "export-since":
			o.Since = *x.since
		}
	})
	if o.Every > 0 && o.Dir == "" {
		o.Dir = filepath.Join(dataDir, "exports")
	}
	if o.Every > 0 && len(o.Formats) == 0 {
		o.Formats = []string{"bundle"}
	}
}

// writeExportStatus renders the scheduled exports' line of a status.
func writeExportStatus(w io.Writer, e *daemon.ExportStatus) {
	if e == nil {
		return
	}
	if e.Last.IsZero() {
		fmt.Fprintln(w, "export:     none written yet")
	} else {
		fmt.Fprintf(w, "export:     %d written, last %s (%s, %s)\n", e.Exports,
			formatTime(e.Last), counted(e.LastSessions, "session"), counted(len(e.LastFiles), "file"))
	}
	if e.LastError != "" {
		attempts := "1 failed attempt"
		if e.Failures != 1 {
			attempts = fmt.Sprintf("%d failed attempts in a row", e.Failures)
		}
		fmt.Fprintf(w, "export err: %s (%s, retrying): %s\n", formatTime(e.Attempt), attempts, e.LastError)
	}
}
