package daemon

import (
	"hash/maphash"

	"github.com/agentmap/agentmap/watchers"
)

// retiredSet is what a one-shot catch-up keeps of the sessions it let go
// of (retire.go, quiet.go): for each, the ids of its sources and whether
// it counts as a session; for each of their logs, the file's identity. It
// is the one part of a scan's memory that grows with every session met,
// so it holds no strings: a session is known by a 64-bit hash of its key
// and its sources' ids sit in one shared slice, some 60 to 90 bytes a session
// where a map by key with a slice each took over 200.
//
// A hash is not a key, so the set never answers alone: a session looked
// up by key is taken up again only when the records read back from the
// state database are that session's (restore checks), and a session
// whose hash is already taken by another is simply not retired (add
// refuses it; it stays in memory as before). A collision thus costs room,
// never a session.
type retiredSet struct {
	byKey map[uint64]retiredRef
	// files maps the identity of a retired log to its session's hash: a
	// log renamed while the scan runs is still that session's.
	files   map[watchers.FileID]uint64
	ids     []uint64 // the sources' ids, those of one session together
	counted int      // how many of the sessions count (see counted)
}

// retiredRef locates a retired session's source ids in retiredSet.ids.
type retiredRef struct {
	at, n   uint32
	counted bool
}

// retiredKeyHash hashes session keys for the set; a variable so that
// tests can force collisions.
var retiredKeyHash = func() func(string) uint64 {
	seed := maphash.MakeSeed()
	return func(key string) uint64 { return maphash.String(seed, key) }
}()

// add retires a session with the given sources and log identities; it
// reports false, retiring nothing, when another retired session has the
// same hash (or there is nothing to record).
func (r *retiredSet) add(key string, ids []uint64, files []watchers.FileID, counted bool) bool {
	h := retiredKeyHash(key)
	if _, taken := r.byKey[h]; taken || len(ids) == 0 {
		return false
	}
	if r.byKey == nil {
		r.byKey, r.files = map[uint64]retiredRef{}, map[watchers.FileID]uint64{}
	}
	r.byKey[h] = retiredRef{at: uint32(len(r.ids)), n: uint32(len(ids)), counted: counted}
	r.ids = append(r.ids, ids...)
	for _, id := range files {
		r.files[id] = h
	}
	if counted {
		r.counted++
	}
	return true
}

// lookup returns the source ids of the retired session whose key hashes as
// key does: that session's, unless two keys share a hash (the caller
// checks the records).
func (r *retiredSet) lookup(key string) (h uint64, ids []uint64, ok bool) {
	h = retiredKeyHash(key)
	ids, ok = r.idsOf(h)
	return h, ids, ok
}

func (r *retiredSet) idsOf(h uint64) ([]uint64, bool) {
	ref, ok := r.byKey[h]
	if !ok {
		return nil, false
	}
	return r.ids[ref.at : ref.at+ref.n : ref.at+ref.n], true
}

// byFile returns the hash and source ids of the retired session a log of
// identity id belongs to.
func (r *retiredSet) byFile(id watchers.FileID) (h uint64, ids []uint64, ok bool) {
	if !id.Known() {
		return 0, nil, false
	}
	if h, ok = r.files[id]; !ok {
		return 0, nil, false
	}
	ids, ok = r.idsOf(h)
	return h, ids, ok
}

// remove forgets a session taken up again, and the identities of its logs.
// Its ids stay in the shared slice: sessions taken up again are few.
func (r *retiredSet) remove(h uint64, files []watchers.FileID) {
	ref, ok := r.byKey[h]
	if !ok {
		return
	}
	delete(r.byKey, h)
	if ref.counted {
		r.counted--
	}
	for _, id := range files {
		if r.files[id] == h {
			delete(r.files, id)
		}
	}
}

// len is how many sessions are retired.
func (r *retiredSet) len() int { return len(r.byKey) }
