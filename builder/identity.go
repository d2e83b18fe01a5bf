package builder

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"

	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/builder/redact"
)

// Version numbers what Build makes of the same events: it is raised with
// every change that gives another map for events already stored (a field
// added, a count fixed, a parser's events read differently), so that a
// daemon of the new build writes every map again (daemon/identity.go)
// instead of keeping, for a session that does not change any more, what
// an earlier build made of it. TestBuilderVersion fails when the maps of
// the fixtures or the corpus's content hashes change under the same
// number.
const Version = 3

// Identity names everything a map depends on besides its events: the
// builder's version, the path mode, the hash key (hashed, never kept),
// the event cap and the prices in effect (the embedded table with the
// overrides over it, their figures only: a row's source or the date it was
// checked change no cost). Two option sets with the same identity make the
// same map of the same events. The producer (which build wrote the map) is
// left out: a new build alone is no reason to write every map again.
func (o Options) Identity() string {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], Version)
	h.Write(n[:])
	h.Write([]byte(o.PathMode))
	h.Write([]byte{0})
	if o.PathMode == redact.ModeHashed && len(o.HashKey) > 0 {
		key := sha256.Sum256(o.HashKey)
		h.Write(key[:])
	}
	eventCap := o.EventCap
	if eventCap <= 0 {
		eventCap = DefaultEventCap
	}
	binary.BigEndian.PutUint64(n[:], uint64(eventCap))
	h.Write(n[:])
	rows := prices.Default().With(o.Prices).Rows()
	for i := range rows {
		rows[i].Source, rows[i].Checked = "", ""
	}
	table, _ := json.Marshal(rows) // plain numbers and strings: no error
	h.Write(table)
	return hex.EncodeToString(h.Sum(nil)[:16])
}
