package builder

import "sync"

// scratch is the working memory of a build that its map keeps nothing
// of: the lanes' records, the filled times, the requests' groups and the
// order's lists. A catch-up builds thousands of maps and each build made
// them anew, the fifth of the bytes a corpus flush allocated: the next
// build takes them, as it takes the node blocks (node.go). The index maps
// are not kept: clearing a map costs its capacity, a big session's would
// be cleared at every small one after it.
type scratch struct {
	recs   []int
	filled []int64
	groups []llmGroup
	flat   []keyed
	sorted []*node
	all    []*node
	kept   []*node
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
	if max(cap(sc.recs), cap(sc.filled), cap(sc.groups), cap(sc.flat), cap(sc.sorted), cap(sc.all), cap(sc.kept)) > maxPooledRecords {
		return
	}
	scratches.Put(sc)
}
