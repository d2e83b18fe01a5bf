package report

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/klauspost/compress/s2"
)

// Page is what a report keeps of a map: its overview row and aggregates,
// naming strings by ids of its own, and its session page's JSON. A report
// of 100,000 sessions holds these rather than the maps (some 20 KB each
// decoded), and interns the strings of all of them in the overview's order
// once it knows that order (interned), into the ids Write would have given.
type Page struct {
	session mapfile.Session // its sort key, and what countedOnce reads
	lanes   []string        // the ids of the map's lanes
	row     []any           // sessionRow, with the ids of strs
	agg     agg             // sessionAgg, with the ids of strs
	strs    []string        // the strings row and agg name, by id, in the order they were first named
	// The session page's JSON, s2-compressed (a page of a large session
	// is hundreds of KB; s2 packs it some 4 times at a GB a second), and
	// its size.
	packed []byte
	size   int
}

// json is the session page's JSON.
func (p *Page) json() ([]byte, error) {
	raw, err := s2.Decode(nil, p.packed)
	if err != nil {
		return nil, fmt.Errorf("report: session %s: %w", p.NativeID(), err)
	}
	return raw, nil
}

// PageOf makes the page of m.
func PageOf(m *Map) (Page, error) {
	st := newStrtab()
	p := Page{session: m.Session, row: sessionRow(st, m, len(m.Events)), agg: sessionAgg(st, m), strs: st.list}
	p.session.Models = nil // not read again
	for _, a := range m.Agents {
		p.lanes = append(p.lanes, a.ID)
	}
	sp := buildSessionPage(m)
	raw, err := sp.marshal()
	if err != nil {
		return Page{}, fmt.Errorf("report: session %s: %w", m.Session.NativeID(), err)
	}
	// s2.Encode's buffer is sized for the worst case, above the input's
	// size: kept as it is, each page would hold more than its JSON. The
	// page keeps a copy of the size it packed to.
	scratch := packScratch.Get().(*[]byte)
	*scratch = s2.Encode((*scratch)[:cap(*scratch)], raw)
	p.packed, p.size = bytes.Clone(*scratch), len(raw)
	packScratch.Put(scratch)
	return p, nil
}

// packScratch holds the buffers pages are packed into before their copy.
var packScratch = sync.Pool{New: func() any { return new([]byte) }}

// NativeID is the page's session id, as Session.NativeID.
func (p *Page) NativeID() string { return p.session.NativeID() }

// PagesOf makes the pages of maps, on every core.
func PagesOf(maps []*Map) ([]Page, error) {
	pages := make([]Page, len(maps))
	err := parallel(len(maps), func(j int) (err error) {
		pages[j], err = PageOf(maps[j])
		return err
	})
	return pages, err
}

// PageSessions is Sessions of the maps of pages.
func PageSessions(pages []Page) int { return len(pagesCountedOnce(pages)) }

// pagesCountedOnce is countedOnce of the maps of pages.
func pagesCountedOnce(pages []Page) []Page {
	return keptOnce(pages, func(p *Page) *mapfile.Session { return &p.session }, func(p *Page) []string { return p.lanes })
}

// The places of string ids in a session's row (sessionRow): single ids,
// and lists of them.
var (
	rowIDs     = []int{0, 1, 6}
	rowIDLists = []int{2, 3, 26}
)

// interned is the page's row and aggregates with their strings interned
// in st. Called for each page in the overview's order, it gives every
// string the id sessionRow and sessionAgg would have given it with st:
// they name a page's strings in the order of strs, and st numbers a new
// string in the order it is named.
func (p *Page) interned(st *strtab) ([]any, agg) {
	ids := make([]int64, len(p.strs))
	for i, s := range p.strs {
		ids[i] = int64(st.id(s))
	}
	row := slices.Clone(p.row)
	for _, i := range rowIDs {
		row[i] = int(ids[row[i].(int)])
	}
	for _, i := range rowIDLists {
		list := slices.Clone(row[i].([]int))
		for k, id := range list {
			list[k] = int(ids[id])
		}
		row[i] = list
	}
	a := p.agg
	at := func(xs []int64, stride int, places ...int) []int64 {
		xs = slices.Clone(xs)
		for k := 0; k < len(xs); k += stride {
			for _, o := range places {
				xs[k+o] = ids[xs[k+o]]
			}
		}
		return xs
	}
	a.ErrSource = at(a.ErrSource, 2, 0)
	a.ErrClass = at(a.ErrClass, 2, 0)
	a.Verbs = at(a.Verbs, 4, 0)
	a.MCP = at(a.MCP, 4, 0, 1)
	a.Subagents = at(a.Subagents, 2, 0)
	a.Delays = at(a.Delays, 3, 0)
	a.Cats = at(a.Cats, 3, 0)
	a.Models = at(a.Models, 5, 0)
	a.Files = at(a.Files, 3, 0)
	a.Slots = at(a.Slots, 3, 1)
	// sessionAgg lists the files by id.
	files := make([][3]int64, 0, len(a.Files)/3)
	for k := 0; k < len(a.Files); k += 3 {
		files = append(files, [3]int64(a.Files[k:k+3]))
	}
	slices.SortFunc(files, func(x, y [3]int64) int { return cmp.Compare(x[0], y[0]) })
	a.Files = a.Files[:0]
	for _, f := range files {
		a.Files = append(a.Files, f[:]...)
	}
	return row, a
}
