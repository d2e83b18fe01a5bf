package state

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/agentmap/agentmap/builder/event"
)

// Event batches are most of the database's bytes, and most of what a
// commit writes: JSON of events repeats the same keys, tool names and
// paths line after line. Since schema 2 a batch is stored as the S2
// compression of that JSON behind one tag byte (about a fifth of the
// bytes), and sealed like every value. A batch written before (plain
// JSON) is still read as it is. The tag is a byte no JSON text starts
// with, and it is only honoured on a sealed value: a compressed batch
// whose seal was damaged reads as an unsealed value that is not JSON, and
// is caught as damaged, as a plain one is.
const tagS2 = 0x01

// encodeScratch is what EncodeEvents writes a batch into before the
// stored bytes are copied out at their size: its JSON, and the room S2
// may need to compress it. Pooled, since every commit encodes.
type encodeScratch struct{ js, z []byte }

var encodeScratches = sync.Pool{New: func() any { return new(encodeScratch) }}

// EncodeEvents returns a batch of events as the events bucket stores it
// (before its seal): the tag and the S2 compression of their JSON, with
// room for the seal. Callers that hold the events off the loop that
// commits them (a parse worker) encode them there and hand the bytes on in
// Batch.Encoded. A name that could be text (event.Name) is stored as none.
func EncodeEvents(evs []event.Event) []byte {
	sc := encodeScratches.Get().(*encodeScratch)
	sc.js = event.AppendJSON(sc.js[:0], event.Scrub(evs))
	if need := s2.MaxEncodedLen(len(sc.js)); cap(sc.z) < need {
		sc.z = make([]byte, need)
	}
	z := s2.Encode(sc.z[:cap(sc.z)], sc.js)
	out := make([]byte, 1+len(z), 1+len(z)+sealLen)
	out[0] = tagS2
	copy(out[1:], z)
	if cap(sc.js) <= 4<<20 && cap(sc.z) <= 5<<20 { // a rare huge batch is not kept for the next
		encodeScratches.Put(sc)
	}
	return out
}

// decodeEvents reads one stored batch: sealed (a compressed one must be),
// or written before seals as plain JSON.
func decodeEvents(scope, key, v []byte, into *[]event.Event) error {
	payload, err := unseal(scope, key, v)
	if err != nil {
		return err
	}
	sealed := len(payload) < len(v)
	if sealed && len(payload) > 0 && payload[0] == tagS2 {
		js, err := s2.Decode(nil, payload[1:])
		if err != nil {
			return fmt.Errorf("%w (bucket %s: undecompressable)", ErrDamaged, scope)
		}
		payload = js
	}
	// A batch is the JSON event.AppendJSON wrote, which DecodeJSON reads
	// by hand; what it refuses (a batch of an older writer, damage that
	// kept the seal) is left to encoding/json, which decides.
	if evs, ok := event.DecodeJSON(payload); ok {
		*into = evs
		return nil
	}
	if err := json.Unmarshal(payload, into); err != nil {
		return fmt.Errorf("%w (bucket %s: undecodable)", ErrDamaged, scope)
	}
	return nil
}

// SearchableBytes returns the database file's bytes followed by the JSON
// of every compressed event batch in it: what an audit that searches the
// state for text it must not hold (a canary, an excluded session's name)
// has to look through, since a compressed batch hides its text from a
// search of the file. The batches are found in every leaf page of the file
// (and the inline buckets in them), pages bbolt has freed included, so that
// a batch a reset dropped is searched as its plain bytes were before. It
// reads the file only, as it is on disk: no daemon's lock is needed.
func SearchableBytes(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := raw
	if len(raw) < pageHeaderLen+metaLen {
		return out, nil
	}
	pageSize := int(ne.Uint32(raw[pageHeaderLen+8:]))
	if pageSize < 1024 || pageSize > 1<<20 {
		return nil, fmt.Errorf("read state %s: %w", path, errStructure("page size %d", pageSize))
	}
	for at := 2 * pageSize; at+pageSize <= len(raw); at += pageSize {
		p := raw[at:]
		if ne.Uint64(p) != uint64(at/pageSize) || pageFlags(p) != flagLeaf {
			continue // a branch, freelist or overflow page, or one never written
		}
		n := uint64(pageOverflow(p)+1) * uint64(pageSize)
		out = appendCompressed(out, raw[at:at+int(min(n, uint64(len(p))))], 0)
	}
	return out, nil
}

// appendCompressed appends the JSON of every sealed, compressed value of
// the leaf page p (an inline bucket's page too) to out, passing over what
// does not decode: a freed page may be partly overwritten.
func appendCompressed(out, p []byte, depth int) []byte {
	if depth > 8 || len(p) < pageHeaderLen || pageFlags(p) != flagLeaf {
		return out
	}
	for i := range pageCount(p) {
		at := uint64(pageHeaderLen + i*elementLen)
		e, ok := slot(p, at, elementLen)
		if !ok {
			break
		}
		kv, ok := slot(p, at+uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:]))+uint64(ne.Uint32(e[12:])))
		if !ok {
			continue
		}
		v := kv[ne.Uint32(e[8:]):]
		if ne.Uint32(e)&leafBucket != 0 {
			if len(v) > bucketLen && ne.Uint64(v) == 0 {
				out = appendCompressed(out, v[bucketLen:], depth+1) // an inline bucket
			}
			continue
		}
		if compressedBatch(v) {
			if js, ok := PlainValue(v); ok {
				out = append(append(out, '\n'), js...)
			}
		}
	}
	return out
}

// PlainValue returns a stored value as the text it holds, for audits that
// read the database's values themselves: without its seal, and a
// compressed event batch decompressed. It checks no seal; ok is false for
// a compressed batch that does not decompress (its bytes are returned as
// they are).
func PlainValue(v []byte) ([]byte, bool) {
	n := len(v) - sealLen
	if n < 0 || v[n] != 0 || v[n+1] != 'c' {
		return v, true // written before seals
	}
	if !compressedBatch(v) {
		return v[:n], true
	}
	js, err := s2.Decode(nil, v[1:n])
	if err != nil {
		return v, false
	}
	return js, true
}

// compressedBatch reports whether a stored value is a compressed event
// batch by its form: sealed, and its payload tagged (the seal's checksum
// is not checked).
func compressedBatch(v []byte) bool {
	n := len(v) - sealLen
	return n >= 1 && v[n] == 0 && v[n+1] == 'c' && v[0] == tagS2
}
