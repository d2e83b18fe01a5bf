package builder

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/builder/redact"
)

// ErrNoSession is returned when the events carry no session id.
var ErrNoSession = errors.New("build map: no session id in the events")

// ErrEmptySession is returned for a session with no map event at all (a
// chat that was opened and never used): it has no map, and so no list row;
// its file's times alone would make up its bounds.
var ErrEmptySession = errors.New("build map: the session has no events")

// Build turns the events of one session (main lane and subagent lanes, in
// any interleaving that keeps each lane's own order) into a map. The result
// depends only on the events and the options: the same input gives the same
// bytes.
func Build(events []event.Event, opts Options) (*Map, error) {
	if opts.EventCap < 0 {
		return nil, fmt.Errorf("build map: negative event cap %d", opts.EventCap)
	}
	if opts.EventCap == 0 {
		opts.EventCap = DefaultEventCap
	}
	switch opts.PathMode {
	case "":
		opts.PathMode = redact.ModeRelative
	case redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed:
	default:
		return nil, fmt.Errorf("build map: unknown path mode %q", opts.PathMode)
	}
	// Every parser filters the names it reads; this is the gate behind
	// them all: a name that could be text reaches no map (event.Name).
	events = event.Scrub(events)
	events = plausibleTimes(events)
	facts := sessionFacts(events)
	if facts.NativeID == "" {
		return nil, ErrNoSession
	}
	b := newBuild(events, opts)
	defer b.releaseNodes()
	defer b.releaseScratch()
	b.walkLanes()
	b.signals()
	b.order()
	if len(b.all) == 0 {
		return nil, ErrEmptySession
	}
	m := b.assemble(facts)
	if _, err := m.Canonical(); err != nil { // sets ContentHash
		return nil, fmt.Errorf("build map %s: %w", facts.NativeID, err)
	}
	return m, nil
}

// sessionFacts merges the session records: later non-empty values win, the
// main lane's records over a lane's.
func sessionFacts(events []event.Event) event.Session {
	var main, other event.Session
	for i := range events {
		e := &events[i]
		if e.Kind != event.KindSession || e.Session == nil {
			continue
		}
		dst := &main
		if e.Agent != "" {
			dst = &other
		}
		mergeSession(dst, e.Session)
	}
	if main.NativeID == "" {
		mergeSession(&other, &main)
		return other
	}
	return main
}

func mergeSession(dst, src *event.Session) {
	set := func(d *string, s string) {
		if s != "" {
			*d = s
		}
	}
	set(&dst.NativeID, src.NativeID)
	set(&dst.AgentTool, src.AgentTool)
	set(&dst.Role, src.Role)
	set(&dst.ParentNativeID, src.ParentNativeID)
	set(&dst.AgentVersion, src.AgentVersion)
	if src.StartT > 0 {
		dst.StartT = src.StartT
	}
	if src.EndT > 0 {
		dst.EndT = src.EndT
	}
}

// build holds the state of one Build call.
type build struct {
	in     []event.Event
	opts   Options
	prices *prices.Table // the embedded table with opts.Prices over it

	lanes   []*lane // by rank: main first, then lane ids lexically
	laneIdx map[string]*lane
	// dropped marks the records another lane's copy replaces (see
	// dropReplays); nil when none.
	dropped []bool

	// times: filled T per input record (see fillTimes); base and last are
	// the times of the first and last map events (see rebase); timed says
	// whether any record has a time.
	filled []int64
	base   int64
	last   int64
	timed  bool

	results map[string]int // CallID -> index of its (last) result
	// laneResults, made only when two lanes hold results of one call id
	// (ids a provider numbers per conversation, functions.Read:0), pairs a
	// call with its own lane's result first (see resultOf).
	laneResults map[laneCall]int
	groups      map[groupKey]*llmGroup // into groupBlock
	launches    map[string]string      // launching CallID -> lane id (KindLane)
	calls       map[string]*node       // CallID -> call node (continuations map to their root)
	repoInfo    map[string]event.Repo
	hasResults  bool
	sorted      []*node // every node, in map order (inner markers included)
	kept        []*node // map events kept under the cap, seq order
	all         []*node // every map event, map order
	prCreations []*node

	groupBlock []llmGroup
	scratch    *scratch   // holds the arrays of recs, filled, groupBlock and the order: scratch.go
	arena      *nodeArena // see newNode
	nodeHint   int        // the nodes the lane walk makes, at most: see index
	int64Block []int64    // see int64p
}

type groupKey struct{ agent, id string }

// lane is one agent's events: the main lane ("") or a subagent lane.
type lane struct {
	id    string
	rank  int
	recs  []int   // input indexes of the lane's records, in order
	size  int     // how many they are, counted before they are listed
	nodes []*node // primary nodes in lane order; follow-ups hang off them
	// lastActivity is the input index of the lane's last llm or user
	// record (a call before it was never answered).
	lastActivity int
	satype       string
	model        string // declared by KindLane
	launchCallID string
	launcher     *node
	// launched: declared by its parent's launching call (event.Lane.Launched);
	// logStart orders lanes whose log names no launch (event.Lane.LogStartMs).
	launched bool
	logStart int64
	// replaced: a launched lane without events whose place a logged lane
	// took (see pairLaunches); it is not listed.
	replaced   bool
	firstModel string
	events     int // map events of the lane, kept or not
	kept       int
}

func newBuild(events []event.Event, opts Options) *build {
	b := &build{
		in: events, opts: opts, prices: prices.Default().With(opts.Prices),
		arena:    nodeArenas.Get().(*nodeArena),
		scratch:  scratches.Get().(*scratch),
		laneIdx:  map[string]*lane{},
		launches: map[string]string{},
		repoInfo: map[string]event.Repo{},
	}
	ids := []string{}
	results, requests, calls, relayed, recs := 0, 0, 0, 0, 0
	var l *lane // the lane of the record before: runs of records share one
	var prev *event.Event
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case event.KindSession:
			continue
		case event.KindResult:
			results++
		case event.KindLLM:
			if e.LLM != nil && e.LLM.Relayed {
				relayed++
			}
			if sameRequest(prev, e) {
				break
			}
			if e.LLM != nil && e.LLM.MsgID != "" {
				prev = e
			}
			requests++
		case event.KindCall:
			calls++
		}
		if l == nil || l.id != e.Agent {
			if l = b.laneIdx[e.Agent]; l == nil {
				l = &lane{id: e.Agent, lastActivity: -1}
				b.laneIdx[e.Agent] = l
				if e.Agent != "" {
					ids = append(ids, e.Agent)
				}
			}
		}
		l.size++
		recs++
	}
	if _, ok := b.laneIdx[""]; !ok {
		b.laneIdx[""] = &lane{lastActivity: -1}
	}
	b.laneRecords(recs)
	// Sized up front: a long session would otherwise grow each map many
	// times over. Each request's first record starts a run of records
	// with its lane and MsgID, so the runs bound the requests (Claude
	// writes a response's content blocks as lines in a row: counting
	// records gave several times the room): groupBlock never grows, and
	// pointers into it stay valid.
	b.results = b.scratch.results.take(results)
	b.groups = b.scratch.byGroup.take(requests)
	b.groupBlock = reuse(b.scratch.groups, requests)[:0]
	b.calls = b.scratch.callByID.take(calls)
	sort.Strings(ids)
	b.lanes = append(b.lanes, b.laneIdx[""])
	for _, id := range ids {
		b.lanes = append(b.lanes, b.laneIdx[id])
	}
	for r, l := range b.lanes {
		l.rank = r
	}
	if relayed > 0 {
		b.dropRelayed()
	}
	if len(b.lanes) > 1 {
		b.dropReplays()
	}
	b.fillTimes()
	b.index()
	return b
}

// sameRequest reports whether the model record e continues the run of
// records of one request that prev (the last record with a MsgID, or nil)
// is part of: the same lane and MsgID.
func sameRequest(prev, e *event.Event) bool {
	return prev != nil && e.LLM != nil && e.LLM.MsgID == prev.LLM.MsgID && e.Agent == prev.Agent
}

// laneRecords fills each lane's recs with the input indexes of its records
// (the session records aside), in order, over one array: each lane has
// room for the records newBuild counted in it.
func (b *build) laneRecords(n int) {
	b.scratch.recs = reuse(b.scratch.recs, n)
	all := b.scratch.recs
	at := 0
	for _, l := range b.laneIdx {
		l.recs = all[at : at : at+l.size]
		at += l.size
	}
	var l *lane
	for i := range b.in {
		e := &b.in[i]
		if e.Kind == event.KindSession {
			continue
		}
		if l == nil || l.id != e.Agent {
			l = b.laneIdx[e.Agent]
		}
		l.recs = append(l.recs, i)
	}
}

// dropReplays keeps one copy of a model response that several lanes'
// logs hold: the first lane's, the main lane first. A response id
// (Claude's message.id) names one response the API gave, so a second lane
// holding it replays it: a Claude Code side question (/btw) logs a
// subagent that replays its parent's messages under their message ids
// with new request ids, and counting them again there billed the parent's
// requests twice. The calls a replayed response made (the records that
// follow it in its lane) and their results go with it. Call ids alone are
// not compared across lanes: some providers number them per conversation
// (functions.Read:0), so two lanes' calls may share one. Lines of one
// response share the message id within a lane, where the lane walk merges
// them (index); here only whole lanes are compared.
func (b *build) dropReplays() {
	owner := map[string]*lane{}
	for _, l := range b.lanes {
		kept := l.recs[:0]
		replaying := false           // the lane's last response was dropped, its calls follow
		var replayed map[string]bool // ids of the calls dropped with it
		for _, i := range l.recs {
			e := &b.in[i]
			switch {
			case e.Kind == event.KindLLM && e.LLM != nil && e.LLM.MsgID != "":
				id := responseOf(e.LLM.MsgID)
				o := owner[id]
				if replaying = o != nil && o != l; replaying {
					b.drop(i)
					continue
				}
				owner[id] = l
			case e.Kind == event.KindCall:
				if replaying {
					if e.Call != nil && e.Call.ID != "" {
						if replayed == nil {
							replayed = map[string]bool{}
						}
						replayed[e.Call.ID] = true
					}
					b.drop(i)
					continue
				}
			case e.Kind == event.KindResult:
				if e.Result != nil && replayed[e.Result.CallID] {
					b.drop(i) // the result of a replayed call
					continue
				}
			default:
				replaying = false
			}
			kept = append(kept, i)
		}
		l.recs = kept
	}
}

// dropRelayed leaves out the relayed copies of the responses that a log of
// the session holds itself (event.LLM.Relayed). Claude Code writes a
// subagent's responses into the subagent's own file and, in many versions,
// into the parent's transcript as well (agent_progress lines), with the
// same message and request ids. The copies count only where no log holds
// the response itself: the parent's transcript is often all there is (a
// copy of the main file, a subagent file deleted or never written), and a
// daemon may read the parent before the subagent's file appears. The
// lane's own records win because they are whole (the request's latency,
// text and calls); a copy carries tokens, model, ids and time only.
// Merging the copies into the lane's request by MsgID would count the
// tokens once too, but take the time and latency of whichever record came
// first. Decided here, over every log of the session, because no parser
// sees both logs; so the map is the same whichever log was read first. A
// response is compared by its response id (responseOf), as replays are.
func (b *build) dropRelayed() {
	held := map[string]bool{}
	for i := range b.in {
		if e := &b.in[i]; e.Kind == event.KindLLM && e.LLM != nil && !e.LLM.Relayed && e.LLM.MsgID != "" {
			held[responseOf(e.LLM.MsgID)] = true
		}
	}
	if len(held) == 0 {
		return
	}
	for _, l := range b.lanes {
		kept := l.recs[:0]
		for _, i := range l.recs {
			if e := &b.in[i]; e.Kind == event.KindLLM && e.LLM != nil && e.LLM.Relayed && held[responseOf(e.LLM.MsgID)] {
				b.drop(i)
				continue
			}
			kept = append(kept, i)
		}
		l.recs = kept
	}
}

// laneCall is a call id in one lane.
type laneCall struct{ lane, id string }

// resultOf is the index of the (last) result of call id made in lane: its
// own lane's, else any lane's (a result may come back in another lane
// than its call's).
func (b *build) resultOf(lane, id string) (int, bool) {
	if id == "" {
		return 0, false
	}
	if b.laneResults != nil {
		if ri, ok := b.laneResults[laneCall{lane, id}]; ok {
			return ri, true
		}
	}
	ri, ok := b.results[id]
	return ri, ok
}

// drop leaves record i out of the build: out of its lane's records, and
// out of index, which would otherwise pair a call with its replayed result.
func (b *build) drop(i int) {
	if b.dropped == nil {
		b.dropped = make([]bool, len(b.in))
	}
	b.dropped[i] = true
}

// responseOf is the response a MsgID names. A Claude MsgID is message.id +
// "/" + requestId, and a replay keeps the message id (msg_…, from the
// Messages API, Bedrock's and Vertex's included) under a new request id:
// its message id is the response. Any other id is compared whole.
func responseOf(msgID string) string {
	if i := strings.LastIndexByte(msgID, '/'); i > 0 && strings.HasPrefix(msgID, "msg_") {
		return msgID[:i]
	}
	return msgID
}

// fillTimes gives every record a time: a record without one takes the
// previous time in its lane, or the lane's next time when it leads the
// lane, or the session's first time when its lane has none.
func (b *build) fillTimes() {
	b.scratch.filled = reuse(b.scratch.filled, len(b.in))
	b.filled = b.scratch.filled
	clear(b.filled) // a record of no lane keeps 0
	first, last := int64(0), int64(0)
	for i := range b.in {
		t := b.in[i].T
		if t <= 0 {
			continue
		}
		if !b.timed || t < first {
			first = t
		}
		if !b.timed || t > last {
			last = t
		}
		b.timed = true
	}
	if !b.timed {
		return
	}
	b.base, b.last = first, last
	for _, l := range b.lanes {
		idx := l.recs
		carry := int64(0)
		for _, i := range idx {
			if t := b.in[i].T; t > 0 {
				carry = t
				break
			}
		}
		if carry == 0 {
			carry = first
		}
		for _, i := range idx {
			if t := b.in[i].T; t > 0 {
				carry = t
			}
			b.filled[i] = carry
		}
	}
}

// t is the filled Unix ms time of input record i (0 in an untimed
// session). order makes map times relative once the first event is known.
func (b *build) t(i int) int64 {
	if !b.timed {
		return 0
	}
	return b.filled[i]
}

// index collects what the lane walk needs to look ahead at: results by
// call id, merged model requests, lane declarations, repos.
func (b *build) index() {
	for i := range b.in {
		if b.dropped != nil && b.dropped[i] {
			continue
		}
		e := &b.in[i]
		switch e.Kind {
		case event.KindRepo, event.KindModel, event.KindUser, event.KindCall, event.KindError,
			event.KindCompaction, event.KindTurnEnd:
			b.nodeHint++ // a record the lane walk may make a node of
		}
		switch e.Kind {
		case event.KindResult:
			if e.Result != nil && e.Result.CallID != "" {
				id := e.Result.CallID
				if prev, ok := b.results[id]; ok && (b.laneResults != nil || b.in[prev].Agent != e.Agent) {
					if b.laneResults == nil {
						b.laneResults = map[laneCall]int{}
					}
					if _, ok := b.laneResults[laneCall{b.in[prev].Agent, id}]; !ok {
						b.laneResults[laneCall{b.in[prev].Agent, id}] = prev
					}
					b.laneResults[laneCall{e.Agent, id}] = i
				}
				b.results[id] = i
				b.hasResults = true
			}
		case event.KindLLM:
			if e.LLM != nil && e.LLM.MsgID == "" {
				b.nodeHint++
			}
			if e.LLM != nil && e.LLM.MsgID != "" {
				k := groupKey{e.Agent, e.LLM.MsgID}
				g := b.groups[k]
				if g == nil {
					b.groupBlock = append(b.groupBlock, llmGroup{first: i})
					g = &b.groupBlock[len(b.groupBlock)-1]
					b.groups[k] = g
					b.nodeHint++
				}
				g.add(i, e)
			}
		case event.KindLane:
			l := b.laneIdx[e.Agent]
			if e.Lane != nil {
				if e.Lane.SubagentType != "" {
					l.satype = e.Lane.SubagentType
				}
				if e.Lane.LaunchCallID != "" {
					l.launchCallID = e.Lane.LaunchCallID
					b.launches[e.Lane.LaunchCallID] = e.Agent
				}
				l.launched = l.launched || e.Lane.Launched
				if e.Lane.LogStartMs > 0 {
					l.logStart = e.Lane.LogStartMs
				}
			}
			if e.Model != "" {
				l.model = e.Model
			}
		case event.KindRepo:
			if e.Repo != nil && e.Repo.Key != "" {
				r := b.repoInfo[e.Repo.Key]
				r.Key = e.Repo.Key
				if e.Repo.Name != "" {
					r.Name = e.Repo.Name
				}
				if e.Repo.Remote != "" {
					r.Remote = e.Repo.Remote
				}
				b.repoInfo[e.Repo.Key] = r
			}
		}
	}
}

// order flattens the lanes (each primary node followed by its follow-ups)
// and sorts every node by (t, lane rank, order within lane).
func (b *build) order() {
	b.rebase()
	nodes := 0
	for _, l := range b.lanes {
		for _, n := range l.nodes {
			nodes += 1 + len(n.follow)
		}
	}
	flat := reuse(b.scratch.flat, nodes)[:0]
	for _, l := range b.lanes {
		ord := 0
		for _, n := range l.nodes {
			flat = append(flat, keyed{n, l.rank, ord})
			ord++
			for _, f := range n.follow {
				flat = append(flat, keyed{f, l.rank, ord})
				ord++
			}
		}
	}
	// (t, rank, ord) is unique: a plain sort gives the stable order.
	slices.SortFunc(flat, func(a, c keyed) int {
		if a.n.ev.T != c.n.ev.T {
			return cmp.Compare(a.n.ev.T, c.n.ev.T)
		}
		if a.rank != c.rank {
			return cmp.Compare(a.rank, c.rank)
		}
		return cmp.Compare(a.ord, c.ord)
	})
	b.scratch.flat = flat
	b.scratch.sorted = reuse(b.scratch.sorted, len(flat))
	b.sorted = b.scratch.sorted
	b.all = reuse(b.scratch.all, len(flat))[:0]
	b.kept = reuse(b.scratch.kept, min(len(flat), b.opts.EventCap))[:0]
	for i, k := range flat {
		b.sorted[i] = k.n
		k.n.seq = -1
		k.n.pos = -1
		if k.n.inner != "" {
			continue
		}
		k.n.pos = len(b.all)
		b.all = append(b.all, k.n)
		if len(b.kept) < b.opts.EventCap {
			k.n.seq = len(b.kept)
			b.kept = append(b.kept, k.n)
		}
	}
	// References point back. Times that go back within a lane can sort a
	// retried call or the call an error names after the event: such a
	// link is dropped (and the retry is not counted).
	for _, n := range b.all {
		if n.retryOf != nil && n.retryOf.pos > n.pos {
			n.retryOf, n.ev.Attempt = nil, 0
		}
		if n.ref != nil && n.ref.pos > n.pos {
			n.ref = nil
		}
	}
}

// rebase makes node times relative to the session's first map event:
// t = 0 at the first event, durationMs up to the last one. Inner markers
// before the first event get negative times, which only order them.
func (b *build) rebase() {
	if !b.timed {
		return
	}
	first, last, found := int64(0), int64(0), false
	visit := func(n *node) {
		if n.inner != "" {
			return
		}
		if !found || n.ev.T < first {
			first = n.ev.T
		}
		if !found || n.ev.T > last {
			last = n.ev.T
		}
		found = true
	}
	for _, l := range b.lanes {
		for _, n := range l.nodes {
			visit(n)
			for _, f := range n.follow {
				visit(f)
			}
		}
	}
	if found {
		b.base, b.last = first, last
	}
	for _, l := range b.lanes {
		for _, n := range l.nodes {
			n.ev.T -= b.base
			for _, f := range n.follow {
				f.ev.T -= b.base
			}
		}
	}
}

// isoMillis formats Unix ms as ISO-8601 UTC with milliseconds.
func isoMillis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
