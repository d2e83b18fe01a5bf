package postgres

import (
	"slices"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

// sessionRow is a map's summary as the sessions table's typed columns.
type sessionRow struct {
	sessionID, agent, outcome, pathMode, producer, contentHash string
	repo, remote                                               any // NULL without a repo
	repos, models                                              []string
	unpriced                                                   []string // models whose tokens have no price
	startedAt                                                  any      // NULL without a start
	durationMs, tokens, in, cw, cr, out                        int64
	cost                                                       float64
	calls, requests, errors, userTurns, subagents              int
	filesTouched, commits, prs                                 int
	truncated                                                  bool
	events                                                     []mapfile.Event
	files                                                      []mapfile.File
}

func rowOf(m *mapfile.Map) sessionRow {
	s := m.Session
	r := sessionRow{
		sessionID: s.ID, agent: s.AgentTool, outcome: s.Outcome, pathMode: s.PathMode, producer: s.CLIVersion,
		contentHash: m.ContentHash, models: nonNil(s.Models), durationMs: s.DurationMs,
		tokens: m.Totals.Tokens, cost: m.Totals.CostUSD, calls: m.Totals.Calls, requests: m.Totals.Requests,
		errors: m.Totals.Errors, userTurns: m.Totals.UserTurns, subagents: m.Totals.Subagents,
		filesTouched: m.Totals.FilesTouched, commits: m.Totals.Commits, prs: m.Totals.PRsCreated,
		truncated: s.Truncated, events: m.Events, files: m.Files, repos: []string{},
	}
	r.unpriced = unpricedModels(m)
	for _, rp := range m.Repos {
		r.repos = append(r.repos, rp.Name)
	}
	if len(m.Repos) > 0 {
		r.repo, r.remote = nullable(m.Repos[0].Name), nullable(m.Repos[0].Remote)
	}
	if t, ok := m.Start(); ok {
		r.startedAt = t
	} else {
		r.startedAt = (*time.Time)(nil)
	}
	// Tokens by kind are the sums over the model requests; totals.tokens
	// is the map's own figure.
	for i := range m.Events {
		e := &m.Events[i]
		r.in += e.In
		r.cw += e.CW
		r.cr += e.CR
		r.out += e.Out
	}
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// unpricedModels names the models whose tokens have no price in the map,
// as `agentmap usage` and the report name them (a request that names no
// model is "unknown"): the views count a session whose cost leaves them
// out as unpriced, never as a session that cost nothing. The price table
// that decides is this machine's, which the server does not have.
func unpricedModels(m *mapfile.Map) []string {
	out := []string{}
	for _, name := range m.UnpricedModels("") {
		if name == "" {
			name = "unknown"
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
