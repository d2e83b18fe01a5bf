package state

// Source is what the daemon keeps about one followed file (or one SQLite
// database). It holds the file's own path, needed to follow it, and no other
// path or text.
type Source struct {
	ID    uint64 `json:"-"`
	Path  string `json:"path"`
	Agent string `json:"agent"`
	// Form is how the file is read: "lines" (appended JSONL, tailed from a
	// cursor), "whole" (re-read entirely when it changes: .zst rollouts and
	// single-document JSON) or "sqlite" (a Cursor database, polled).
	Form string `json:"form"`
	// Session is the key of the session the records feed; Lane,
	// ParentSession (a key) and ChildLane are the routing of the file.
	Session       string `json:"session,omitempty"`
	Lane          string `json:"lane,omitempty"`
	ParentSession string `json:"parent,omitempty"`
	ChildLane     string `json:"childLane,omitempty"`

	// Identity: device and inode, and a hash of the first HeadLen bytes
	// (up to 1 KiB).
	Dev      uint64 `json:"dev,omitempty"`
	Ino      uint64 `json:"ino,omitempty"`
	HeadLen  int    `json:"headLen,omitempty"`
	HeadHash string `json:"head,omitempty"`
	// Offset is the end of the last complete line consumed; TailHash a hash
	// of the bytes just before it, checked on resume to catch a rewrite.
	Offset   int64  `json:"offset"`
	TailHash string `json:"tail,omitempty"`
	// Sum is the CRC-32C of every byte before Offset, checked when the file
	// changed without growing (a rewrite in place) and once after start.
	Sum string `json:"sum,omitempty"`

	// Size and ModMs are the file's size and mtime when last read (for
	// whole and sqlite forms, the change gate; for sqlite, Size and ModMs
	// cover the -wal file too through Digest).
	Size  int64 `json:"size,omitempty"`
	ModMs int64 `json:"mod,omitempty"`
	// Digest identifies the content last parsed by a whole or sqlite
	// source, to skip re-parsing (and re-flushing) an unchanged file.
	Digest string `json:"digest,omitempty"`

	// Counters.
	Lines     int64 `json:"lines,omitempty"`
	Skipped   int64 `json:"skipped,omitempty"`
	Oversized int64 `json:"oversized,omitempty"`
	Bytes     int64 `json:"bytes,omitempty"`
	Resets    int64 `json:"resets,omitempty"`

	// Sidecar records that a Claude subagent log's meta.json was there
	// when the log was read from its start (the lane's type comes from it).
	Sidecar bool `json:"sidecar,omitempty"`

	// NextSeq is the sequence of the next committed batch.
	NextSeq uint64 `json:"seq,omitempty"`
	// Missing is set when the file has gone (deleted or moved out of
	// sight); what was captured is kept.
	Missing bool `json:"missing,omitempty"`
	// Parsed is the version of the agent's parser (agents.Agent.Version)
	// whose events the source holds; 0 in records written before versions
	// were kept. A log still on disk whose version is not the build's is
	// read again from its start.
	Parsed int `json:"parsed,omitempty"`
}

// Session is what the daemon keeps about one session besides its events.
type Session struct {
	Key      string `json:"-"`
	Agent    string `json:"agent"`
	NativeID string `json:"id"`
	// Parent is the key of the session this one is also a lane of (a Codex
	// child rollout), with its lane id there.
	Parent    string `json:"parent,omitempty"`
	ChildLane string `json:"childLane,omitempty"`
	// Gen counts changes to the events that feed the session's map (its own
	// or a child's). A flush records the Gen it wrote.
	Gen uint64 `json:"gen"`
	// ActivityMs is the last time (Unix ms) one of its files changed.
	ActivityMs int64 `json:"activity,omitempty"`
	// TurnEnd is set when the last committed main-lane record was a turn end.
	TurnEnd bool `json:"turnEnd,omitempty"`
	// EndedMs is when an explicit end was seen (a deleted file, a rollout
	// moved into the archive); 0 when none.
	EndedMs int64  `json:"ended,omitempty"`
	Flush   *Flush `json:"flush,omitempty"`
}

// Flush records the map last written for a session.
type Flush struct {
	Path   string  `json:"path"` // relative to the map store
	SHA256 string  `json:"sha256"`
	Gen    uint64  `json:"gen"`
	Events int     `json:"events"` // neutral events the map was built from
	AtMs   int64   `json:"at"`
	Sum    Summary `json:"summary"`
	// Options is the identity of the map options the map was written with
	// (a hash: builder.Options.Identity), "" in records written before it
	// was kept: a rewrite for other options passes over a map already
	// written with them.
	Options string `json:"options,omitempty"`
	// Size is the map file's size in bytes, 0 in records written before
	// it was kept: a map found at another size (cut short, emptied,
	// written over) is written again without reading it.
	Size int64 `json:"size,omitempty"`
}

// Summary is what a listing shows of a map without opening it.
type Summary struct {
	Events   int     `json:"events"`
	Calls    int     `json:"calls"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Tokens   int64   `json:"tokens"`
	CostUSD  float64 `json:"costUsd,omitempty"`
	// Unpriced names the models that served tokens with no price: CostUSD
	// leaves them out, and a listing says so.
	Unpriced []string `json:"unpriced,omitempty"`
	// NoUsage counts the model requests whose log recorded no token usage
	// (Cursor's): Tokens and CostUSD leave them out, so that a listing
	// tells them from a session that used none. Records written before it
	// was kept leave it 0 (see daemon.Entries).
	NoUsage int    `json:"noUsage,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	// StartedAt, DurationMs and Repos (names only, as the map has them)
	// let a listing filter and sort without opening the map; flushes
	// recorded before they existed leave them empty.
	StartedAt  string   `json:"startedAt,omitempty"`
	DurationMs int64    `json:"durationMs,omitempty"`
	Repos      []string `json:"repos,omitempty"`
}

// Dirty reports whether the session has changed since its last flush.
func (s *Session) Dirty() bool { return s.Flush == nil || s.Flush.Gen != s.Gen }
