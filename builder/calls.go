package builder

import (
	"slices"
	"sort"

	"github.com/agentmap/agentmap/builder/event"
)

// complete pairs a call node with its result and the results of the calls
// that continue it, then adds the outputs those results confirm.
func (b *build) complete(n *node) {
	var outputs []*event.Result
	if ri, ok := b.resultOf(n.lane.id, n.call.ID); ok {
		r := b.in[ri].Result
		n.answered = true
		n.ev.Err = r.Err
		n.ev.ErrClass = r.ErrClass
		n.ev.ExitCode = r.ExitCode
		n.ev.OutBytes = b.int64p(r.OutBytes)
		n.setDur(b.duration(n.idx, ri, r))
		n.child = r.Child
		n.addTargets(r.Targets)
		outputs = append(outputs, r)
	}
	for _, ci := range n.conts {
		c := b.in[ci].Call
		ri, ok := b.resultOf(n.lane.id, c.ID)
		if !ok {
			continue
		}
		r := b.in[ri].Result
		n.answered = true
		// The continuation's output is more output of the same process;
		// its exit status, once known, is the process's.
		out := r.OutBytes
		if n.ev.OutBytes != nil {
			out += *n.ev.OutBytes
		}
		n.ev.OutBytes = b.int64p(out)
		if r.ExitCode != nil || r.Err {
			n.ev.Err, n.ev.ErrClass, n.ev.ExitCode = r.Err, r.ErrClass, r.ExitCode
		}
		if d := b.duration(n.idx, ri, r); d != nil && (n.dur == nil || *d > *n.dur) {
			n.setDur(d)
		}
		outputs = append(outputs, r)
	}
	if !n.answered && n.call.ID != "" && b.hasResults && n.lane.lastActivity > n.idx {
		// The agent went on without an answer: the call never returned.
		n.ev.Err, n.ev.ErrClass = true, "no_result"
	}
	if n.ev.Err && n.ev.ErrClass == "" {
		n.ev.ErrClass = "other"
	}
	if !n.ev.Err {
		n.ev.ErrClass = ""
	}
	if n.child == "" {
		n.child = b.launches[n.call.ID]
	}
	for _, r := range outputs {
		b.outputs(n, r)
	}
	if sk := n.call.SkillWrite; sk != "" && !n.ev.Err {
		action := "update"
		for _, t := range n.call.Targets {
			if t.Op == "create" {
				action = "create"
			}
		}
		n.addFollow("skill_write", func(e *Event) { e.Name, e.Action = sk, action })
	}
}

// addTargets adds the targets a result revealed (what a shell command
// read or listed, as the client parsed it) that the call does not already
// name. Only kinds that carry targets get them.
func (n *node) addTargets(ts []event.Target) {
	if len(ts) == 0 || !hasTargets(n.ev.Kind) {
		return
	}
	merged := slices.Clip(n.targets)
	for _, t := range ts {
		if !slices.ContainsFunc(merged, func(o event.Target) bool {
			return o.Repo == t.Repo && o.Path == t.Path && o.Label == t.Label
		}) {
			merged = append(merged, t)
		}
	}
	n.targets = merged
}

// duration is the tool's own duration when reported, else the time from
// the call to its result when both are known.
func (b *build) duration(callIdx, resIdx int, r *event.Result) *int64 {
	if r.DurMs > 0 {
		return b.int64p(r.DurMs)
	}
	if !b.timed || b.in[callIdx].T <= 0 || b.in[resIdx].T <= 0 {
		return nil
	}
	d := b.filled[resIdx] - b.filled[callIdx]
	return b.int64p(max(d, 0))
}

func (n *node) setDur(d *int64) {
	n.dur = d
	n.ev.Dur = d
}

// outputs adds what a result confirms: a PR creation marks the call itself
// (vcs.action pr_create, a prs[] entry); other outputs are events of their
// own right after the call, at its time.
func (b *build) outputs(n *node, r *event.Result) {
	if p := r.PR; p != nil {
		switch p.Action {
		case "create":
			if n.pr == nil {
				n.pr = p
				b.prCreations = append(b.prCreations, n)
				if n.ev.VCS == nil {
					n.ev.VCS = &VCS{Provider: p.Provider}
				}
				n.ev.VCS.Action = "pr_create"
				if n.ev.VCS.Repo == "" {
					n.ev.VCS.Repo = p.Repo
				}
				if n.ev.VCS.Number == 0 {
					n.ev.VCS.Number = p.Number
				}
			}
		case "merge", "close", "comment":
			n.addFollow("pr_"+p.Action, func(e *Event) { e.Repo, e.Number, e.URL = p.Repo, p.Number, p.URL })
		}
	}
	if c := r.Commit; c != nil && c.SHA != "" {
		if of := b.calls[c.Of]; c.Of != "" && of != nil && of.lane == n.lane {
			// A quiet commit confirmed by a later command: the commit
			// is the call that made it.
			n = of
		}
		f := n.addFollow("commit", func(e *Event) { e.SHA, e.Files, e.Ins, e.Del = c.SHA, c.Files, c.Ins, c.Del })
		f.commitKey = c.Repo
		if f.commitKey == "" {
			for _, t := range n.call.Targets {
				if t.Repo != "" && t.Path != "" {
					f.commitKey = t.Repo
					break
				}
			}
		}
		if f.commitKey == "" && len(b.repoInfo) == 1 {
			for k := range b.repoInfo {
				f.commitKey = k
			}
		}
	}
	if tk := r.Ticket; tk != nil {
		n.addFollow("ticket", func(e *Event) { e.Tracker, e.Action, e.ID = tk.Tracker, tk.Action, tk.ID })
	}
	if a := r.Artifact; a != nil && a.URL != "" {
		n.addFollow("artifact", func(e *Event) { e.URL, e.Version = a.URL, a.Version })
	}
}

// addFollow appends an event that follows n at its time.
func (n *node) addFollow(kind string, fill func(*Event)) *node {
	f := &node{idx: n.idx, lane: n.lane, seq: -1, ev: Event{Kind: kind, T: n.ev.T, Model: n.ev.Model}}
	fill(&f.ev)
	n.follow = append(n.follow, f)
	return f
}

// linkLanes resolves what crosses lanes: the lane each subagent call
// started, the call an error refers to, and each lane's launcher.
func (b *build) linkLanes() {
	for _, l := range b.lanes {
		for _, n := range l.nodes {
			if n.refCall != "" {
				n.ref = b.calls[n.refCall]
			}
			if n.ev.Kind == "subagent" && n.child != "" {
				if cl := b.laneIdx[n.child]; cl != nil && cl.id != "" && cl.launcher == nil {
					cl.launcher = n
				}
			}
		}
	}
	for _, l := range b.lanes[1:] {
		if l.launcher == nil && l.launchCallID != "" {
			if n := b.calls[l.launchCallID]; n != nil {
				l.launcher = n
				if n.child == "" {
					n.child = l.id
				}
			}
		}
	}
	b.pairLaunches()
	for _, l := range b.lanes[1:] {
		if l.satype == "" && l.launcher != nil && l.launcher.call != nil {
			l.satype = l.launcher.call.SubagentType
		}
	}
	for _, l := range b.lanes {
		for _, n := range l.nodes {
			if n.ev.Kind != "subagent" {
				continue
			}
			n.ev.Child = n.child
			// On a subagent event, model is the subagent's model.
			n.ev.Model = ""
			if cl := b.laneIdx[n.child]; cl != nil && n.child != "" {
				n.ev.Model = cl.agentModel()
			}
			if n.ev.Model == "" && n.call != nil {
				// No lane says which model served: the one asked for.
				n.ev.Model = n.call.SubagentModel
			}
		}
	}
}

// pairLaunches gives the lanes whose own log names no launch the places
// of the launched lanes that no log filled: a source that declares a lane
// at each launch but cannot tell which log belongs to it (Cursor) has both
// kinds. The k-th logged lane, by log start and then id, takes the k-th
// launch in its parent's order; the launched lane it replaces is not
// listed. Launched lanes left over stay, without events: the subagent ran,
// its log is not here.
func (b *build) pairLaunches() {
	var empty, logged []*lane
	for _, l := range b.lanes[1:] {
		switch {
		case l.launched && len(l.nodes) == 0 && l.launcher != nil:
			empty = append(empty, l)
		case !l.launched && len(l.nodes) > 0 && l.launcher == nil && l.launchCallID == "":
			logged = append(logged, l)
		}
	}
	if len(empty) == 0 || len(logged) == 0 {
		return
	}
	sort.SliceStable(empty, func(i, j int) bool {
		a, c := empty[i].launcher, empty[j].launcher
		if a.lane.rank != c.lane.rank {
			return a.lane.rank < c.lane.rank
		}
		return a.idx < c.idx
	})
	sort.SliceStable(logged, func(i, j int) bool {
		if logged[i].logStart != logged[j].logStart {
			return logged[i].logStart < logged[j].logStart
		}
		return logged[i].id < logged[j].id
	})
	for k := range min(len(empty), len(logged)) {
		e, l := empty[k], logged[k]
		l.launcher, l.launchCallID = e.launcher, e.launchCallID
		if l.satype == "" {
			l.satype = e.satype
		}
		if l.model == "" {
			l.model = e.model
		}
		e.launcher.child = l.id
		e.launcher, e.replaced = nil, true
	}
}

// listed says whether the lane is an agents[] entry: the main lane, a
// subagent lane with a kept event, and a launched lane whose log is not
// here (no events) whose launch is kept.
func (l *lane) listed() bool {
	switch {
	case l.id == "":
		return true
	case l.kept > 0:
		return true
	}
	return l.launched && l.events == 0 && !l.replaced && l.launcher != nil && l.launcher.seq >= 0
}

// counted says whether totals.subagents counts the lane: a subagent lane
// with events, or a launched lane without a log whose launch is an event.
func (l *lane) counted() bool {
	if l.id == "" {
		return false
	}
	return l.events > 0 || (l.launched && !l.replaced && l.launcher != nil)
}

// agentModel is the lane's declared model, else the model of its first
// request.
func (l *lane) agentModel() string {
	if l.model != "" {
		return l.model
	}
	return l.firstModel
}
