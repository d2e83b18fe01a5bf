package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/agentmap/agentmap/watchers"
)

// ScanResult says what a catch-up asked of a running daemon did: what
// `agentmap scan` reports when a daemon already follows the logs (the state
// database is the daemon's, so scan cannot open it itself).
type ScanResult struct {
	// Files are the logs the full scan found under the roots.
	Files int `json:"files"`
	// Bytes is what the logs held past the cursors before the catch-up.
	Bytes int64       `json:"bytes"`
	Flush FlushResult `json:"flush"`
	// Sessions counts the sessions after it, as status and list count
	// them (counted in status.go).
	Sessions int `json:"sessions"`
	// Unlisted counts the directories under the roots the scan could not
	// list (unlisted.go): their logs were not read.
	Unlisted int `json:"unlistedDirs,omitempty"`
	// Unreadable counts the logs it could not read (unreadable.go), which
	// the daemon tries again on a schedule.
	Unreadable int `json:"unreadableLogs,omitempty"`
	// UnreadableDBs counts the SQLite stores (Cursor's, OpenCode's) it
	// could not read (sqlitefaults.go), also tried again on a schedule.
	UnreadableDBs int `json:"unreadableDatabases,omitempty"`
	// Rewrite is the writing of every map again that goes on after the
	// scan (an upgrade's, or after a change of the map options), which the
	// daemon does a piece at a time between its other work.
	Rewrite *RewriteStatus `json:"rewrite,omitempty"`
}

// scanWait bounds a catch-up request; the loop may be busy with its own
// first catch-up, after which the request still has to read what is new.
// It is long: the status probes (scanProbe) tell a daemon that stopped
// answering from one that is busy with a long history.
const scanWait = 6 * time.Hour

// scanNow does what `agentmap scan` does without a daemon, inside the
// loop that owns the state: one full scan of the roots, reading whatever
// the logs gained, then writing every map that changed.
func (d *Daemon) scanNow(ctx context.Context) ScanResult {
	// Every log is looked at and every session flushed below: all are
	// taken up first, and none is let go of until the scan is done (the
	// next rescan or flush lets go of them again).
	d.restoreAll()
	d.holdRetire = true
	defer func() { d.holdRetire = false }()
	files := d.noteUnlisted(watchers.Scan(d.roots), true)
	res := ScanResult{Files: len(files), Unlisted: len(d.unlisted)}
	for _, f := range files {
		if s := d.byPath[f.Path]; s != nil && s.Form == watchers.FormLines && !s.Missing {
			res.Bytes += max(0, f.Size-s.Offset)
		} else if s == nil {
			res.Bytes += f.Size
		}
	}
	d.ingest(ctx, watchers.Update{Files: files, Full: true})
	res.Flush = d.flushNow(ctx, flushRequest{all: true})
	res.Sessions = d.countSessions()
	res.Unreadable = len(d.unreadable)
	res.UnreadableDBs = d.unreadableDBCount()
	res.Rewrite = d.rewriteStatus()
	return res
}

func (d *Daemon) serveScan(w http.ResponseWriter, r *http.Request) {
	reply := make(chan ScanResult, 1)
	select {
	case d.scanReq <- reply:
	case <-r.Context().Done():
		return
	}
	select {
	case res := <-reply:
		writeJSON(w, http.StatusOK, res)
	case <-r.Context().Done():
	}
}

// Scan asks the daemon to catch up on every log and write every map that
// changed, and waits for it while it answers (watched).
func (c *Client) Scan(ctx context.Context) (ScanResult, error) {
	return watched[ScanResult](ctx, c, http.MethodPost, "/v1/scan", scanWait)
}
