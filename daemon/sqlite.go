package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/cursor"
)

// sqliteRetry is the first wait before polling a database again after it
// could not be read (Cursor holds it while writing); it doubles from there
// (sqlitefaults.go).
const sqliteRetry = 5 * time.Second

// poll reads a Cursor database again when it or its -wal changed. Each
// conversation is a source of its own ("<db>#<id>") whose events are
// replaced whenever they differ.
func (d *Daemon) poll(ctx context.Context, s *state.Source, fst watchers.FileStat) {
	if s.Digest == sqliteDigest(fst) && parsedCurrent(s, d.agents) {
		return
	}
	d.readStore(ctx, s, fst)
}

// readStore reads a database whole and replaces the events of the
// conversations that changed. A retry reads it whatever its digest: the
// digest is the last good read's, and a store that failed may be back to
// it (a lock let go of, a file put back with its time: touch -r, cp -p).
func (d *Daemon) readStore(ctx context.Context, s *state.Source, fst watchers.FileStat) {
	digest := sqliteDigest(fst)
	log := d.log.With("component", "sqlite", "agent", s.Agent, "path", s.Path)
	convs, err := d.readDB(ctx, s)
	if err != nil {
		d.cannotReadDB(s, fst.Size, err)
		return
	}
	d.readableDB(s.Path)
	_, walMod := fst.WalOf()
	mod := max(ms(fst.ModTime), ms(walMod))
	for _, c := range convs {
		if c.NativeID == "" {
			continue
		}
		// The id as the map and the key have it: the source's path is
		// kept in the state and named in log lines.
		c.NativeID = event.ID(c.NativeID)
		path := s.Path + "#" + c.NativeID
		cs := d.byPath[path]
		if cs == nil {
			cs = d.newSource(watchers.FileStat{Path: path, Agent: s.Agent, Form: formConversation},
				watchers.Source{Agent: s.Agent, Session: c.NativeID})
		}
		sum := sha256.Sum256(event.AppendJSON(nil, c.Events)) // json.Marshal's bytes: digests stay
		cd := hex.EncodeToString(sum[:16])
		if cs.Digest == cd {
			continue
		}
		next := *cs
		next.Digest, next.Lines = cd, int64(len(c.Events))
		at := mod
		if c.UpdatedMs > 0 {
			at = c.UpdatedMs
		}
		if !d.apply(cs, next, state.Batch{Reset: true, ResetSession: cs.Session}, c.Events, true, at, 0) {
			return
		}
	}
	if !d.commitGroup() {
		return // read again with the conversations that failed
	}
	s.Digest, s.Size, s.ModMs, s.Parsed = digest, fst.Size, mod, d.parserVersion(s.Agent)
	if err := d.db.PutSource(s); err != nil {
		log.Error("cannot commit", "err", err)
	}
	d.progress.done += fst.Size
	d.reportProgress()
}

// readDB reads a database whole with its agent's reader: Cursor's two
// kinds, or the reader the agent registry names.
func (d *Daemon) readDB(ctx context.Context, s *state.Source) ([]watchers.Conversation, error) {
	if a, ok := d.agents[s.Agent]; ok && a.ReadDB != nil {
		return a.ReadDB(ctx, s.Path)
	}
	read := cursor.ReadVSCDB
	if filepath.Base(s.Path) == "store.db" {
		read = cursor.ReadStoreDB
	}
	convs, err := read(ctx, s.Path)
	out := make([]watchers.Conversation, len(convs))
	for i, c := range convs {
		out[i] = watchers.Conversation{NativeID: c.NativeID, Events: c.Events, UpdatedMs: c.UpdatedMs}
	}
	return out, err
}

// pollRetries reads again the databases that could not be read and are
// due.
func (d *Daemon) pollRetries(ctx context.Context) {
	d.retryDBs(ctx, false)
}

// retryLockedDBs reads again at once the databases that failed on a lock,
// and only those: what a one-shot scan waits for (a hot journal or a
// permission would fail the same, and be logged again).
func (d *Daemon) retryLockedDBs(ctx context.Context) {
	d.retryDBs(ctx, true)
}

func (d *Daemon) retryDBs(ctx context.Context, locked bool) {
	now := d.opt.Clock.Now()
	for path, at := range d.polls {
		u := d.badDBs[path]
		switch {
		case u == nil: // nothing would take it off again (see dbRetryDue)
			delete(d.polls, path)
			continue
		case locked && !u.transient, !locked && now.Before(at):
			continue
		}
		s := d.byPath[path]
		fi, err := os.Stat(path)
		if s == nil || watchers.Missing(err) {
			d.forgetDB(path)
			continue
		}
		if err != nil { // not even a stat (its directory cannot be searched)
			d.cannotReadDB(s, 0, err)
			continue
		}
		fst := watchers.FileStat{Path: path, Agent: s.Agent, Form: s.Form, Size: fi.Size(), ModTime: fi.ModTime()}
		if wi, err := os.Stat(path + "-wal"); err == nil {
			fst.Wal = &watchers.WalStat{Size: wi.Size(), ModTime: wi.ModTime()}
		}
		d.readStore(ctx, s, fst)
	}
}

// sqliteDigest is what a database is read again on a change of: its size
// and time and those of its -wal.
func sqliteDigest(fst watchers.FileStat) string {
	walSize, walMod := fst.WalOf()
	return fmt.Sprintf("%d/%d/%d/%d", fst.Size, ms(fst.ModTime), walSize, ms(walMod))
}
