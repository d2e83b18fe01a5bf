package state

// The layout of the database, in one place. Values are JSON so that a
// future schema can read an older one; every change of layout or value
// shape bumps SchemaVersion and adds a migration.

// SchemaVersion is the layout this build reads and writes.
const SchemaVersion = 2

// oldestReadable is the oldest layout a reader alongside no daemon
// (OpenReadOnly) reads as it is, unmigrated: schema 2 changed only how new
// event batches are written, and this build reads schema 1's.
const oldestReadable = 1

var (
	// bucketMeta holds keySchema (the layout version, decimal text).
	bucketMeta = []byte("meta")
	keySchema  = []byte("schema")
	// bucketSources maps a source id (8 bytes, big endian) to its JSON
	// Source record: the file's path, identity, cursor and counters.
	bucketSources = []byte("sources")
	// bucketCarry maps a source id to its parser's carry-state (opaque
	// bytes from Parser.State). Kept apart from the records so that loading
	// every cursor at start-up stays cheap.
	bucketCarry = []byte("carry")
	// bucketSessions maps a session key (agent/native id) to its JSON
	// Session record: activity, end flags and the last flush.
	bucketSessions = []byte("sessions")
	// bucketEvents holds one nested bucket per session key. Inside, the key
	// is source id (8 bytes) + batch sequence (8 bytes), the value the JSON
	// of one committed batch of redacted events, so a session's log is
	// append-only and a source's share of it can be dropped by prefix.
	// Since schema 2 that JSON is S2-compressed behind a tag byte
	// (events.go); batches written before stay plain and are read as such.
	bucketEvents = []byte("events")
	// bucketExports holds the scheduled exports' cursor (exports.go). It is
	// created by the first export, not by a migration: a build without
	// scheduled exports ignores it, and one with them reads its absence
	// as "nothing exported yet", so the layout version stays.
	bucketExports = []byte("exports")
)

// topBuckets are created by the first migration.
var topBuckets = [][]byte{bucketMeta, bucketSources, bucketCarry, bucketSessions, bucketEvents}
