package daemon

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/state"
)

// startSink enables the team database's outbox and, when following, runs
// its sender beside the follower. With Once the sender only drains at the
// end (drainSink). The returned stop ends it and must run before the state
// is closed. A sink that cannot start is logged; the daemon follows
// without it and its flushes stay queued.
func (d *Daemon) startSink(ctx context.Context) (stop func()) {
	if d.opt.Sink == nil {
		return func() {}
	}
	s, err := postgres.NewSender(d.db.Outbox(postgres.Name), MapsDir(d.opt.DataDir), *d.opt.Sink, d.log)
	if err != nil {
		d.log.Error("the team database sink is off", "component", "sink", "err", err)
		return func() {}
	}
	d.sink = s
	for _, w := range d.opt.Sink.Warnings {
		d.log.Warn(w, "component", "sink")
	}
	if d.opt.Once {
		return s.Close
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	senders.Store(d.db, s)
	go func() { defer wg.Done(); s.Run(ctx) }()
	return func() { cancel(); wg.Wait(); senders.Delete(d.db) }
}

// senders are the senders running beside a follower, by the state
// database they send from: status says that a failed attempt is tried
// again with back-off only while one runs. After a scan, or with the
// daemon stopped, the queue waits for the next scan or start.
var senders sync.Map // *state.DB → *postgres.Sender

// drainSink sends what is queued, once (the end of `scan`). What cannot be
// sent stays queued for the next run.
func (d *Daemon) drainSink(ctx context.Context) {
	if d.sink == nil {
		return
	}
	if err := d.sink.Drain(ctx); err != nil {
		d.log.Warn("the team database did not take every map; they stay queued", "component", "sink", "err", err)
	}
}

// notifySink wakes the sender after flush records (and their outbox
// entries) were committed.
func (d *Daemon) notifySink() {
	if d.sink != nil {
		d.sink.Notify()
	}
}

// SinkStatus is what status shows of the team database sink.
type SinkStatus struct {
	Name     string `json:"name"`
	DeviceID string `json:"deviceId"`
	// Queue is the sessions waiting to be sent; Oldest the one waiting
	// longest.
	Queue  int            `json:"queue"`
	Oldest *QueuedSession `json:"oldest,omitempty"`
	// Sent is how many sessions the team database holds from this
	// machine, as far as it knows: each session delivered counts once,
	// whatever its versions and resends, until it is removed
	// (state.OutboxStats.Sent). LastOk is the last batch stored.
	Sent   uint64    `json:"sent"`
	LastOk time.Time `json:"lastOk,omitzero"`
	// Retracted counts the sessions removed from the team database once
	// privacy.exclude covered them.
	Retracted uint64 `json:"retracted,omitempty"`
	// Attempt is the last attempt; LastError its error when it failed,
	// Failures the failed attempts in a row.
	Attempt   time.Time `json:"attempt,omitzero"`
	LastError string    `json:"lastError,omitempty"`
	Failures  int       `json:"failures,omitempty"`
	// Sending is set while a daemon's sender runs, which tries a failed
	// attempt again with back-off; without one (the daemon stopped, or
	// what a scan could not send) nothing is tried before the next scan or
	// start.
	Sending bool `json:"sending,omitempty"`
	// Off is set when the config in effect names no team database (no
	// [sink.postgres] url): the queue set up by a daemon that had one
	// stays, and nothing of it is sent until one is configured again. A
	// running daemon says it of the config it runs with; status without
	// one, of the config file.
	Off bool `json:"off,omitempty"`
}

// QueuedSession is one entry of the sink's queue.
type QueuedSession struct {
	Session string    `json:"session"`
	Path    string    `json:"path"`
	Queued  time.Time `json:"queued"`
	Flushed time.Time `json:"flushed,omitzero"`
	// Retract is set for a session to remove from the team database
	// (privacy.exclude covers it now); it has no map.
	Retract bool `json:"retract,omitempty"`
}

// sinkStatus reads the outbox; nil when the sink was never enabled.
func sinkStatus(db *state.DB) *SinkStatus {
	if db == nil {
		return nil
	}
	st, err := db.Outbox(postgres.Name).Stats()
	if err != nil || !st.Enabled {
		return nil
	}
	_, sending := senders.Load(db)
	out := &SinkStatus{Name: postgres.Name, DeviceID: st.State.DeviceID, Queue: st.Len, Sent: uint64(st.Sent), Retracted: st.State.Retracted,
		LastError: st.State.LastError, Failures: st.State.Failures, Sending: sending}
	if st.State.LastOkMs != 0 {
		out.LastOk = time.UnixMilli(st.State.LastOkMs)
	}
	if st.State.AttemptMs != 0 {
		out.Attempt = time.UnixMilli(st.State.AttemptMs)
	}
	if q := st.Oldest; q != nil {
		out.Oldest = &QueuedSession{Session: q.Key, Path: q.Path, Queued: time.UnixMilli(q.QueuedMs), Retract: q.Retract}
		if q.FlushedMs != 0 {
			out.Oldest.Flushed = time.UnixMilli(q.FlushedMs)
		}
	}
	return out
}

// SinkResult is the answer of a resend or forget.
type SinkResult struct {
	// Sessions is the queue length after a resend, or the entries a
	// forget dropped.
	Sessions int    `json:"sessions"`
	Error    string `json:"error,omitempty"`
}

// SinkResend queues every map of the store for the team database again.
func SinkResend(db *state.DB) (int, error) {
	return db.Outbox(postgres.Name).Resend(time.Now())
}

// SinkForget drops the team database's queue.
func SinkForget(db *state.DB) (int, error) {
	return db.Outbox(postgres.Name).Forget()
}

// sinkRoutes serves resend and forget on the control socket: the state is
// the daemon's while it runs.
func (d *Daemon) sinkRoutes(mux *http.ServeMux) {
	route := func(path string, op func(*state.DB) (int, error), wake bool) {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			n, err := op(d.db)
			if err != nil {
				writeJSON(w, http.StatusInternalServerError, SinkResult{Error: err.Error()})
				return
			}
			if wake {
				d.notifySink()
			}
			writeJSON(w, http.StatusOK, SinkResult{Sessions: n})
		})
	}
	route("/v1/sink/resend", SinkResend, true)
	route("/v1/sink/forget", SinkForget, false)
}

// SinkResend asks the running daemon to queue every map again.
func (c *Client) SinkResend(ctx context.Context) (SinkResult, error) {
	var res SinkResult
	err := c.call(ctx, http.MethodPost, "/v1/sink/resend", time.Minute, &res)
	return res, err
}

// SinkForget asks the running daemon to drop the sink's queue.
func (c *Client) SinkForget(ctx context.Context) (SinkResult, error) {
	var res SinkResult
	err := c.call(ctx, http.MethodPost, "/v1/sink/forget", time.Minute, &res)
	return res, err
}
