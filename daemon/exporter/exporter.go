// Package exporter writes the daemon's scheduled exports: every period,
// the maps of the sessions flushed since the previous export, in each
// configured format, under one time stamp (export.Batch), keeping the
// newest few.
//
// Nothing is skipped or exported twice, across failures, restarts and
// crashes, because of the order of three steps: the selection (sessions
// whose flushed content differs from what was last exported for them) is
// recorded as pending with its stamp and first AttemptDB source_seq; the
// files are written and made durable; then, in one transaction, the
// content exported for each session and the advanced cursor are recorded
// and the pending export cleared. A crash before that transaction leaves
// the pending export, which the next attempt writes again under the same
// name, with the same sessions and sequence numbers.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// Files in the data directory shared with `agentmap export`, so that one
// machine is one AttemptDB device whose source_seq only grows.
const (
	DeviceIDFile = "device-id"
	NextSeqFile  = "attemptdb-next-seq"
)

// maxBackoff caps the wait between attempts after a failed export.
const maxBackoff = 5 * time.Minute

// Store is where the flushed sessions and the cursor are kept
// (*state.DB).
type Store interface {
	Flushed() ([]state.Exported, error)
	ExportedContent() (map[string]string, error)
	ExportState() (state.ExportState, error)
	PutExportState(state.ExportState) error
	CommitExport(state.ExportState, []state.Exported) error
}

// Policy says which sessions an export holds.
type Policy int

// The policies.
const (
	// Incremental exports the sessions flushed or re-flushed (with new
	// content) since the previous export.
	Incremental Policy = iota
	// All exports every session in the store each time.
	All
	// Window exports every session that started within Config.Window
	// before the export.
	Window
)

// Config is the schedule.
type Config struct {
	Every   time.Duration
	Dir     string
	Formats []export.Format
	// Keep is how many exports of each format stay in Dir; 0 keeps all.
	Keep   int
	Policy Policy
	Window time.Duration
}

// Options are a Scheduler's inputs.
type Options struct {
	Store Store
	// MapsDir is the map store the flush records' paths are relative to.
	MapsDir string
	// DataDir holds the device id and next source_seq files shared with
	// `agentmap export`.
	DataDir  string
	Config   Config
	Clock    watchers.Clock
	Logger   *slog.Logger
	Producer string
}

// Scheduler runs the scheduled exports.
type Scheduler struct {
	o Options
}

// New checks the options.
func New(o Options) (*Scheduler, error) {
	c := o.Config
	switch {
	case o.Store == nil:
		return nil, errors.New("scheduled exports: no store")
	case c.Every <= 0:
		return nil, errors.New("scheduled exports: the period must be positive")
	case c.Dir == "":
		return nil, errors.New("scheduled exports: no directory")
	case len(c.Formats) == 0:
		return nil, errors.New("scheduled exports: no format")
	case c.Keep < 0:
		return nil, errors.New("scheduled exports: keep must not be negative")
	case c.Policy == Window && c.Window <= 0:
		return nil, errors.New("scheduled exports: the window must be positive")
	}
	seen := map[export.Format]bool{}
	for _, f := range c.Formats {
		if _, err := export.ParseFormat(string(f)); err != nil {
			return nil, fmt.Errorf("scheduled exports: %w", err)
		}
		if seen[f] {
			return nil, fmt.Errorf("scheduled exports: format %s listed twice", f)
		}
		seen[f] = true
	}
	if o.Clock == nil {
		o.Clock = watchers.SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Logger = o.Logger.With("component", "export")
	return &Scheduler{o: o}, nil
}

// Run exports on schedule until ctx is done. A failed export is retried
// with back-off (1 s doubling, capped at 5 min and at the period); its
// error is kept in the cursor for status. Only ctx ends Run.
func (s *Scheduler) Run(ctx context.Context) error {
	next := s.firstDue()
	failures := 0
	for {
		wait := next.Sub(s.o.Clock.Now())
		select {
		case <-ctx.Done():
			return nil
		case <-s.o.Clock.After(wait):
		}
		if ctx.Err() != nil {
			return nil
		}
		now := s.o.Clock.Now()
		if _, err := s.Export(now); err != nil {
			failures++
			delay := min(time.Second<<min(failures-1, 20), maxBackoff, s.o.Config.Every)
			s.o.Logger.Error("export failed; will retry", "err", err, "retryIn", delay.String())
			next = now.Add(delay)
			continue
		}
		failures = 0
		next = now.Add(s.o.Config.Every)
	}
}

// firstDue is when the first export of this run is due: at once when one
// is pending or failed, or when a period has passed since the last
// attempt; one period after start when none was ever made.
func (s *Scheduler) firstDue() time.Time {
	now := s.o.Clock.Now()
	st, err := s.o.Store.ExportState()
	if err != nil || st.Pending != nil || st.Failures > 0 {
		return now
	}
	if st.AttemptMs == 0 {
		return now.Add(s.o.Config.Every)
	}
	at := time.UnixMilli(st.AttemptMs).Add(s.o.Config.Every)
	if at.Before(now) {
		return now
	}
	if limit := now.Add(s.o.Config.Every); at.After(limit) {
		return limit // the clock went back
	}
	return at
}

// Outcome says what one export wrote.
type Outcome struct {
	Files    []string
	Sessions int
}

// Export makes one export now: the pending one if a previous attempt did
// not finish, else a new selection. Nothing selected writes nothing.
func (s *Scheduler) Export(now time.Time) (Outcome, error) {
	st, err := s.o.Store.ExportState()
	if err != nil {
		return Outcome{}, fmt.Errorf("read export cursor: %w", err)
	}
	st.AttemptMs = now.UnixMilli()
	out, err := s.export(now, &st)
	if err != nil {
		st.LastError = err.Error()
		st.Failures++
		if perr := s.o.Store.PutExportState(st); perr != nil {
			s.o.Logger.Error("cannot record the failed export", "err", perr)
		}
		return Outcome{}, err
	}
	return out, nil
}

func (s *Scheduler) export(now time.Time, st *state.ExportState) (Outcome, error) {
	c := s.o.Config
	if st.DeviceID == "" {
		id, err := export.LoadOrCreateDeviceID(filepath.Join(s.o.DataDir, DeviceIDFile))
		if err != nil {
			return Outcome{}, err
		}
		st.DeviceID = id
	}
	p := st.Pending
	if p != nil {
		// A crash (or failure) came after the selection was recorded: the
		// files of its stamp that attempt wrote are written again. A file
		// of those names it did not write (another data directory
		// exporting into the same directory in the same second) stays,
		// and this export takes the next free stamp.
		stamp := time.UnixMilli(p.StampMs)
		written := make([]export.OwnedFile, len(p.Written))
		for i, o := range p.Written {
			written[i] = export.OwnedFile(o)
		}
		if err := export.RemoveOwned(c.Dir, written); err != nil {
			return Outcome{}, fmt.Errorf("remove unfinished export: %w", err)
		}
		for _, f := range c.Formats {
			// A kill mid-write leaves the temporary file it wrote; one
			// still being written (another writer's) is fresh.
			tmps, _ := filepath.Glob(filepath.Join(c.Dir, "."+export.FileName(f, stamp)+".tmp-*"))
			for _, tmp := range tmps {
				if fi, err := os.Lstat(tmp); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > staleTemp {
					os.Remove(tmp)
				}
			}
		}
		p.Written = nil
		if free := freeStamp(c.Dir, c.Formats, stamp); !free.Equal(stamp) {
			p.StampMs = free.UnixMilli()
		}
		if err := s.o.Store.PutExportState(*st); err != nil {
			return Outcome{}, fmt.Errorf("record pending export: %w", err)
		}
		s.o.Logger.Info("writing an unfinished export again", "sessions", len(p.Sessions))
	} else {
		sel, err := s.selectSessions()
		if err != nil {
			return Outcome{}, err
		}
		if len(sel) == 0 {
			s.finishEmpty(st)
			return Outcome{}, s.o.Store.PutExportState(*st)
		}
		first, err := export.LoadNextSeq(filepath.Join(s.o.DataDir, NextSeqFile))
		if err != nil {
			return Outcome{}, err
		}
		first = max(first, st.NextSeq, 1)
		stamp := now.UTC().Truncate(time.Second)
		if last := time.UnixMilli(st.LastMs); st.LastMs != 0 && !stamp.After(last) {
			stamp = last.Add(time.Second) // export names must not repeat
		}
		stamp = freeStamp(c.Dir, c.Formats, stamp)
		p = &state.PendingExport{StampMs: stamp.UnixMilli(), FirstSeq: first, Sessions: sel}
		st.Pending = p
		if err := s.o.Store.PutExportState(*st); err != nil {
			return Outcome{}, fmt.Errorf("record pending export: %w", err)
		}
	}

	stamp := time.UnixMilli(p.StampMs).UTC()
	files := make([]string, len(p.Sessions))
	for i, e := range p.Sessions {
		files[i] = filepath.Join(s.o.MapsDir, filepath.FromSlash(e.Path))
	}
	bad := map[string]bool{}
	var sel export.Selection
	if c.Policy == Window {
		sel.Since = stamp.Add(-c.Window)
	}
	b := export.Batch{Dir: c.Dir, Formats: c.Formats, Stamp: stamp,
		Written: func(path string) {
			// Recorded before the next file is written: a retry removes
			// exactly what this attempt left.
			for _, o := range export.Own([]string{path}) {
				p.Written = append(p.Written, state.OwnedExport(o))
			}
			if err := s.o.Store.PutExportState(*st); err != nil {
				s.o.Logger.Warn("cannot record an export file written", "err", err)
			}
		},
		Options: export.Options{DeviceID: st.DeviceID, FirstSeq: p.FirstSeq, Producer: s.o.Producer, Now: stamp}}
	res, err := b.Write(sel, files, func(file string, err error) {
		if !bad[file] {
			bad[file] = true
			s.o.Logger.Warn("map left out of the export", "map", relTo(s.o.MapsDir, file), "err", err)
		}
	})
	if err != nil {
		return Outcome{}, err
	}
	if len(res.Files) == 0 {
		// Every selected map was unreadable, outside the window, or
		// refused by every format's writer (each logged as left out):
		// those stay due and are tried again at the next export.
		st.Pending = nil
		s.finishEmpty(st)
		return Outcome{}, s.o.Store.PutExportState(*st)
	}
	// Only incremental exports advance the per-session record: a snapshot
	// or a window may leave sessions out, and switching to incremental
	// must not skip them. What is recorded is the content the batch read:
	// a map flushed again after the selection was exported as it is now,
	// and recording the selected content would export it a second time.
	var done []state.Exported
	for i, e := range p.Sessions {
		sum, ok := res.Exported[files[i]]
		if c.Policy == Incremental && ok {
			e.SHA256, e.StampMs = sum, p.StampMs
			done = append(done, e)
		}
	}
	if hasFormat(c.Formats, export.AttemptDB) {
		st.NextSeq = res.NextSeq
	} else {
		st.NextSeq = p.FirstSeq
	}
	st.Pending = nil
	st.Count++
	st.LastMs = p.StampMs
	st.LastFiles = st.LastFiles[:0]
	for _, f := range res.Files {
		st.LastFiles = append(st.LastFiles, filepath.Base(f))
	}
	st.LastSessions = res.Sessions
	st.LastError, st.Failures = "", 0
	if c.Keep > 0 {
		// Recorded with the export, before any file is pruned: only
		// what the state says this directory wrote is ever deleted.
		for _, o := range export.Own(res.Files) {
			st.Owned = append(st.Owned, state.OwnedExport(o))
		}
	}
	if err := s.o.Store.CommitExport(*st, done); err != nil {
		// The files stay: the pending export is written again under the
		// same name at the next attempt.
		st.Pending = p
		return Outcome{}, fmt.Errorf("record export: %w", err)
	}
	if c.Keep > 0 {
		s.prune(st, c)
	}
	if err := export.SaveNextSeq(filepath.Join(s.o.DataDir, NextSeqFile), st.NextSeq); err != nil {
		s.o.Logger.Warn("cannot keep the next source_seq for agentmap export", "err", err)
	}
	s.o.Logger.Info("exported", "files", len(res.Files), "sessions", res.Sessions, "dir", c.Dir)
	return Outcome{Files: res.Files, Sessions: res.Sessions}, nil
}

// staleTemp is how old a temporary file of an unfinished export's names
// must be to be taken for one a killed attempt left, not one being
// written.
const staleTemp = 10 * time.Minute

// freeStamp is stamp, or the first second after it, at which no file of
// the formats' names is in dir: an export never writes over, nor waits on,
// a file it did not write.
func freeStamp(dir string, formats []export.Format, stamp time.Time) time.Time {
	for {
		taken := false
		for _, f := range formats {
			if _, err := os.Lstat(filepath.Join(dir, export.FileName(f, stamp))); err == nil {
				taken = true
				break
			}
		}
		if !taken {
			return stamp
		}
		stamp = stamp.Add(time.Second)
	}
}

// prune deletes the oldest exports this data directory wrote beyond keep,
// and records what it still owns. A failure is logged and the export
// stands: the files left are tried again after the next export.
func (s *Scheduler) prune(st *state.ExportState, c Config) {
	owned := make([]export.OwnedFile, len(st.Owned))
	for i, o := range st.Owned {
		owned[i] = export.OwnedFile(o)
	}
	still, err := export.PruneOwned(c.Dir, c.Formats, c.Keep, owned)
	if err != nil {
		s.o.Logger.Warn("old exports not pruned", "err", err)
	}
	st.Owned = st.Owned[:0]
	for _, o := range still {
		st.Owned = append(st.Owned, state.OwnedExport(o))
	}
	if err := s.o.Store.PutExportState(*st); err != nil {
		s.o.Logger.Warn("cannot record the exports kept", "err", err)
	}
}

// selectSessions lists the sessions of the next export, by policy.
func (s *Scheduler) selectSessions() ([]state.Exported, error) {
	all, err := s.o.Store.Flushed()
	if err != nil {
		return nil, fmt.Errorf("list flushed sessions: %w", err)
	}
	if s.o.Config.Policy != Incremental {
		return all, nil
	}
	done, err := s.o.Store.ExportedContent()
	if err != nil {
		return nil, fmt.Errorf("read exported sessions: %w", err)
	}
	var sel []state.Exported
	for _, e := range all {
		if done[e.Key] != e.SHA256 {
			sel = append(sel, e)
		}
	}
	return sel, nil
}

// finishEmpty records an attempt that had nothing to write.
func (s *Scheduler) finishEmpty(st *state.ExportState) {
	st.LastError, st.Failures = "", 0
	s.o.Logger.Debug("nothing to export")
}

func hasFormat(fs []export.Format, f export.Format) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// relTo names a map by its place in the store, not by its absolute path
// (which holds the user's home).
func relTo(root, file string) string {
	if rel, err := filepath.Rel(root, file); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(file)
}
