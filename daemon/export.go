package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon/exporter"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/state"
)

// ExportOptions schedule exports of the map store (the config's [export]).
// Every 0 turns them off; see package exporter and docs/exports.md.
type ExportOptions struct {
	Every   time.Duration
	Dir     string
	Formats []string
	// Keep is how many exports of each format stay in Dir; 0 keeps all.
	Keep int
	// Since is "incremental" (the default), "all", or a window such as
	// "7d" (sessions started within it).
	Since string
}

// ExportFromConfig takes the schedule from a loaded config.
func ExportFromConfig(e config.Export) ExportOptions {
	return ExportOptions{Every: e.Every.Duration, Dir: e.Dir, Formats: e.Formats, Keep: e.Keep, Since: e.Since}
}

// schedule checks the options and turns them into the exporter's.
func (o ExportOptions) schedule() (exporter.Config, error) {
	c := exporter.Config{Every: o.Every, Dir: o.Dir, Keep: o.Keep}
	for _, name := range o.Formats {
		f, err := export.ParseFormat(name)
		if err != nil {
			return c, err
		}
		c.Formats = append(c.Formats, f)
	}
	switch o.Since {
	case "", config.SinceIncremental:
		c.Policy = exporter.Incremental
	case config.SinceAll:
		c.Policy = exporter.All
	default:
		w, ok := config.Export{Since: o.Since}.SinceWindow()
		if !ok {
			return c, fmt.Errorf("export since %q is not incremental, all or a window such as 7d", o.Since)
		}
		c.Policy, c.Window = exporter.Window, w
	}
	return c, nil
}

// startExports runs the scheduled exports beside the follower, on the
// daemon's state and clock, when a period is set. The returned stop ends
// them and waits, and must run before the state is closed. A schedule
// that does not check out is logged; the daemon follows without it.
func (d *Daemon) startExports(ctx context.Context) (stop func()) {
	o := d.opt.Export
	if o.Every <= 0 || d.opt.Once {
		return func() {}
	}
	cfg, err := o.schedule()
	var s *exporter.Scheduler
	if err == nil {
		s, err = exporter.New(exporter.Options{Store: d.db, MapsDir: MapsDir(d.opt.DataDir), DataDir: d.opt.DataDir,
			Config: cfg, Clock: d.opt.Clock, Logger: d.log, Producer: d.opt.Producer})
	}
	if err != nil {
		d.log.Error("scheduled exports are off", "component", "export", "err", err)
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.Run(ctx) }()
	return func() { cancel(); wg.Wait() }
}

// ExportStatus is what status shows of the scheduled exports.
type ExportStatus struct {
	// Exports counts the exports written; Last, LastFiles and
	// LastSessions describe the newest.
	Exports      uint64    `json:"exports"`
	Last         time.Time `json:"last,omitzero"`
	LastFiles    []string  `json:"lastFiles,omitempty"`
	LastSessions int       `json:"lastSessions,omitempty"`
	// Attempt is the last attempt; LastError its error when it failed,
	// Failures the failed attempts in a row (retried with back-off).
	Attempt   time.Time `json:"attempt,omitzero"`
	LastError string    `json:"lastError,omitempty"`
	Failures  int       `json:"failures,omitempty"`
	// Pending is set when an export was chosen but not yet recorded: it
	// is written again under the same name at the next attempt.
	Pending bool `json:"pending,omitempty"`
}

// exportStatus reads the exports' cursor; nil when no export was ever
// attempted (or the cursor cannot be read).
func exportStatus(db *state.DB) *ExportStatus {
	if db == nil {
		return nil
	}
	st, err := db.ExportState()
	if err != nil || st.AttemptMs == 0 {
		return nil
	}
	es := &ExportStatus{Exports: st.Count, LastFiles: st.LastFiles, LastSessions: st.LastSessions,
		Attempt: time.UnixMilli(st.AttemptMs), LastError: st.LastError, Failures: st.Failures, Pending: st.Pending != nil}
	if st.LastMs != 0 {
		es.Last = time.UnixMilli(st.LastMs)
	}
	return es
}
