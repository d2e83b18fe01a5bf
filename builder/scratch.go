package builder

import "sync"

// scratch is the working memory of a build that its map keeps nothing
// of: the lanes' records, the filled times, the requests' groups, the
// order's lists and the index maps. A catch-up builds thousands of maps,
// and each build made them anew (they were most of the bytes a corpus
// flush allocated): the next build takes them, as it takes the node
// blocks (node.go). A map is kept only while it holds at most
// maxPooledEntries: clearing a map costs its capacity, and a long
// session's would be cleared again at every small one after it.
type scratch struct {
	recs   []int
	filled []int64
	groups []llmGroup
	flat   []keyed
	sorted []*node
	all    []*node
	kept   []*node

	results  pooledMap[string, int]
	byGroup  pooledMap[groupKey, *llmGroup]
	callByID pooledMap[string, *node]
}

// pooledMap is a map kept between builds, and the entries it was made or
// grew to hold.
type pooledMap[K comparable, V any] struct {
	m    map[K]V
	room int
}

// maxPooledEntries bounds the entries of a map an idle scratch keeps.
const maxPooledEntries = 1024

// take returns the map, empty, with room for n entries: the kept one when
// it has room, else a new one.
func (p *pooledMap[K, V]) take(n int) map[K]V {
	if p.m == nil || n > p.room {
		p.m, p.room = make(map[K]V, n), n
	}
	return p.m
}

// release empties the map for the next build, or drops it when it grew
// past maxPooledEntries.
func (p *pooledMap[K, V]) release() {
	if p.room = max(p.room, len(p.m)); p.room > maxPooledEntries {
		p.m, p.room = nil, 0
		return
	}
	clear(p.m)
}

// keyed is a node with its order key (see order).
type keyed struct {
	n    *node
	rank int
	ord  int
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledRecords bounds, in elements, the lists an idle scratch keeps
// (some 2 MiB): a long session's are left to the collector.
const maxPooledRecords = 1 << 14

// reuse returns s with length n: over its array when it has room (the
// elements are not cleared), else a new one.
func reuse[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// releaseScratch hands the build's lists to the next build, emptied of
// their pointers so that an idle one holds on to no event or node.
func (b *build) releaseScratch() {
	sc := b.scratch
	b.scratch = nil
	if sc == nil {
		return
	}
	// Appended to in place, within the room they were made with.
	sc.groups, sc.all, sc.kept = b.groupBlock, b.all, b.kept
	clear(sc.groups)
	clear(sc.flat)
	clear(sc.sorted)
	clear(sc.all)
	clear(sc.kept)
	sc.results.release()
	sc.byGroup.release()
	sc.callByID.release()
	if max(cap(sc.recs), cap(sc.filled), cap(sc.groups), cap(sc.flat), cap(sc.sorted), cap(sc.all), cap(sc.kept)) > maxPooledRecords {
		return
	}
	scratches.Put(sc)
}
