package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Every value this build writes to the sources, sessions, carry and events
// buckets ends with a seal: a NUL byte, 'c', and the CRC-32C (big endian)
// of the value's scope (its bucket, and for events the session key),
// its key and its payload. bbolt checks its own page structure but not the
// bytes of a value, so without the seal a flipped byte in a stored event
// would silently change a map. The scope and key are covered so that a
// damaged key or nested bucket name is caught as well.
//
// A value without a seal was written before seals existed and is read as it
// is. JSON never holds a raw NUL byte, so a JSON value whose seal was
// itself damaged fails to decode and is caught that way.

// ErrDamaged means a stored value failed its seal or did not decode.
var ErrDamaged = errors.New("state record damaged")

const sealLen = 6

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func sealSum(scope, key, payload []byte) uint32 {
	h := crc32.Update(0, castagnoli, scope)
	h = crc32.Update(h, castagnoli, []byte{0})
	h = crc32.Update(h, castagnoli, key)
	h = crc32.Update(h, castagnoli, []byte{0})
	return crc32.Update(h, castagnoli, payload)
}

// seal appends the seal to payload (which it may reuse).
func seal(scope, key, payload []byte) []byte {
	sum := sealSum(scope, key, payload)
	return binary.BigEndian.AppendUint32(append(payload, 0, 'c'), sum)
}

// unseal returns a value's payload (a sub-slice of v), or ErrDamaged when
// its seal does not match.
func unseal(scope, key, v []byte) ([]byte, error) {
	n := len(v) - sealLen
	if n < 0 || v[n] != 0 || v[n+1] != 'c' {
		return v, nil // written before seals
	}
	payload := v[:n]
	if binary.BigEndian.Uint32(v[n+2:]) != sealSum(scope, key, payload) {
		return nil, fmt.Errorf("%w (bucket %s: seal mismatch)", ErrDamaged, scope)
	}
	return payload, nil
}

// eventsScope is the seal scope of a session's event batches.
func eventsScope(session []byte) []byte {
	return append(append([]byte(nil), bucketEvents...), append([]byte{'/'}, session...)...)
}
