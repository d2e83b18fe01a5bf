package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/docs"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers/agents"
)

// Name is the sink's outbox in the state database.
const Name = "postgres"

// Defaults of Config.
const (
	DefaultEvery = 30 * time.Second
	DefaultBatch = 200
	// maxBackoff caps the wait between attempts while the server is
	// unreachable; the queue grows on disk meanwhile.
	maxBackoff = 5 * time.Minute
	// pushTimeout bounds one batch: a server that stops answering mid-way
	// costs a retry, never a stalled sender.
	pushTimeout = 2 * time.Minute
)

// Config is what the sender needs from [sink.postgres].
type Config struct {
	// URL is the team database, password included (resolved from url,
	// url_file or the password variable by the caller). Never logged.
	URL string
	// Label names this machine in the team database.
	Label string
	// Producer is the sending agentmap's version.
	Producer string
	// PathMode is how file paths leave the machine; maps written in a
	// less strict mode are re-rendered in it as they are sent. HashKey is
	// the key of hashed mode.
	PathMode redact.Mode
	HashKey  []byte
	// Every is the period of attempts besides those a flush triggers;
	// Batch the sessions per transaction.
	Every time.Duration
	Batch int
	// Warnings are what the daemon logs when the sender starts: settings
	// that work but should not be as they are (a url_file others can
	// read). They name files and settings, never a secret.
	Warnings []string
	// Unusable, when set, is why the settings cannot be used (the
	// password's variable not set, as under a service, which has not the
	// shell's environment; a url_file or hash key file not there): the
	// sender then sends nothing and records this as each attempt's error,
	// so that the daemon captures as ever, the queue keeps every map for
	// when the settings are fixed, and status says why nothing goes.
	Unusable error
	// Committed, if set, is told of every batch the database committed,
	// with when (a seam for the load figures; the daemon leaves it nil).
	Committed func(batch []state.Queued, at time.Time)
}

// Sender pushes a daemon's outbox to the team database.
type Sender struct {
	cfg     Config
	ob      *state.Outbox
	mapsDir string
	log     *slog.Logger
	nudge   chan struct{}

	mu   sync.Mutex // guards st against Status readers
	st   state.SinkState
	pool *pgxpool.Pool
	// migrated is set once the schema was checked on the current pool
	// (Prepare).
	migrated bool
	// refused are the sessions whose retraction the database refused in
	// the drain under way (nil outside one): a batch of only those ends it.
	refused map[string]bool
}

// NewSender enables the outbox (queueing what was not delivered yet) and
// returns its sender.
func NewSender(ob *state.Outbox, mapsDir string, cfg Config, log *slog.Logger) (*Sender, error) {
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := rendering(cfg)
	if cfg.Unusable != nil {
		r = "" // a hash key not read renders nothing: the state keeps the rendering it has
	}
	st, was, err := ob.EnableRendered(time.Now(), r)
	if err != nil {
		return nil, err
	}
	if was != "" {
		log.Warn("the team database's path rendering changed since its sessions were sent: every session is sent again in the new one",
			"component", "sink", "was", was, "now", st.Rendering)
	}
	return &Sender{cfg: cfg, ob: ob, mapsDir: mapsDir, log: log.With("component", "sink"), nudge: make(chan struct{}, 1), st: st}, nil
}

// rendering names how cfg renders the paths it sends (state.SinkState's
// Rendering): the path mode, and in hashed mode a fingerprint of the key
// (a hash of it: the key itself is never stored), since another key gives
// other hashes.
func rendering(cfg Config) string {
	mode := string(cfg.PathMode)
	if mode == "" {
		mode = string(redact.ModeRelative)
	}
	if cfg.PathMode != redact.ModeHashed {
		return mode
	}
	sum := sha256.Sum256(cfg.HashKey)
	return mode + ":" + hex.EncodeToString(sum[:8])
}

// DeviceID is this machine's id in the team database.
func (s *Sender) DeviceID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.DeviceID
}

// Notify tells the sender that sessions were queued; it never blocks.
func (s *Sender) Notify() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// Run sends until ctx is done: at once, after each Notify and every
// cfg.Every, with back-off while attempts fail.
func (s *Sender) Run(ctx context.Context) {
	defer s.close()
	// next is a deadline, not a delay: a nudge that is ignored while
	// backing off must not push the retry further away.
	next := time.Now()
	for {
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.nudge:
			t.Stop()
			if s.failures() > 0 {
				// Backing off: a flush does not hammer a server that is down.
				continue
			}
		case <-t.C:
		}
		if err := s.Drain(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			f := s.failures()
			wait := min(time.Second<<min(f-1, 16), maxBackoff)
			next = time.Now().Add(wait)
			what := "cannot reach the team database; the queue waits on disk"
			switch {
			case errors.As(err, new(unusable)):
				what = "the team database's settings cannot be used: nothing is sent until they are fixed (then agentmap restart); the queue waits on disk"
			case Refused(err):
				// Reached, and answered no: a newer schema, a read-only
				// server, a missing grant. The error says which.
				what = "the team database refused the push; the queue waits on disk"
			case conflict(err):
				// Reached, and rolled back for another transaction's
				// sake (a deadlock, a serialization failure, a lock not
				// granted in time): the next attempt passes.
				what = "the team database rolled the push back (a conflict with another transaction); the queue waits on disk"
			}
			s.log.Warn(what, "err", err, "failures", f, "retry_in", wait.String())
			continue
		}
		next = time.Now().Add(s.cfg.Every)
	}
}

func (s *Sender) failures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Failures
}

// Drain sends batches until the queue is empty or an attempt fails, and
// records the outcome in the state database.
func (s *Sender) Drain(ctx context.Context) error {
	s.refused = map[string]bool{}
	defer func() { s.refused = nil }()
	for {
		n, err := s.sendBatch(ctx)
		if errors.Is(err, ErrRetractRefused) {
			// Not a failure to reach the database: the maps of the batch
			// went, the retractions went behind the queue. No back-off;
			// the drain stops once a batch holds nothing else.
			s.mu.Lock()
			s.st.LastError = err.Error()
			st := s.st
			s.mu.Unlock()
			if perr := s.ob.PutState(st); perr != nil {
				s.log.Error("cannot record the sink's state", "err", perr)
			}
			s.log.Warn("the team database refused to remove sessions privacy.exclude covers; they stay queued", "err", err)
			continue
		}
		if err != nil && ctx.Err() != nil {
			// Stopped (the daemon ends): not an attempt that failed; the
			// batch stays queued for the next start.
			s.resetPool()
			return err
		}
		if err != nil {
			s.mu.Lock()
			s.st.AttemptMs, s.st.LastError = time.Now().UnixMilli(), err.Error()
			s.st.Failures++
			st := s.st
			s.mu.Unlock()
			if perr := s.ob.PutState(st); perr != nil {
				s.log.Error("cannot record the sink's state", "err", perr)
			}
			s.resetPool()
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// sendBatch sends the oldest queued sessions in one transaction and
// removes them from the queue; n is 0 when the queue is empty.
func (s *Sender) sendBatch(ctx context.Context) (int, error) {
	qs, err := s.ob.Take(s.cfg.Batch)
	if err != nil || len(qs) == 0 {
		return 0, err
	}
	if !slices.ContainsFunc(qs, func(q state.Queued) bool { return !q.Retract || !s.refused[q.Key] }) {
		return 0, nil // only retractions this drain was refused: they wait for the next
	}
	var ups []Upload
	var retract []state.Queued // sessions whose rows go
	done := make([]state.Delivered, 0, len(qs))
	for _, q := range qs {
		if q.Retract {
			retract = append(retract, q)
			continue
		}
		up, sha, err := s.load(q)
		if err != nil {
			// A map deleted or damaged since it was queued: nothing to
			// send for that version; a later flush queues it again.
			s.log.Warn("queued map cannot be sent; dropped from the queue", "session", q.Key, "path", q.Path, "err", err)
			done = append(done, state.Delivered{Key: q.Key, Seq: q.Seq})
			continue
		}
		ups = append(ups, up)
		done = append(done, state.Delivered{Key: q.Key, Seq: q.Seq, SHA256: sha, SessionID: up.Doc.Map.Session.ID})
	}
	pool, err := s.connect(ctx)
	if err != nil {
		return 0, err
	}
	pctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	dev := Device{ID: s.DeviceID(), Label: s.cfg.Label, Producer: s.cfg.Producer}
	res, err := Push(pctx, pool, dev, ups)
	if err != nil {
		return 0, err
	}
	// Retractions after the maps, in a transaction of their own: a role
	// without DELETE on the sessions (a database set up before agentmap
	// retracted) fails them alone, and the maps still go.
	var removed int64
	var rerr error
	if len(retract) > 0 {
		ids := make([]string, 0, len(retract))
		for _, q := range retract {
			ids = append(ids, storedID(q))
		}
		if removed, rerr = Retract(pctx, pool, dev.ID, ids); rerr == nil {
			for _, q := range retract {
				done = append(done, state.Delivered{Key: q.Key, Seq: q.Seq})
			}
		}
	}
	if s.cfg.Committed != nil && len(ups) > 0 {
		sent := make([]state.Queued, 0, len(ups))
		for _, q := range qs {
			if !q.Retract {
				sent = append(sent, q)
			}
		}
		s.cfg.Committed(sent, time.Now()) // the maps: retractions have no flush time
	}
	s.mu.Lock()
	now := time.Now().UnixMilli()
	s.st.Retracted += uint64(removed)
	s.st.AttemptMs = now
	if len(ups) > 0 || (len(retract) > 0 && rerr == nil) {
		s.st.LastOkMs = now // something went
	}
	if rerr == nil || errors.Is(rerr, ErrRetractRefused) {
		s.st.Failures = 0 // the database was reached
	}
	if rerr == nil && len(s.refused) == 0 { // a refusal earlier in this drain stays said
		s.st.LastError = ""
	}
	st := s.st
	s.mu.Unlock()
	// Stored but not yet acknowledged when a crash comes: the batch is
	// sent again and the upsert's guard makes that a no-op (a retraction
	// sent again deletes nothing more).
	if err := s.ob.Ack(done, st); err != nil {
		return 0, fmt.Errorf("record the delivery: %w", err)
	}
	s.log.Debug("batch stored", "sessions", len(ups), "stored", res.Stored, "unchanged", res.Unchanged)
	if rerr != nil {
		// Behind the maps queued after them, so that a refused
		// retraction (a role without DELETE on the sessions) does not
		// hold the queue; the sink says what to grant (Drain). Another
		// error is a failure to reach the database, backed off.
		if err := s.ob.Requeue(retract); err != nil {
			return 0, fmt.Errorf("record the delivery: %w", err)
		}
		if errors.Is(rerr, ErrRetractRefused) && s.refused != nil {
			for _, q := range retract {
				s.refused[q.Key] = true
			}
		}
		return len(ups), rerr
	}
	if len(retract) > 0 {
		s.log.Info("sessions privacy.exclude now covers removed from the team database", "sessions", len(retract), "rows", removed)
	}
	return len(qs), nil
}

// storedID is the session id a retraction removes: the one its map was
// stored under, or, for a map an older build delivered (which did not keep
// it), the one the builder gives a session of that agent and native id.
func storedID(q state.Queued) string {
	if q.SessionID != "" {
		return q.SessionID
	}
	tool := "unknown"
	agent, _, _ := strings.Cut(q.Key, "/")
	if a, ok := agents.ByName(agent); ok {
		tool = a.Tool
	}
	return "local:" + tool + ":" + q.Native
}

// load reads a queued map from the store as it is now (a newer version than
// the entry's is fine: it is what the database should end with) and renders
// it in the sink's path mode. sha is the file's sha256, as flush records it.
func (s *Sender) load(q state.Queued) (Upload, string, error) {
	raw, err := os.ReadFile(filepath.Join(s.mapsDir, filepath.FromSlash(q.Path)))
	if errors.Is(err, fs.ErrNotExist) {
		return Upload{}, "", errors.New("the map file is gone")
	}
	if err != nil {
		return Upload{}, "", err
	}
	sum := sha256.Sum256(raw)
	doc, err := mapfile.Read(bytes.NewReader(raw))
	if err != nil {
		return Upload{}, "", err
	}
	if doc, err = Render(doc, s.cfg.PathMode, s.cfg.HashKey); err != nil {
		return Upload{}, "", err
	}
	return Upload{Doc: doc, FlushedAt: time.UnixMilli(q.FlushedMs)}, hex.EncodeToString(sum[:]), nil
}

// strictness orders the path modes by how little of a path they keep.
var strictness = map[string]int{"": 0, string(redact.ModeRelative): 0, string(redact.ModeDirsOnly): 1, string(redact.ModeHashed): 2}

// Render returns the map in a path mode at least as strict as mode: a map
// already as strict goes as it is; a relative one is re-rendered.
func Render(doc *mapfile.Doc, mode redact.Mode, key []byte) (*mapfile.Doc, error) {
	if strictness[doc.Map.Session.PathMode] >= strictness[string(mode)] {
		return doc, nil
	}
	return mapfile.Rerender(doc, mode, key)
}

// connect returns the pool, opening it and checking the schema on first
// use after a failure.
// prepareTimeout bounds a sender's look at the schema, and its migration
// when its role owns the schema.
const prepareTimeout = time.Minute

func (s *Sender) connect(ctx context.Context) (*pgxpool.Pool, error) {
	if s.cfg.Unusable != nil {
		return nil, unusable{s.cfg.Unusable}
	}
	if s.pool == nil {
		pool, err := Open(ctx, s.cfg.URL)
		if err != nil {
			return nil, err
		}
		s.pool, s.migrated = pool, false
	}
	if !s.migrated {
		// Bounded: a migration queued behind a long reader must not hold
		// the sender (lock_timeout bounds each lock; this, the whole).
		pctx, cancel := context.WithTimeout(ctx, prepareTimeout)
		v, err := Prepare(pctx, s.pool)
		cancel()
		if err != nil {
			return nil, err
		}
		switch known := SchemaVersion(); {
		case v < known:
			s.log.Info("the team database's schema is behind this agentmap's; this agentmap writes into it as it is",
				"schema", v, "this_build", known,
				"next", "once every machine runs this agentmap, run `agentmap sink migrate` as the schema's owner ("+docs.Path(docs.TeamDatabase)+", Upgrading)")
		case v > known:
			s.log.Info("the team database's schema is newer than this agentmap's, and its migrations keep this agentmap's writes; this agentmap writes into it",
				"schema", v, "this_build", known, "next", "upgrade agentmap on this machine")
		}
		s.migrated = true
	}
	return s.pool, nil
}

// unusable is the error of an attempt made with settings that cannot be
// used (Config.Unusable).
type unusable struct{ err error }

func (u unusable) Error() string { return u.err.Error() }
func (u unusable) Unwrap() error { return u.err }

func (s *Sender) resetPool() {
	if s.pool != nil {
		s.pool.Close()
		s.pool = nil
	}
}

func (s *Sender) close() { s.resetPool() }

// Close releases the connections (Run does it when it returns).
func (s *Sender) Close() { s.close() }
