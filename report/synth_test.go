package report

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

// synthMap makes a plausible map of n events from a seed: lanes, files,
// shell verbs, MCP calls, model requests, errors, retries and delays, so
// that a benchmark exercises every part of the page. Names are made up.
func synthMap(seed uint64, n int) *Map {
	r := rand.New(rand.NewPCG(seed, 7))
	agents := []string{"claude-code", "codex", "cursor"}
	models := map[string][]string{"claude-code": {"claude-sonnet-4-5", "claude-opus-4-6", "claude-haiku-4-5"}, "codex": {"gpt-5-codex", "gpt-5.5"}, "cursor": {"claude-sonnet-4-5", "gpt-5"}}
	verbs := []string{"go test", "go build", "git status", "git diff", "npm test", "npm run", "pytest", "ls", "grep", "make", "cargo test", "rg"}
	kinds := []string{"read", "read", "read", "search", "edit", "edit", "exec", "exec", "verify", "mcp", "tool", "web", "skill"}
	agent := agents[r.IntN(len(agents))]
	start := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(90*24*60)) * time.Minute)
	repo := fmt.Sprintf("service-%02d", r.IntN(30))
	m := &Map{Schema: "agentplay/v1", Session: mapfile.Session{ID: fmt.Sprintf("local:%s:synthetic-%08d", agent, seed), AgentTool: agent,
		StartedAt: start.Format(time.RFC3339Nano), PathMode: "relative", Outcome: []string{"completed", "verified", "incomplete", "unresolved_errors", "pr_created"}[r.IntN(5)]},
		Repos: []mapfile.Repo{{ID: "r0", Name: repo}}}
	for f := range 20 + r.IntN(60) {
		m.Files = append(m.Files, mapfile.File{ID: f, Repo: "r0", Path: fmt.Sprintf("pkg/mod%02d/file%03d.go", f%12, r.IntN(200))})
	}
	lanes := []string{"main"}
	m.Agents = append(m.Agents, mapfile.Agent{ID: "main", Kind: "main"})
	for s := range r.IntN(4) {
		id := fmt.Sprintf("sa-%012x", r.Uint64()&0xffffffffffff)
		lanes = append(lanes, id)
		m.Agents = append(m.Agents, mapfile.Agent{ID: id, Kind: "subagent", Parent: "main", SubagentType: []string{"Explore", "general-purpose", "Plan"}[s%3]})
	}
	model := models[agent][r.IntN(len(models[agent]))]
	m.Session.Models = []string{model}
	t := int64(0)
	lastFail := map[string]int{}
	for i := range n {
		t += int64(200 + r.IntN(8000))
		lane := lanes[0]
		if len(lanes) > 1 && r.IntN(4) == 0 {
			lane = lanes[1+r.IntN(len(lanes)-1)]
		}
		e := mapfile.Event{Seq: i, T: t, Agent: lane, Model: model}
		switch {
		case i%40 == 0:
			e.Kind, e.Chars = "user", 20+r.IntN(2000)
			m.Totals.UserTurns++
		case i%3 == 0:
			lat := int64(500 + r.IntN(20000))
			e.Kind, e.In, e.CW, e.CR, e.Out, e.Latency = "llm", int64(r.IntN(4000)), int64(r.IntN(20000)), int64(r.IntN(90000)), int64(r.IntN(3000)), &lat
			e.Cost = roundUSD(float64(e.In*3+e.CW*375/100+e.CR*3/10+e.Out*15) / 1e6) // maps keep costs to the micro-dollar
			m.Totals.Requests++
			m.Totals.Tokens += e.In + e.CW + e.CR + e.Out
			m.Totals.OutputTokens += e.Out
			m.Totals.CostUSD += e.Cost
			m.Totals.MaxContext = max(m.Totals.MaxContext, e.In+e.CW+e.CR)
		case i%97 == 0:
			e.Kind, e.Cause, e.Ms = "delay", []string{"tool", "llm", "stall"}[r.IntN(3)], int64(30000+r.IntN(200000))
			m.Totals.Delays++
			m.Totals.DelayMs += e.Ms
		default:
			e.Kind = kinds[r.IntN(len(kinds))]
			d := int64(r.IntN(4000))
			e.Dur = &d
			switch e.Kind {
			case "exec", "verify":
				e.Tool, e.Verb, e.Cat = "Bash", verbs[r.IntN(len(verbs))], "shell"
			case "mcp":
				e.Server, e.Tool, e.Cat = []string{"github", "linear", "browser"}[r.IntN(3)], []string{"search", "get_issue", "navigate"}[r.IntN(3)], "mcp"
			case "web":
				e.Tool, e.Host, e.Cat = "WebFetch", "docs.example.org", "web"
			case "skill":
				e.Tool, e.Skill, e.Cat = "Skill", "release-notes", "skill"
			default:
				e.Tool, e.Cat = map[string]string{"read": "Read", "search": "Grep", "edit": "Edit", "tool": "TodoWrite"}[e.Kind], "file"
				f := r.IntN(len(m.Files))
				touch := map[string]string{"read": "read", "search": "hit", "edit": "edit", "tool": "hit"}[e.Kind]
				e.Targets = []mapfile.Target{{File: &f, Touch: touch}}
				switch touch {
				case "read":
					m.Files[f].Reads++
				case "edit":
					m.Files[f].Edits++
				default:
					m.Files[f].Hits++
				}
			}
			key := e.Kind + e.Verb + e.Server
			if j, ok := lastFail[key]; ok && r.IntN(2) == 0 {
				e.RetryOf = &j
				delete(lastFail, key)
				m.Totals.Retries++
			}
			if r.IntN(12) == 0 {
				e.Err, e.ErrClass = true, []string{"exit_code", "timeout", "not_found"}[r.IntN(3)]
				if e.Kind == "exec" || e.Kind == "verify" {
					x := 1
					e.ExitCode = &x
				}
				lastFail[key] = i
				if m.Totals.ErrorsBySource == nil {
					m.Totals.ErrorsBySource, m.Totals.ErrorsByClass = map[string]int{}, map[string]int{}
				}
				src := "tool"
				if e.Kind == "mcp" {
					src = "mcp"
				}
				m.Totals.ErrorsBySource[src]++
				m.Totals.ErrorsByClass[e.ErrClass]++
				m.Totals.Errors++
			}
			m.Totals.Calls++
		}
		m.Events = append(m.Events, e)
	}
	m.Session.DurationMs = t
	return m
}

func synthMaps(n int) []*Map {
	maps := make([]*Map, n)
	for i := range maps {
		maps[i] = synthMap(uint64(i), 20+int(uint64(i)*2654435761%200))
	}
	return maps
}
