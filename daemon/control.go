package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// The control API: HTTP/JSON on a unix socket in the data dir, mode 0600,
// served to connections from this user only (checked on each accepted
// connection from the peer's credentials). There is no TCP listener.
//
//	GET  /v1/status          Status
//	GET  /v1/list            []Entry, newest first
//	GET  /v1/list?newest=N&agent=A&prefix=P
//	                         the N newest of the flush records (Recent)
//	GET  /v1/list?id=ID&key=KEY
//	                         the entries Named{ID, KEY} may name (EntriesNamed)
//	POST /v1/flush?id=ID     FlushResult (id: native id or unique prefix)
//	POST /v1/flush?all=1     FlushResult
//	POST /v1/scan            ScanResult: a full scan, then every changed map written
//
// Status is a snapshot the loop publishes after every wake-up (and each
// second of a catch-up), so it answers at once; the listing reads the
// state database in its own read transaction; a flush is handed to the
// loop, which owns the records.

// ErrNoDaemon means no daemon answers on the control socket.
var ErrNoDaemon = errors.New("no daemon is running")

// ErrRefused means the daemon closed the connection without an answer (it
// refuses other users).
var ErrRefused = errors.New("the daemon refused the connection")

// ErrNotAnswering means the daemon took a request and gave no answer in
// time: stopped (SIGSTOP), or hung.
var ErrNotAnswering = errors.New("the daemon is not answering")

// FlushResult says what a flush request did.
type FlushResult struct {
	// Flushed are the session keys whose map was written now.
	Flushed []string `json:"flushed"`
	// Current counts the matching sessions whose map was up to date.
	Current int `json:"current"`
	// Failed are the keys whose map could not be written (retried later).
	Failed []string `json:"failed,omitempty"`
	// Rewritten counts the maps a rewrite of every map wrote (which does
	// not list them in Flushed: they are every session).
	Rewritten int `json:"rewritten,omitempty"`
	// Uncommitted counts the logs whose lines wait to be committed to the
	// state database when the flush ended (a full disk): the maps written
	// do not hold those lines, and Current does not mean up to date.
	Uncommitted int `json:"uncommittedLogs,omitempty"`
	// Behind are the keys asked for by name whose own lines wait so: the
	// map could not be written with them (they are not in Flushed).
	Behind []string `json:"behind,omitempty"`
	Error  string   `json:"error,omitempty"`
}

type flushRequest struct {
	ctx context.Context // the request's
	id  string
	all bool
	// rewrite writes the maps of --all that are up to date too, with the
	// map options in effect (a path mode changed since they were written).
	rewrite bool
	reply   chan FlushResult
}

// flushWait bounds how long a flush request waits for the loop, which may
// be in the middle of a long catch-up.
const flushWait = 2 * time.Minute

func (d *Daemon) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		st := d.Status()
		st.PID = os.Getpid()
		writeJSON(w, http.StatusOK, st)
	})
	mux.HandleFunc("GET /v1/list", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var es []Entry
		var err error
		if n, nerr := strconv.Atoi(q.Get("newest")); nerr == nil && n > 0 {
			es, err = Recent(d.db, q.Get("agent"), q.Get("prefix"), n)
		} else if q.Has("id") {
			es, err = EntriesNamed(d.db, d.store, Named{ID: q.Get("id"), Key: q.Get("key")})
		} else {
			es, err = Entries(d.db, d.store)
		}
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSONList(w, es)
		if len(es) >= bigList {
			// A listing of the whole store held tens of MB for a moment;
			// an idle daemon would otherwise keep them from the system
			// for minutes (the runtime gives memory back slowly). Once the
			// answer is sent: the client does not wait for it.
			es = nil
			go debug.FreeOSMemory()
		}
	})
	d.sinkRoutes(mux)
	mux.HandleFunc("POST /v1/flush", func(w http.ResponseWriter, r *http.Request) {
		req := flushRequest{ctx: r.Context(), id: r.URL.Query().Get("id"), all: r.URL.Query().Get("all") == "1",
			rewrite: r.URL.Query().Get("rewrite") == "1", reply: make(chan FlushResult, 1)}
		if req.id == "" && !req.all {
			writeJSON(w, http.StatusBadRequest, FlushResult{Error: "want id or all"})
			return
		}
		t := time.NewTimer(flushWait)
		defer t.Stop()
		select {
		case d.flushReq <- req:
		case <-t.C:
			writeJSON(w, http.StatusServiceUnavailable, FlushResult{Error: "the daemon is busy (catching up); try again"})
			return
		case <-r.Context().Done():
			return
		}
		var res FlushResult
		select {
		case res = <-req.reply:
		case <-r.Context().Done():
			return // a rewrite sees it and stops
		}
		code := http.StatusOK
		if res.Error != "" {
			code = http.StatusNotFound
		}
		writeJSON(w, code, res)
	})
	mux.HandleFunc("POST /v1/scan", d.serveScan)
	return mux
}

// bigList is the number of entries past which a listing gives back the
// memory it used as soon as it is sent.
const bigList = 10000

// writeJSONList writes es as a JSON array an element at a time through a
// buffer, instead of encoding the whole array in memory first (some 50 MB
// at 100,000 sessions).
func writeJSONList(w http.ResponseWriter, es []Entry) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	bw.WriteByte('[')
	for i := range es {
		if i > 0 {
			bw.WriteByte(',')
		}
		if enc.Encode(&es[i]) != nil {
			return // the client went away
		}
	}
	bw.WriteString("]\n")
	bw.Flush()
	if f, ok := w.(http.Flusher); ok {
		f.Flush() // the end of the list, not held in net/http's buffer
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// flushNow writes the maps of the sessions a request names, quiet or not.
// A session named by its id is written whether its map is up to date or
// not, with the map options in effect; --all writes those that changed
// (--all --rewrite is a rewriteJob, written in slices).
func (d *Daemon) flushNow(ctx context.Context, r flushRequest) FlushResult {
	d.commitGroup()
	var keys []string
	if r.all {
		d.restoreAll() // every session is looked at
		keys = d.sessionKeys()
	} else {
		var err error
		if keys, err = d.matchRetired(r.id); err != nil {
			return FlushResult{Error: err.Error()}
		}
	}
	res := FlushResult{Flushed: []string{}}
	for _, key := range keys {
		if ctx.Err() != nil {
			break
		}
		s := d.sessions[key]
		if r.all && !s.Dirty() && !d.mapMissing(s) {
			res.Current++
			continue
		}
		d.checkMapBytes = !r.all // asked for by name: written if the file is not what it should be
		err := d.flush(key)
		d.checkMapBytes = false
		if err != nil {
			res.Failed = append(res.Failed, key)
			continue
		}
		res.Flushed = append(res.Flushed, key)
	}
	d.recordFlushes()
	// A map written from the committed events is not the one asked for
	// while lines of its logs wait on a failed commit: said, not passed
	// off as flushed or up to date.
	if res.Uncommitted = len(d.faults.waiting); res.Uncommitted > 0 && !r.all {
		waiting := d.waitingSessions()
		flushed := res.Flushed[:0]
		for _, key := range res.Flushed {
			if waiting[key] {
				res.Behind = append(res.Behind, key)
			} else {
				flushed = append(flushed, key)
			}
		}
		res.Flushed = flushed
	}
	return res
}

// matchRetired is match over retired sessions too: a session named by its
// whole key or native id is taken up alone; any other id (a prefix) takes
// every retired session up first, as it may name one of them, or more.
func (d *Daemon) matchRetired(id string) ([]string, error) {
	d.restoreNamed(id)
	if keys, err := d.match(id); err == nil && (keys[0] == id || nativeOf(keys[0]) == id) {
		return keys, nil
	}
	d.restoreAll()
	return d.match(id)
}

// match finds the one session an id names: its native id, its key
// (agent/id) or a unique prefix of either.
func (d *Daemon) match(id string) ([]string, error) {
	var found []string
	for _, key := range d.sessionKeys() {
		native := nativeOf(key)
		if key == id || native == id {
			return []string{key}, nil
		}
		// A key's prefix only when one was typed (agent/…), as show and
		// list take an id: "cla" is no prefix of every claude session.
		if strings.HasPrefix(native, id) || strings.Contains(id, "/") && strings.HasPrefix(key, id) {
			found = append(found, key)
		}
	}
	switch len(found) {
	case 0:
		return nil, errors.New("no session the daemon follows matches that id (agentmap list shows them)")
	case 1:
		return found, nil
	}
	return nil, errors.New("the id prefix matches several sessions")
}

// serveControl listens on the control socket until ctx is done or stop is
// called.
func (d *Daemon) serveControl(ctx context.Context) (stop func(), err error) {
	ln, err := listenControl(ControlPath(d.opt.DataDir), d.log)
	if err != nil {
		return nil, err
	}
	if ln == nil {
		return func() {}, nil // no socket on this OS
	}
	srv := &http.Server{Handler: d.handler(), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(d.log.Handler(), slog.LevelDebug)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("control socket stopped", "component", "control", "err", err)
		}
	}()
	d.log.Info("control socket ready", "component", "control", "path", ControlPath(d.opt.DataDir))
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(sctx) // closes the listener, which removes the socket if it is still its own
		<-done
	}, nil
}

// peerListener accepts only connections from this process's user.
type peerListener struct {
	net.Listener
	uid int
	log *slog.Logger
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		l.log.Warn("control connection refused: another user", "component", "control", "peer", uid)
		c.Close()
	}
}
