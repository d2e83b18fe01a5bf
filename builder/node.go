package builder

import (
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
