package daemon

import (
	"errors"
	"fmt"
	"slices"

	"github.com/agentmap/agentmap/watchers"
)

// A directory under a root that cannot be listed (mode 000, a mount gone
// stale) hides the logs in it: a first scan would not find them, and a
// following daemon would take the logs it knew there for deleted, its
// maps silently short or stale. The watcher reports such a directory
// (FileStat.Unlisted) at each walk that meets it; the daemon keeps the set,
// logs each directory once when it first fails and once when it can be
// listed again, counts them in `status`, and a one-shot scan ends with an
// error naming how many. The logs it knew under one are not lost: their
// records stay, and gone() takes a log it cannot stat for unreadable, not
// deleted, so it is tried again and counted too. A following daemon's
// walks try the directory again at every rescan.

type unlistedDir struct {
	agent string
	err   string // the error's kind ("permission denied"), never its text
}

// noteUnlisted takes the directories the walk could not list out of files
// and records them. A full walk's set replaces a following daemon's: a
// directory not reported again was listed. A one-shot scan's pieces each
// carry part of the one walk, so there the set only grows.
func (d *Daemon) noteUnlisted(files []watchers.FileStat, full bool) []watchers.FileStat {
	var seen map[string]bool
	if full && !d.opt.Once {
		seen = map[string]bool{}
	}
	if !slices.ContainsFunc(files, func(f watchers.FileStat) bool { return f.Unlisted }) {
		if seen != nil {
			d.listedAgain(seen)
		}
		return files
	}
	kept := make([]watchers.FileStat, 0, len(files))
	for _, f := range files {
		if !f.Unlisted {
			kept = append(kept, f)
			continue
		}
		if seen != nil {
			seen[f.Path] = true
		}
		if _, ok := d.unlisted[f.Path]; ok {
			continue
		}
		kind := "read error"
		if f.Denied {
			kind = "permission denied"
		}
		d.unlisted[f.Path] = unlistedDir{agent: f.Agent, err: kind}
		d.log.Warn("cannot list a log directory; the logs in it are not read until it can be", "component", "watch",
			"agent", f.Agent, "path", f.Path, "err", kind)
	}
	if seen != nil {
		d.listedAgain(seen)
	}
	return kept
}

// listedAgain drops the directories a full walk did not report again.
func (d *Daemon) listedAgain(reported map[string]bool) {
	for dir := range d.unlisted {
		if !reported[dir] {
			delete(d.unlisted, dir)
			d.log.Info("log directory can be listed again", "component", "watch", "path", dir)
		}
	}
}

// unlistedStatus is what status shows of them: how many, and the first
// kind of error.
func (d *Daemon) unlistedStatus(st *Status) {
	if len(d.unlisted) == 0 {
		return
	}
	st.Unlisted = &UnlistedDirs{Count: len(d.unlisted)}
	for _, u := range d.unlisted {
		st.Unlisted.Reason = firstReason(st.Unlisted.Reason, u.err)
	}
}

// UnlistedDirs counts the directories under the roots that could not be
// listed; a following daemon tries them again at every rescan.
type UnlistedDirs struct {
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// unlistedError is the part of a one-shot catch-up's error about them.
func (d *Daemon) unlistedError() error {
	if len(d.unlisted) == 0 {
		return nil
	}
	return errors.New(unlistedMessage(len(d.unlisted)))
}

// unlistedMessage says that n log directories could not be listed.
func unlistedMessage(n int) string {
	if n == 1 {
		return "1 log directory could not be listed (see the log); the logs in it are mapped by a later scan once it can be"
	}
	return fmt.Sprintf("%d log directories could not be listed (see the log); the logs in them are mapped by a later scan once they can be", n)
}
