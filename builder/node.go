package builder

import (
	"sync"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/prices"
)

// node is one map event while the map is being built, or an inner marker
// (a repo declaration, a turn end) that takes part in ordering but is not
// written. Links between events are pointers until the final order gives
// them seqs.
type node struct {
	ev    Event
	lane  *lane
	idx   int    // input index of the record that made the node
	inner string // "repo" or "turn_end" for markers; "" for map events
	seq   int    // -1 until kept under the cap
	pos   int    // index among all map events, kept or not

	repoKey string // inner repo marker

	// llm: the usage as priced (cache writes by lifetime, fast mode), and
	// whether the request is a side request (LLM.Side)
	priced prices.Usage
	side   bool

	// tool calls
	call      *event.Call
	targets   []event.Target
	answered  bool
	dur       *int64 // known duration, also for kinds that do not write it
	pr        *event.PR
	commitKey string // commit: Repo.Key
	follow    []*node
	conts     []int // input indexes of continuation calls folded in

	// links resolved to seqs after ordering
	retryOf *node
	ref     *node
	child   string // subagent: the lane it started
	refCall string // error: the call it belongs to
}

// llmGroup merges the records of one model request (same lane and MsgID).
type llmGroup struct {
	first     int // input index of the first record: the request's place
	usage     *event.LLM
	model     string
	toolCalls int
	textChars int
	thinking  bool
	stop      string
}

// add folds one record in. The usage snapshot with the largest total wins
// (ties: the later record) and is never summed: Claude repeats the usage of
// a response on every line of it.
func (g *llmGroup) add(i int, e *event.Event) {
	l := e.LLM
	if g.usage == nil || l.Usage() >= g.usage.Usage() {
		g.usage = l
	}
	if g.model == "" {
		g.model = e.Model
	}
	g.toolCalls += l.ToolCalls
	g.textChars += l.TextChars
	g.thinking = g.thinking || l.Thinking
	if l.Stop != "" {
		g.stop = l.Stop
	}
}

// Nodes, and the int64s events point at, are allocated in blocks: a map
// has a node per event, and a catch-up builds thousands of maps. The first
// node block holds what index counted (model switches aside), the int64
// blocks start small; later blocks double.
//
// Node blocks outlive their build: nothing of a Map points into them (its
// events are copies, their pointers go to int64 blocks and to the input),
// so Build hands them back once the map is encoded and the next build
// takes them (they were a third of the bytes a catch-up's flush allocated).
const maxBlock = 512

func (b *build) newNode(n node) *node {
	a := b.arena
	if a.cur < 0 || len(a.blocks[a.cur]) == cap(a.blocks[a.cur]) {
		a.cur++
		if a.cur == len(a.blocks) {
			size := b.nodeHint
			if a.cur > 0 {
				size = min(2*cap(a.blocks[a.cur-1]), maxBlock)
			}
			a.blocks = append(a.blocks, make([]node, 0, max(size, 8)))
		}
	}
	blk := &a.blocks[a.cur]
	*blk = append(*blk, n)
	return &(*blk)[len(*blk)-1]
}

// nodeArena is the node blocks of one build; blocks[:cur+1] are in use.
type nodeArena struct {
	blocks [][]node
	cur    int
}

var nodeArenas = sync.Pool{New: func() any { return &nodeArena{cur: -1} }}

// maxPooledNodes bounds what an idle arena keeps (4 MiB): a huge session's
// blocks are left to the collector.
const maxPooledNodes = 8 * maxBlock

// releaseNodes empties the build's node blocks (so that they hold on to
// no event's memory) and hands them to the next build. The build's nodes
// must not be used after.
func (b *build) releaseNodes() {
	a := b.arena
	b.arena = nil
	if a == nil {
		return
	}
	kept, total := 0, 0
	for i := range a.blocks {
		if i <= a.cur {
			clear(a.blocks[i])
			a.blocks[i] = a.blocks[i][:0]
		}
		if total += cap(a.blocks[i]); total <= maxPooledNodes {
			kept = i + 1
		}
	}
	clear(a.blocks[kept:])
	a.blocks = a.blocks[:kept]
	a.cur = -1
	nodeArenas.Put(a)
}

// int64p returns a pointer to a copy of v. The block stays alive with any
// map event that points into it.
func (b *build) int64p(v int64) *int64 {
	if len(b.int64Block) == cap(b.int64Block) {
		b.int64Block = make([]int64, 0, min(max(2*cap(b.int64Block), 16), 4*maxBlock))
	}
	b.int64Block = append(b.int64Block, v)
	return &b.int64Block[len(b.int64Block)-1]
}
