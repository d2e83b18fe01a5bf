package state

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/klauspost/compress/s2"
	bolt "go.etcd.io/bbolt"

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

// scratch buffers for the JSON a batch is compressed from.
var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// EncodeEvents returns a batch of events as the events bucket stores it
// (before its seal): the tag and the S2 compression of their JSON, with
// room for the seal. Callers that hold the events off the loop that
// commits them (a parse worker) encode them there and hand the bytes on in
// Batch.Encoded.
func EncodeEvents(evs []event.Event) []byte {
	bp := jsonBufs.Get().(*[]byte)
	js := event.AppendJSON((*bp)[:0], evs)
	dst := make([]byte, 1+s2.MaxEncodedLen(len(js)))
	n := len(s2.Encode(dst[1:], js))
	out := make([]byte, 1+n, 1+n+sealLen)
	out[0] = tagS2
	copy(out[1:], dst[1:1+n])
	if cap(js) <= 4<<20 { // a rare huge batch is not kept for the next
		*bp = js[:0]
		jsonBufs.Put(bp)
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
	if err := json.Unmarshal(payload, into); err != nil {
		return fmt.Errorf("%w (bucket %s: undecodable)", ErrDamaged, scope)
	}
	return nil
}

// SearchableBytes returns the database file's bytes followed by the JSON
// of every compressed event batch in it: what an audit that searches the
// state for text it must not hold (a canary, an excluded session's name)
// has to look through, since a compressed batch hides its text from a
// search of the file. The database is opened read-only, alongside no
// daemon.
func SearchableBytes(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out := raw
	err = d.view(func(tx *bolt.Tx) error {
		evB := tx.Bucket(bucketEvents)
		if evB == nil {
			return nil
		}
		return evB.ForEach(func(name, _ []byte) error {
			nb := evB.Bucket(name)
			if nb == nil {
				return nil
			}
			scope := eventsScope(name)
			return nb.ForEach(func(k, v []byte) error {
				payload, err := unseal(scope, k, v)
				if err != nil || len(payload) == len(v) || len(payload) == 0 || payload[0] != tagS2 {
					return err // a plain batch is in the file's bytes as it is
				}
				js, err := s2.Decode(nil, payload[1:])
				if err != nil {
					return fmt.Errorf("%w (bucket %s: undecompressable)", ErrDamaged, scope)
				}
				out = append(append(out, '\n'), js...)
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read state %s: %w", path, err)
	}
	return out, nil
}
