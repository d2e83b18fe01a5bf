package daemon

import (
	"context"
	"os"
	"strings"

	"github.com/agentmap/agentmap/watchers"
)

// walkChunk is how many logs of a one-shot catch-up's walk are ingested at
// a time; a variable so that tests can cut a small walk into pieces.
var walkChunk = 4096

// afterLoad, when set, runs between the load and the walk (tests change
// the logs there).
var afterLoad func()

// ingestAsWalked is a one-shot catch-up's reading of the logs: they are
// ingested in pieces of walkChunk as the walk meets them, in path order as
// a watcher's update is (a session's log before its subagents'), and none
// is kept once read. The walk comes after the load, which judges a quiet
// log by its record and the file itself (quiet.go), so it is never held
// whole: one list of every log took some 200 bytes a log (its slot and its
// path), the bulk of what a scan of 100,000 sessions grew by. A first walk
// sizes the catch-up for the progress; it costs stats, a few percent of a
// first catch-up. The last piece ends the walk: the sweep then looks at
// every record.
func (d *Daemon) ingestAsWalked(ctx context.Context) {
	if afterLoad != nil {
		afterLoad()
	}
	size := func(f watchers.FileStat) bool {
		if f.Unlisted {
			return ctx.Err() == nil // noted by the second walk
		}
		_, quiet := d.quietLogs.span(f.Path)
		if skip, _ := quiet.metIn(f); !skip {
			n := d.unread(f)
			if at, ok := quiet.readTo(f); ok {
				// Appended to since the load: read from where it was (a
				// log also rewritten in place is read whole, as the tailer
				// finds: that one is undercounted).
				n = f.Size - at
			}
			d.progress.total += n
		}
		return ctx.Err() == nil
	}
	piece := make([]watchers.FileStat, 0, walkChunk)
	var toRead int64
	ingest := func(full bool) {
		if toRead > 0 {
			// Paced as a catch-up whatever ingest makes of the piece (it
			// paces only what it reads ahead); a piece with nothing to
			// read, a second scan's, is left to GOGC's default, for its
			// garbage is the walk's, small and short-lived. The headroom
			// is that of what the piece has to read, as for each piece of
			// a following daemon's first catch-up: sized by what the whole
			// catch-up had left, it grew with the number of sessions of a
			// history of small logs (32 MiB at 10,000 small sessions, 51
			// MiB at 100,000, the bulk of a scan's peak growing between
			// them once the sessions let go of were spilled), for no
			// saving (the collector's work follows the live heap, which
			// is small there: 26.2-27.0 s of CPU against 29.2-29.3 s at
			// 100,000, with the spill, the code before). A
			// piece of 4,096 large logs, and any home of fewer logs, is
			// paced as before.
			defer paceGC(catchUpHeadroomFor(toRead))()
		}
		d.ingest(ctx, watchers.Update{Files: piece, Full: full})
		piece, toRead = piece[:0], 0 // ingest keeps nothing of its list
	}
	// A bit a quiet log: its path was met by the walk.
	met := make([]uint64, (d.quietLogs.len()+63)/64)
	watchers.WalkInPathOrder(d.roots, d.log, size, func(f watchers.FileStat) bool {
		if f.Unlisted {
			d.noteUnlisted([]watchers.FileStat{f}, false)
			return ctx.Err() == nil
		}
		i, logs := d.quietLogs.span(f.Path)
		skip, restore := logs.metIn(f)
		for k, q := range logs {
			// Left out, only the log found as it was is met: another
			// whose path hashes alike may be one deleted since.
			if !skip || q.same(f) {
				met[(i+k)/64] |= 1 << ((i + k) % 64)
			}
		}
		if skip {
			return ctx.Err() == nil
		}
		for _, id := range restore {
			d.restoreFile(id) // changed since the load: its session is read back first
		}
		toRead += d.unread(f)
		if piece = append(piece, f); len(piece) == walkChunk {
			ingest(false)
		}
		return ctx.Err() == nil
	})
	if ctx.Err() == nil {
		// A quiet log whose path the walk did not meet was deleted or
		// moved away since the load. Its session is taken up before the
		// last piece, whose sweep then marks a deleted log gone, as a
		// scan that kept the session would in this run; left retired, its
		// record said it was there until the next scan. (A log moved away
		// is found by its file's identity where the walk met it, which
		// took its session up already.)
		d.quietLogs.each(func(k int, q quietLog) {
			if met[k/64]&(1<<(k%64)) == 0 {
				d.restoreFile(q.id)
			}
		})
	}
	d.quietLogs = nil // the table has served
	if d.closeScratch != nil {
		d.closeScratch() // the load's file, where the table was
		d.closeScratch = nil
	}
	if ctx.Err() == nil {
		ingest(true)
	}
}

// unread is how much of a log a catch-up has still to read: what it grew
// by, for a log of lines read before; nothing for a file visit passes over
// unchanged, which would otherwise keep the progress short of its total: a
// whole-form log or a database whose digest is the one read last, a
// compressed rollout beside its plain file (read instead), and one this
// run already passed over as it is (ignored or excluded); the whole file
// otherwise. Exclusions and files ignored are known only once a visit met
// them, so a first catch-up still counts those.
func (d *Daemon) unread(f watchers.FileStat) int64 {
	if d.stillIgnored(f) || d.isExcluded(f) {
		return 0
	}
	s := d.byPath[f.Path]
	if s == nil && strings.HasSuffix(f.Path, ".zst") {
		if _, err := os.Stat(strings.TrimSuffix(f.Path, ".zst")); err == nil {
			return 0 // see adopt: the plain rollout is read
		}
	}
	if s == nil || s.Missing && s.Form != watchers.FormSQLite {
		return f.Size
	}
	if !parsedCurrent(s, d.agents) {
		return f.Size // read again from its start (reread.go)
	}
	switch s.Form {
	case watchers.FormLines:
		if f.Size == s.Size && s.Size > s.Offset {
			// Nothing written since the last read: the bytes after the
			// cursor are a last line still unfinished, looked at then,
			// not history to catch up on (a scan with nothing new
			// would show them as 0% of them read).
			return 0
		}
		return max(0, f.Size-s.Offset)
	case watchers.FormWhole:
		if s.Digest == wholeDigest(f) {
			return 0
		}
	case watchers.FormSQLite:
		if s.Digest == sqliteDigest(f) {
			return 0
		}
	}
	return f.Size
}
