package main

import (
	"flag"
	"path/filepath"
	"strings"
	"time"

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
		every:   fl.Duration("export-every", 0, "export the store this often (overrides [export] every; 0: off)"),
		dir:     fl.String("export-dir", "", "where scheduled exports go (default: exports in the data dir)"),
		formats: fl.String("export-formats", "", "comma-separated formats of scheduled exports (default: bundle)"),
		keep:    fl.Int("export-keep", 0, "how many scheduled exports of each format to keep (0: all)"),
		since:   fl.String("export-since", "", "incremental (default), all, or a window such as 7d"),
	}
}

// apply lays the flags given over o.
func (x *exportFlags) apply(fl *flag.FlagSet, o *daemon.ExportOptions, dataDir string) {
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
