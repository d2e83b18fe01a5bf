package builder

// Thresholds of the format page's reference producer.
const (
	toolDelayMs  = 30_000
	llmDelayMs   = 60_000
	stallDelayMs = 120_000
	retryWindow  = 8
)

// signals adds retries and delays, lane by lane.
func (b *build) signals() {
	for _, l := range b.lanes {
		b.retries(l)
		delays(l)
	}
	b.stalls(b.lanes[0])
}

// retries marks a call that repeats a failed call of the same lane (same
// tool, verb or server, and first target) among the lane's last 8 calls.
// A call sent before the failure was known repeats nothing: the failed
// call's result must come before it (parallel calls of one response all
// precede their results), and a failed call without a result (no_result)
// is known only to a later model response, in lanes that record requests.
func (b *build) retries(l *lane) {
	type attempt struct {
		n   *node
		key callKey
		req int // requests seen in the lane before the call
	}
	// The window slides over a fixed array: re-slicing it from the front
	// made append copy it to a new array every few calls.
	var buf [retryWindow]attempt
	window := buf[:0]
	req, hasReqs := 0, false
	for _, n := range l.nodes {
		hasReqs = hasReqs || (n.ev.Kind == "llm" && n.inner == "")
	}
	for _, n := range l.nodes {
		if n.ev.Kind == "llm" && n.inner == "" {
			req++
		}
		if n.call == nil {
			continue
		}
		key := retryKey(n)
		for j := len(window) - 1; j >= 0; j-- {
			prev := window[j]
			if prev.key != key {
				continue
			}
			// Only the nearest attempt counts: a success in between
			// means this call is not a retry.
			if prev.n.ev.Err && b.failureKnown(prev.n, prev.req, n, req, hasReqs) {
				n.retryOf = prev.n
				n.ev.Attempt = max(prev.n.ev.Attempt, 1) + 1
			}
			break
		}
		if len(window) == retryWindow {
			window = window[:copy(window, window[1:])]
		}
		window = append(window, attempt{n, key, req})
	}
}

// failureKnown tells whether the failure of prev was known when n was
// sent: its last result came first in the input, or, without a result,
// n belongs to a later model request.
func (b *build) failureKnown(prev *node, prevReq int, n *node, req int, hasReqs bool) bool {
	last := -1
	if ri, ok := b.resultOf(prev.lane.id, prev.call.ID); ok {
		last = ri
	}
	for _, ci := range prev.conts {
		if ri, ok := b.resultOf(prev.lane.id, b.in[ci].Call.ID); ok && ri > last {
			last = ri
		}
	}
	if last >= 0 {
		return last < n.idx
	}
	return !hasReqs || prevReq != req
}

type callKey struct {
	tool, verb, server, mcpTool, repo, path, label string
}

// The first target is the call's, or the first its result revealed (a
// Codex shell command's parsed reads): two commands that read different
// files are different calls, not retries of each other.
func retryKey(n *node) callKey {
	c := n.call
	k := callKey{tool: c.Tool, verb: c.Verb, server: c.Server, mcpTool: c.MCPTool}
	if len(n.targets) > 0 {
		t := n.targets[0]
		k.repo, k.path, k.label = t.Repo, t.Path, t.Label
	}
	return k
}

// delays adds a delay event right after a tool call of 30 s or more and a
// model request whose latency is 60 s or more. A tool that waits for the
// user is not slow: its time is the user's, as in a stall.
func delays(l *lane) {
	for _, n := range l.nodes {
		switch {
		case n.call != nil && n.call.AwaitsUser:
		case n.call != nil && n.dur != nil && *n.dur >= toolDelayMs:
			cause := "tool"
			if n.ev.Kind == "subagent" {
				cause = "subagent"
			}
			n.addDelay(cause, *n.dur)
		case n.ev.Kind == "llm" && n.ev.Latency != nil && *n.ev.Latency >= llmDelayMs:
			n.addDelay("llm", *n.ev.Latency)
		}
	}
}

// addDelay puts the delay first among the follow-ups: right after its cause.
func (n *node) addDelay(cause string, ms int64) {
	d := &node{idx: n.idx, lane: n.lane, seq: -1, ref: n,
		ev: Event{Kind: "delay", T: n.ev.T, Model: n.ev.Model, Cause: cause, Ms: ms}}
	if n.ev.Kind == "subagent" {
		d.ev.Model = ""
	}
	n.follow = append([]*node{d}, n.follow...)
}

// stalls adds a stall delay where the main lane was idle for 120 s or more
// between two consecutive events while not waiting on the user. Idle time
// excludes a running tool call (the lane is busy until call time + dur) and
// the next request's own latency (the model was working); waiting on the
// user is: after a turn end, after a final response (a request with no tool
// calls), after an interrupt, and before a user event.
func (b *build) stalls(main *lane) {
	if !b.timed {
		return
	}
	var prev *node
	busyUntil := int64(-1)
	waiting := false
	for _, n := range main.nodes {
		switch {
		case n.inner == "turn_end":
			waiting = true
			continue
		case n.inner != "", n.ev.Kind == "model_switch", n.side:
			// A switch announces the request that follows: it is no
			// activity of its own. A side request (a compaction's
			// summary, the client's own) is not the agent's work.
			continue
		}
		if prev != nil && !waiting && n.ev.Kind != "user" {
			start := n.ev.T
			if n.ev.Kind == "llm" && n.ev.Latency != nil {
				start -= *n.ev.Latency
			}
			from := max(prev.ev.T, busyUntil)
			if idle := start - from; idle >= stallDelayMs {
				d := &node{idx: prev.idx, lane: main, seq: -1, ref: prev,
					ev: Event{Kind: "delay", T: prev.ev.T, Model: prev.ev.Model, Cause: "stall", Ms: idle}}
				if prev.ev.Kind == "subagent" {
					d.ev.Model = ""
				}
				prev.follow = append(prev.follow, d)
			}
		}
		prev = n
		waiting = (n.ev.Kind == "llm" && n.ev.ToolCalls == 0) ||
			(n.ev.Kind == "error" && n.ev.ErrClass == "interrupted")
		if n.call != nil && n.dur != nil {
			busyUntil = max(busyUntil, n.ev.T+*n.dur)
		}
	}
}
