package state

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The outboxes of the sinks (the team database): bucketOutbox holds one
// nested bucket per sink, which exists while the sink is enabled. Inside:
//   - bucketQueue maps a queue sequence (8 bytes, big endian) to a session
//     key, oldest first;
//   - bucketPending maps a session key to its JSON Queued entry: at most one
//     per session, the latest map, so the queue is bounded by the number of
//     sessions on disk, never by memory or by how often a session changes;
//   - bucketSent maps a session key to the content hash (sha256 of the map
//     file) last delivered, so that a flush of unchanged content queues
//     nothing;
//   - bucketSentIDs maps a session key to the session id its map was
//     delivered under (the map's session.id, "local:<tool>:<native id>"),
//     so that a retraction names the row stored;
//   - keySinkState holds the JSON SinkState.
//
// A flush record and its outbox entry are written in the same transaction
// (putSessions → queueFlushes): a crash leaves both or neither. Like the
// exports' bucket it is created on first use, not by a migration, so the
// layout version stays.
var (
	bucketOutbox  = []byte("outbox")
	bucketQueue   = []byte("queue")
	bucketPending = []byte("pending")
	bucketSent    = []byte("sent")
	bucketSentIDs = []byte("sentIds")
	keySinkState  = []byte("state")
)

// Queued is one session waiting to be sent: the map file its flush wrote.
type Queued struct {
	Key    string `json:"-"`
	Seq    uint64 `json:"seq"`
	Path   string `json:"path"` // relative to the map store
	SHA256 string `json:"sha256"`
	// FlushedMs is when the map was written, QueuedMs when it was queued.
	FlushedMs int64 `json:"flushedMs"`
	QueuedMs  int64 `json:"queuedMs"`
	// Retract is set when the session left agentmap (privacy.exclude now
	// covers it): what the sink stored of it under SessionID goes, or,
	// when the id it was stored under is not known (delivered by a build
	// that did not keep it), under the id the builder gives a session of
	// the key's agent and Native. Path and SHA256 are empty.
	Retract   bool   `json:"retract,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Native    string `json:"native,omitempty"`
}

// Delivered is a queued entry the sink has stored (or dropped, with the
// reason logged): SHA256 is the content actually sent, which may be newer
// than the entry's when the map was rewritten in between.
type Delivered struct {
	Key    string
	Seq    uint64
	SHA256 string
	// SessionID is the session id the map was stored under (its
	// session.id), kept for a later retraction.
	SessionID string
}

// SinkState is what a sink keeps about itself across restarts.
type SinkState struct {
	// DeviceID identifies this machine in the team database: random,
	// made when the sink is first enabled, kept for ever.
	DeviceID string `json:"deviceId"`
	// Retracted counts sessions whose rows were removed (privacy.exclude
	// covered them after they were sent).
	Retracted uint64 `json:"retracted,omitempty"`
	// LastOkMs is the last batch stored. (Earlier builds also kept "sent"
	// here, a count of the versions stored, which counted a session again
	// at each new version; it is no longer read: OutboxStats.Sent counts
	// the sessions themselves.)
	LastOkMs int64 `json:"lastOkMs,omitempty"`
	// AttemptMs is the last attempt; LastError its error when it failed,
	// Failures the failed attempts in a row.
	AttemptMs int64  `json:"attemptMs,omitempty"`
	LastError string `json:"lastError,omitempty"`
	Failures  int    `json:"failures,omitempty"`
	// Rendering is how the sessions delivered had their paths rendered
	// for the sink (its path mode, and a fingerprint of its hash key):
	// when it changes, every session is sent again (EnableRendered).
	// Empty in a state of an earlier build, which did not keep it.
	Rendering string `json:"rendering,omitempty"`
}

// OutboxStats is what status shows of a sink's queue.
type OutboxStats struct {
	Enabled bool
	Len     int
	Oldest  *Queued // nil when the queue is empty
	// Sent is how many sessions the sink holds from this machine, as far
	// as it knows: the sessions delivered (bucketSentIDs) and not removed
	// or queued for removal since. Each session counts once, however many
	// versions of it went and however often it was sent again.
	Sent  int
	State SinkState
}

// Outbox is one sink's queue in the state database.
type Outbox struct {
	db   *DB
	name []byte
}

// Outbox returns the outbox of a sink by name (it may not be enabled).
func (d *DB) Outbox(name string) *Outbox { return &Outbox{db: d, name: []byte(name)} }

func (o *Outbox) bucket(tx *bolt.Tx) *bolt.Bucket {
	ob := tx.Bucket(bucketOutbox)
	if ob == nil {
		return nil
	}
	return ob.Bucket(o.name)
}

// Enable creates the sink's outbox when needed (with a new device id) and
// queues every session whose map in the store was not delivered in its
// current content: the history before the sink was configured, and flushes
// made while it was forgotten. It returns the sink's state.
func (o *Outbox) Enable(now time.Time) (SinkState, error) {
	st, _, err := o.EnableRendered(now, "")
	return st, err
}

// EnableRendered is Enable for a sink that renders the maps it sends as
// rendering says (SinkState.Rendering; "" leaves it as it is). When the
// sessions delivered were rendered otherwise, every session is queued
// again, delivered or not, so that the rows already sent are replaced:
// a stricter path mode must reach what the team database holds, not only
// what is sent from now on. was is the rendering it replaced, or "" when
// nothing is sent again (the same, or not known: a state of an earlier
// build, which did not keep it, takes the rendering now in use).
func (o *Outbox) EnableRendered(now time.Time, rendering string) (st SinkState, was string, err error) {
	err = o.db.updateQueue(func(tx *bolt.Tx) error {
		ob, err := tx.CreateBucketIfNotExists(bucketOutbox)
		if err != nil {
			return err
		}
		sb, err := ob.CreateBucketIfNotExists(o.name)
		if err != nil {
			return err
		}
		for _, name := range [][]byte{bucketQueue, bucketPending, bucketSent} {
			if _, err := sb.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if st, err = sinkState(sb); err != nil {
			return err
		}
		was = ""
		changed := st.DeviceID == ""
		if st.DeviceID == "" {
			st.DeviceID = newDeviceID()
		}
		if rendering != "" && st.Rendering != rendering {
			was, st.Rendering, changed = st.Rendering, rendering, true
		}
		if changed {
			if err := putSinkState(sb, st); err != nil {
				return err
			}
		}
		return queueAll(tx, sb, now, was != "")
	})
	if err != nil {
		return st, "", fmt.Errorf("enable outbox %s: %w", o.name, err)
	}
	return st, was, nil
}

// Resend forgets what was delivered and queues every map in the store
// again (after the team database was rebuilt). It returns the queue length.
func (o *Outbox) Resend(now time.Time) (int, error) {
	n := 0
	err := o.db.updateQueue(func(tx *bolt.Tx) error {
		sb := o.bucket(tx)
		if sb == nil {
			return errors.New("the sink is not enabled")
		}
		if err := queueAll(tx, sb, now, true); err != nil {
			return err
		}
		n = countKeys(sb.Bucket(bucketPending))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("resend outbox %s: %w", o.name, err)
	}
	return n, nil
}

// Forget drops the sink's queue: every session in it counts as delivered
// in its queued content, so that neither a restart nor the next flush of
// other sessions queues it again (a later change of it does). Retractions
// stay queued: dropping one would leave in the sink for good a session
// privacy.exclude covers. It returns how many entries were dropped.
func (o *Outbox) Forget() (int, error) {
	n := 0
	err := o.db.updateQueue(func(tx *bolt.Tx) error {
		sb := o.bucket(tx)
		if sb == nil {
			return nil
		}
		pending, queue, sent := sb.Bucket(bucketPending), sb.Bucket(bucketQueue), sb.Bucket(bucketSent)
		var drop [][]byte
		if err := pending.ForEach(func(k, v []byte) error {
			q, _, err := pendingEntry(pending, k)
			if err != nil {
				return err
			}
			if q.Retract {
				return nil // kept: the rows of a session privacy.exclude covers still go
			}
			n++
			drop = append(drop, append([]byte(nil), k...))
			if err := queue.Delete(idKey(q.Seq)); err != nil {
				return err
			}
			return sent.Put(k, []byte(q.SHA256))
		}); err != nil {
			return err
		}
		for _, k := range drop {
			if err := pending.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("forget outbox %s: %w", o.name, err)
	}
	return n, nil
}

// Take returns up to n queued entries, oldest first, leaving them queued:
// only Ack removes them, so a crash mid-send sends them again.
func (o *Outbox) Take(n int) ([]Queued, error) {
	var out []Queued
	err := o.db.view(func(tx *bolt.Tx) error {
		sb := o.bucket(tx)
		if sb == nil {
			return nil
		}
		pending := sb.Bucket(bucketPending)
		c := sb.Bucket(bucketQueue).Cursor()
		for k, v := c.First(); k != nil && len(out) < n; k, v = c.Next() {
			q, ok, err := pendingEntry(pending, v)
			if err != nil {
				return err
			}
			if ok && q.Seq == binary.BigEndian.Uint64(k) {
				out = append(out, q)
			}
		}
		return nil
	})
	return out, err
}

// Requeue puts entries taken and not delivered at the back of the queue
// (a retraction the sink refused), so that the entries behind them are
// taken first next time. An entry queued again since it was taken stays
// as it is.
func (o *Outbox) Requeue(qs []Queued) error {
	return o.db.updateQueue(func(tx *bolt.Tx) error {
		sb := o.bucket(tx)
		if sb == nil {
			return nil
		}
		pending, queue := sb.Bucket(bucketPending), sb.Bucket(bucketQueue)
		for _, taken := range qs {
			q, ok, err := pendingEntry(pending, []byte(taken.Key))
			if err != nil || !ok || q.Seq != taken.Seq {
				continue
			}
			if err := queue.Delete(idKey(q.Seq)); err != nil {
				return err
			}
			if err := queueAtBack(pending, queue, []byte(taken.Key), q); err != nil {
				return err
			}
		}
		return nil
	})
}

// Ack records deliveries in one transaction: an entry leaves the queue
// unless the session was queued again since it was taken with content
// other than what was sent.
func (o *Outbox) Ack(done []Delivered, st SinkState) error {
	return o.db.updateQueue(func(tx *bolt.Tx) error {
		sb := o.bucket(tx)
		if sb == nil {
			return nil // forgotten meanwhile
		}
		pending, queue, sent := sb.Bucket(bucketPending), sb.Bucket(bucketQueue), sb.Bucket(bucketSent)
		for _, d := range done {
			q, ok, err := pendingEntry(pending, []byte(d.Key))
			if err != nil {
				return err
			}
			// Not forgotten while it was sent: no record, or a retraction
			// waiting (forgotten, then back before its next flush, whose
			// map would otherwise count as delivered though the
			// retraction removes it).
			if d.SHA256 != "" && tx.Bucket(bucketSessions).Get([]byte(d.Key)) != nil && !(ok && q.Retract) {
				if err := sent.Put([]byte(d.Key), []byte(d.SHA256)); err != nil {
					return err
				}
				if err := recordSentID(sb, d); err != nil {
					return err
				}
			}
			if !ok || (q.Seq != d.Seq && (d.SHA256 == "" || q.SHA256 != d.SHA256)) {
				continue
			}
			if q.Retract {
				// Removed from the sink: nothing of it is there now, so
				// its next map is sent whatever was sent before.
				if err := sent.Delete([]byte(d.Key)); err != nil {
					return err
				}
				if err := recordSentID(sb, Delivered{Key: d.Key}); err != nil {
					return err
				}
			}
			if err := queue.Delete(idKey(q.Seq)); err != nil {
				return err
			}
			if err := pending.Delete([]byte(d.Key)); err != nil {
				return err
			}
		}
		return putSinkState(sb, st)
	})
}

// State reads the sink's state (the zero value when it is not enabled).
func (o *Outbox) State() (SinkState, error) {
	var st SinkState
	err := o.db.view(func(tx *bolt.Tx) error {
		sb := o.bucket(tx)
		if sb == nil {
			return nil
		}
		var err error
		st, err = sinkState(sb)
		return err
	})
	return st, err
}

// PutState records the sink's state alone (a failed attempt).
func (o *Outbox) PutState(st SinkState) error {
	return o.db.updateQueue(func(tx *bolt.Tx) error {
		sb := o.bucket(tx)
		if sb == nil {
			return nil
		}
		return putSinkState(sb, st)
	})
}

// Stats reads the queue's length, its oldest entry and the sink's state.
func (o *Outbox) Stats() (OutboxStats, error) {
	var out OutboxStats
	err := o.db.view(func(tx *bolt.Tx) error {
		sb := o.bucket(tx)
		if sb == nil {
			return nil
		}
		out.Enabled = true
		var err error
		if out.State, err = sinkState(sb); err != nil {
			return err
		}
		if ids := sb.Bucket(bucketSentIDs); ids != nil {
			out.Sent = countKeys(ids)
		}
		pending := sb.Bucket(bucketPending)
		out.Len = countKeys(pending)
		c := sb.Bucket(bucketQueue).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			q, ok, err := pendingEntry(pending, v)
			if err != nil {
				return err
			}
			if ok && q.Seq == binary.BigEndian.Uint64(k) {
				out.Oldest = &q
				break
			}
		}
		return nil
	})
	return out, err
}

// queueFlushes queues, in every enabled outbox, the sessions whose flush
// wrote a map with content neither queued nor delivered yet.
func queueFlushes(tx *bolt.Tx, ss []encodedSession) error {
	ob := tx.Bucket(bucketOutbox)
	if ob == nil {
		return nil
	}
	now := time.Now().UnixMilli()
	return ob.ForEachBucket(func(name []byte) error {
		sb := ob.Bucket(name)
		for _, s := range ss {
			if f := s.flush; f != nil && f.Path != "" && f.SHA256 != "" {
				if err := enqueue(sb, string(s.key), f, now, false); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// queueAll queues every flushed session of the store; force queues even
// those delivered in their current content (and forgets the deliveries).
func queueAll(tx *bolt.Tx, sb *bolt.Bucket, now time.Time, force bool) error {
	if force {
		if err := sb.DeleteBucket(bucketSent); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
			return err
		}
		if _, err := sb.CreateBucket(bucketSent); err != nil {
			return err
		}
	}
	type flushed struct {
		key string
		f   *Flush
	}
	var all []flushed
	if err := tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
		var s Session
		if err := decodeRecord(bucketSessions, k, v, &s); err != nil {
			return err
		}
		if f := s.Flush; f != nil && f.Path != "" && f.SHA256 != "" {
			all = append(all, flushed{string(k), f})
		}
		return nil
	}); err != nil {
		return err
	}
	// Oldest flush first, so that the history goes out in order.
	sort.SliceStable(all, func(i, j int) bool { return all[i].f.AtMs < all[j].f.AtMs })
	for _, s := range all {
		if err := enqueue(sb, s.key, s.f, now.UnixMilli(), force); err != nil {
			return err
		}
	}
	return nil
}

// enqueue puts a session at the back of the queue with its new map,
// replacing an older entry of it; content already queued or delivered is
// left alone (unless force).
func enqueue(sb *bolt.Bucket, key string, f *Flush, nowMs int64, force bool) error {
	pending, queue := sb.Bucket(bucketPending), sb.Bucket(bucketQueue)
	old, had, err := pendingEntry(pending, []byte(key))
	if err != nil {
		return err
	}
	if had && old.SHA256 == f.SHA256 && old.Path == f.Path {
		return nil
	}
	if !had && !force && string(sb.Bucket(bucketSent).Get([]byte(key))) == f.SHA256 {
		return nil
	}
	if had {
		if err := queue.Delete(idKey(old.Seq)); err != nil {
			return err
		}
	}
	q := Queued{Path: f.Path, SHA256: f.SHA256, FlushedMs: f.AtMs, QueuedMs: nowMs}
	if had {
		q.QueuedMs = old.QueuedMs // waiting since the first version queued
	}
	return queueAtBack(pending, queue, []byte(key), q)
}

// queueAtBack makes q the session's pending entry, at the back of the
// queue (a new sequence); the caller removed its old place in the queue.
func queueAtBack(pending, queue *bolt.Bucket, key []byte, q Queued) error {
	seq, err := queue.NextSequence()
	if err != nil {
		return err
	}
	q.Seq = seq
	raw, err := json.Marshal(q)
	if err != nil {
		return err
	}
	if err := queue.Put(idKey(seq), key); err != nil {
		return err
	}
	return pending.Put(key, raw)
}

// countKeys counts a bucket's keys (Stats does not see the writes of the
// transaction it runs in).
func countKeys(b *bolt.Bucket) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

// recordSentID keeps the session id a delivery was stored under
// (bucketSentIDs).
func recordSentID(sb *bolt.Bucket, d Delivered) error {
	if d.SessionID == "" {
		if ids := sb.Bucket(bucketSentIDs); ids != nil {
			return ids.Delete([]byte(d.Key))
		}
		return nil
	}
	ids, err := sb.CreateBucketIfNotExists(bucketSentIDs)
	if err != nil {
		return err
	}
	return ids.Put([]byte(d.Key), []byte(d.SessionID))
}

// retract replaces what a sink keeps of a session that leaves agentmap
// with a retraction, when the session was delivered or queued (a queued
// map may have been stored by a send whose acknowledgement a crash cut):
// the sink then deletes the rows it stored of it. Nothing else of the
// session stays: its hash sent and the id it was sent under go.
func retract(sb *bolt.Bucket, key []byte, nowMs int64) error {
	pending, queue, sent := sb.Bucket(bucketPending), sb.Bucket(bucketQueue), sb.Bucket(bucketSent)
	if pending == nil || queue == nil || sent == nil {
		return nil
	}
	q, had, err := pendingEntry(pending, key)
	if err != nil {
		had = false // undecodable: replaced below
	}
	if had && q.Retract {
		return nil // retracted already, not delivered yet
	}
	id := ""
	ids := sb.Bucket(bucketSentIDs)
	if ids != nil {
		if v := ids.Get(key); v != nil {
			id = string(v)
		}
		if err := ids.Delete(key); err != nil {
			return err
		}
	}
	wasSent := sent.Get(key) != nil
	if err := sent.Delete(key); err != nil {
		return err
	}
	if had {
		if err := queue.Delete(idKey(q.Seq)); err != nil {
			return err
		}
	}
	if !had && !wasSent {
		return pending.Delete(key) // nothing of it reached the sink
	}
	r := Queued{QueuedMs: nowMs, Retract: true, SessionID: id}
	if id == "" {
		r.Native = nativeOfKey(string(key))
	}
	return queueAtBack(pending, queue, key, r)
}

// nativeOfKey is the native id of a session key (agent/native id).
func nativeOfKey(key string) string {
	if _, native, ok := strings.Cut(key, "/"); ok {
		return native
	}
	return key
}

func pendingEntry(pending *bolt.Bucket, key []byte) (Queued, bool, error) {
	raw := pending.Get(key)
	if raw == nil {
		return Queued{}, false, nil
	}
	var q Queued
	if err := json.Unmarshal(raw, &q); err != nil {
		return q, false, errors.New("outbox entry is undecodable")
	}
	q.Key = string(key)
	return q, true, nil
}

func sinkState(sb *bolt.Bucket) (SinkState, error) {
	var st SinkState
	if raw := sb.Get(keySinkState); raw != nil {
		if err := json.Unmarshal(raw, &st); err != nil {
			return st, errors.New("sink state is undecodable")
		}
	}
	return st, nil
}

func putSinkState(sb *bolt.Bucket, st SinkState) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return sb.Put(keySinkState, raw)
}

// newDeviceID is a random (version 4) UUID.
func newDeviceID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
