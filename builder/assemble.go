package builder

import (
	"slices"
	"sort"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/builder/redact"
)

// assemble resolves links to seqs and writes every part of the map.
func (b *build) assemble(facts event.Session) *Map {
	render := redact.NewRenderer(b.opts.PathMode, b.opts.HashKey)
	m := &Map{Schema: Schema, nativeID: facts.NativeID}
	// A session names a few models over thousands of requests, and a
	// lookup matches the table's patterns: one lookup per model.
	type priceHit struct {
		p  prices.Price
		ok bool
	}
	priceOf := map[string]priceHit{}
	for _, n := range b.all {
		n.lane.events++
		if n.seq >= 0 {
			n.lane.kept++
		}
		if n.ev.Kind == "llm" {
			hit, seen := priceOf[n.ev.Model]
			if !seen {
				hit.p, hit.ok = b.prices.Lookup(n.ev.Model)
				priceOf[n.ev.Model] = hit
			}
			if hit.ok {
				n.ev.Cost = hit.p.Cost(n.priced)
			} else if n.priced.Prompt()+n.priced.Out > 0 && !slices.Contains(m.Unpriced, n.ev.Model) {
				m.Unpriced = append(m.Unpriced, n.ev.Model)
			}
		}
		if n.ev.Kind == "error" {
			switch n.ev.Source {
			case "llm", "hook", "orchestration", "tool", "mcp":
			default:
				n.ev.Source = "orchestration"
			}
		}
	}

	cat := newCatalog(render, b.repoInfo)
	seen := 0
	for _, n := range b.sorted {
		if seen == len(b.kept) {
			break // repos declared after the last kept event are left out
		}
		if n.inner == "repo" {
			cat.repo(n.repoKey)
		}
		if n.seq < 0 {
			continue
		}
		seen++
		e := &n.ev
		e.Seq = n.seq
		e.Agent = laneName(n.lane.id)
		if hasTargets(e.Kind) {
			e.Targets = make([]Target, len(n.targets))
			for i, t := range n.targets {
				e.Targets[i] = cat.target(t, n.seq)
			}
		}
		if n.commitKey != "" {
			e.Repo = cat.repo(n.commitKey)
		}
		if n.retryOf != nil && n.retryOf.seq >= 0 {
			s := n.retryOf.seq
			e.RetryOf = &s
		}
		if n.ref != nil && n.ref.seq >= 0 {
			s := n.ref.seq
			e.Ref = &s
		}
	}
	m.Tasks = tasks(b.kept)
	m.Repos = nonNil(cat.repos)
	m.Files = nonNil(cat.files)
	m.PRs = b.prs()
	m.Totals = b.totals()
	m.Agents = b.agents()
	listed := make(map[string]bool, len(m.Agents))
	for _, a := range m.Agents {
		listed[a.ID] = true
	}
	m.Events = makeEvents(len(b.kept))
	for i, n := range b.kept {
		m.Events[i] = n.ev
		// child names an agent of agents[]: a lane whose log is missing
		// (or whose events are all past the cap) is not named.
		if e := &m.Events[i]; e.Child != "" && !listed[e.Child] {
			e.Child = ""
		}
	}
	m.Session = b.session(facts, render)
	// Any lane's confirmed PR makes the session's outcome; otherwise the
	// main agent's outcome is the session's.
	m.Session.Outcome = m.Agents[0].Outcome
	if len(b.prCreations) > 0 {
		m.Session.Outcome = OutcomePRCreated
	}
	return m
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// prs lists the kept PR creations; a later confirmed merge or close of the
// same PR among the kept events updates its state.
func (b *build) prs() []PR {
	out := []PR{}
	for _, n := range b.prCreations {
		if n.seq < 0 {
			continue
		}
		out = append(out, PR{Provider: n.pr.Provider, Repo: n.pr.Repo, Number: n.pr.Number,
			URL: n.pr.URL, Seq: n.seq, State: "open"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	for _, n := range b.kept {
		var state string
		switch n.ev.Kind {
		case "pr_merge":
			state = "merged"
		case "pr_close":
			state = "closed"
		default:
			continue
		}
		for i := range out {
			if out[i].Repo == n.ev.Repo && out[i].Number == n.ev.Number && out[i].Seq < n.seq {
				out[i].State = state
			}
		}
	}
	return out
}

// agents lists the main agent and every lane with a kept event. Counters,
// times and outcomes cover the lane's whole session, like totals.
func (b *build) agents() []Agent {
	perLane := make(map[*lane][]*Event, len(b.lanes))
	for _, l := range b.lanes {
		perLane[l] = make([]*Event, 0, l.events) // counted by assemble
	}
	for _, n := range b.all {
		perLane[n.lane] = append(perLane[n.lane], &n.ev)
	}
	prLanes := map[*lane]bool{}
	for _, n := range b.prCreations {
		prLanes[n.lane] = true
	}
	var out []Agent
	for _, l := range b.lanes {
		if !l.listed() {
			continue
		}
		a := Agent{ID: laneName(l.id), Kind: "main"}
		if l.id != "" {
			a.Parent, a.Kind = "main", "subagent"
			a.SubagentType = l.satype
			a.Model = l.agentModel()
			if l.launcher != nil && l.launcher.seq >= 0 {
				s := l.launcher.seq
				a.LaunchSeq = &s
			}
		}
		evs := perLane[l]
		if len(evs) == 0 && l.launcher != nil {
			// A lane without a log of its own spans its launch.
			a.Start, a.End = l.launcher.ev.T, l.launcher.ev.T
		}
		for i, e := range evs {
			if i == 0 || e.T < a.Start {
				a.Start = e.T
			}
			a.End = max(a.End, e.T)
			switch {
			case isCallKind(e.Kind):
				a.Calls++
			case e.Kind == "llm":
				a.Requests++
				a.Tokens += e.In + e.CW + e.CR + e.Out
				a.Cost += e.Cost
			}
		}
		a.Cost = roundCost(a.Cost)
		a.Outcome = outcome(evs, prLanes[l])
		out = append(out, a)
	}
	return out
}

func (b *build) session(facts event.Session, render *redact.Renderer) Session {
	tool := facts.AgentTool
	if tool == "" {
		tool = "unknown"
	}
	s := Session{
		ID:         "local:" + tool + ":" + facts.NativeID,
		AgentTool:  tool,
		CLIVersion: b.opts.Producer,
		PathMode:   string(render.Mode()),
		Truncated:  len(b.all) > len(b.kept),
		Role:       facts.Role,
		Models:     []string{},
	}
	if s.CLIVersion == "" {
		s.CLIVersion = "agentmap"
	}
	if s.Role == "" {
		s.Role = "root"
	}
	if facts.ParentNativeID != "" {
		s.ParentSessionID = "local:" + tool + ":" + facts.ParentNativeID
	}
	switch {
	case b.timed:
		s.StartedAt = isoMillis(b.base)
		s.DurationMs = b.last - b.base
	case facts.StartT > 0:
		s.StartedAt = isoMillis(facts.StartT)
		if facts.EndT >= facts.StartT {
			s.DurationMs = facts.EndT - facts.StartT
		}
	case facts.EndT > 0:
		s.StartedAt = isoMillis(facts.EndT)
	}
	seen := map[string]bool{}
	for _, n := range b.all {
		if n.ev.Kind == "llm" && n.ev.Model != "" && !seen[n.ev.Model] {
			seen[n.ev.Model] = true
			s.Models = append(s.Models, n.ev.Model)
		}
	}
	return s
}
