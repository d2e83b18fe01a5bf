package report

import (
	"maps"
	"math"
	"slices"
	"strconv"
)

// A session's events travel column by column rather than as one object
// per event: a page of 20,000 events is then a few arrays of small
// numbers, which gzip packs to a fraction of the objects' size (a report
// of 10,000 sessions is mostly events). The script rebuilds the same
// objects (report.js, events) when the session's page is opened.
//
// The dense columns hold what every event has: its time as the step from
// the event before, its kind, its lane and its label (both as indexes of
// the page's string table). Every other field is a sparse column: the
// indexes of the events that have it (each as the step from the one
// before) and their values, so an absent field stays absent (an exit code
// of 0 or a retry of event #0 are values, not gaps).

// eventColumns is the JSON form of a session's events (written by hand:
// a report of ten thousand sessions is a million events, and reflection
// over them was most of the time it took to write).
type eventColumns struct {
	count             int
	t                 []int64
	kind, lane, label []int
	sparse            map[string]*column
}

// column is one sparse field: the steps between the indexes of the events
// that have it, and their values as JSON (none for a flag).
type column struct {
	last int
	idx  []int
	vals []byte
}

func (c *column) at(i int) {
	c.idx = append(c.idx, i-c.last)
	c.last = i
	if len(c.idx) > 1 {
		c.vals = append(c.vals, ',')
	}
}

func (c *column) int(i int, v int64) {
	c.at(i)
	c.vals = strconv.AppendInt(c.vals, v, 10)
}

func (c *column) float(i int, v float64) {
	c.at(i)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	c.vals = strconv.AppendFloat(c.vals, v, 'g', -1, 64)
}

func (c *column) ints(i int, vs []int) {
	c.at(i)
	c.vals = appendInts(c.vals, vs)
}

func (c *column) flag(i int) {
	c.idx = append(c.idx, i-c.last)
	c.last = i
}

func appendInts[T int | int64](b []byte, vs []T) []byte {
	b = append(b, '[')
	for j, v := range vs {
		if j > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
}

// MarshalJSON writes {"count":n,"t":[…],"k":[…],"l":[…],"lb":[…],
// "sp":{"key":[[steps…],[values…]],…}}.
func (c eventColumns) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 64+len(c.t)*16)
	b = append(b, `{"count":`...)
	b = strconv.AppendInt(b, int64(c.count), 10)
	b = append(b, `,"t":`...)
	b = appendInts(b, c.t)
	b = append(b, `,"k":`...)
	b = appendInts(b, c.kind)
	b = append(b, `,"l":`...)
	b = appendInts(b, c.lane)
	b = append(b, `,"lb":`...)
	b = appendInts(b, c.label)
	b = append(b, `,"sp":{`...)
	for j, k := range slices.Sorted(maps.Keys(c.sparse)) {
		if j > 0 {
			b = append(b, ',')
		}
		col := c.sparse[k]
		b = strconv.AppendQuote(b, k)
		b = append(b, ":["...)
		b = appendInts(b, col.idx)
		b = append(b, ",["...)
		b = append(b, col.vals...)
		b = append(b, "]]"...)
	}
	return append(b, "}}"...), nil
}

// columnize lays events out in columns, interning their strings in st.
func columnize(evs []event, st *strtab) eventColumns {
	n := len(evs)
	c := eventColumns{count: n, t: make([]int64, n), kind: make([]int, n), lane: make([]int, n), label: make([]int, n),
		sparse: map[string]*column{}}
	col := func(k string) *column {
		x := c.sparse[k]
		if x == nil {
			x = &column{}
			c.sparse[k] = x
		}
		return x
	}
	str := func(k string, i int, v string) {
		if v != "" {
			col(k).int(i, int64(st.id(v)))
		}
	}
	list := func(k string, i int, vs []string) {
		if len(vs) > 0 {
			col(k).ints(i, st.ids(vs))
		}
	}
	nonzero := func(k string, i int, v int64) {
		if v != 0 {
			col(k).int(i, v)
		}
	}
	opt := func(k string, i int, v *int64) {
		if v != nil {
			col(k).int(i, *v)
		}
	}
	optInt := func(k string, i int, v *int) {
		if v != nil {
			col(k).int(i, int64(*v))
		}
	}
	prev := int64(0)
	for i := range evs {
		e := &evs[i]
		c.t[i], prev = e.T-prev, e.T
		c.kind[i], c.lane[i], c.label[i] = st.id(e.Kind), e.Lane, st.id(e.Label)
		if e.Err != 0 {
			col("e").flag(i)
		}
		str("tool", i, e.Tool)
		str("cat", i, e.Cat)
		str("c", i, e.Class)
		str("src", i, e.Source)
		str("stop", i, e.Stop)
		if len(e.Files) > 0 {
			col("f").ints(i, e.Files)
		}
		list("fu", i, e.Touch)
		list("tg", i, e.Outside)
		optInt("x", i, e.Exit)
		optInt("r", i, e.RetryOf)
		optInt("ref", i, e.Ref)
		nonzero("a", i, int64(e.Attempt))
		nonzero("i", i, e.In)
		nonzero("cw", i, e.CW)
		nonzero("cr", i, e.CR)
		nonzero("o", i, e.Out)
		nonzero("ms", i, e.Ms)
		nonzero("pre", i, e.Pre)
		nonzero("post", i, e.Post)
		nonzero("ch", i, int64(e.Chars))
		opt("lat", i, e.Latency)
		opt("d", i, e.Dur)
		opt("ob", i, e.OutBytes)
		if e.Cost != 0 {
			col("$").float(i, e.Cost)
		}
	}
	return c
}
