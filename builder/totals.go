package builder

import (
	"slices"
)

// totals counts the whole session (every map event, kept or not).
func (b *build) totals() Totals {
	t := Totals{ErrorsByClass: map[string]int{}}
	var latencies []int64
	files := map[fileKey]bool{}
	created := map[fileKey]bool{}
	deleted := map[fileKey]bool{}
	for _, n := range b.all {
		e := &n.ev
		if e.Err {
			t.Errors++
			t.ErrorsByClass[e.ErrClass]++
			switch {
			case e.Kind == "error":
				switch e.Source {
				case "tool":
					t.ErrorsBySource.Tool++
				case "mcp":
					t.ErrorsBySource.MCP++
				case "llm":
					t.ErrorsBySource.LLM++
				case "hook":
					t.ErrorsBySource.Hook++
				default:
					t.ErrorsBySource.Orchestration++
				}
			case e.Kind == "mcp":
				t.ErrorsBySource.MCP++
			case e.Kind == "subagent":
				t.ErrorsBySource.Orchestration++
			default:
				t.ErrorsBySource.Tool++
			}
		}
		if n.retryOf != nil {
			t.Retries++
		}
		if isCallKind(e.Kind) {
			t.Calls++
			for _, tg := range n.targets {
				if !isFileTarget(tg) {
					continue
				}
				k := fileKey{tg.Repo, tg.Path}
				files[k] = true
				switch tg.Op {
				case "create":
					created[k] = true
				case "delete":
					deleted[k] = true
				}
			}
			if n.pr != nil {
				t.PRsCreated++
			}
			continue
		}
		switch e.Kind {
		case "llm":
			t.Requests++
			t.Tokens += e.In + e.CW + e.CR + e.Out
			t.OutputTokens += e.Out
			t.CostUSD += e.Cost
			if n.lane.id == "" {
				t.MaxContext = max(t.MaxContext, e.In+e.CW+e.CR)
			}
			if e.Latency != nil {
				latencies = append(latencies, *e.Latency)
			}
		case "user":
			t.UserTurns++
			t.PromptChars += e.Chars
			t.PromptImages += e.Images
			t.PromptURLs += e.URLs
		case "delay":
			t.Delays++
			t.DelayMs += e.Ms
		case "compaction":
			t.Compactions++
		case "commit":
			t.Commits++
		case "pr_merge":
			t.PRsMerged++
		case "pr_close":
			t.PRsClosed++
		case "pr_comment":
			t.PRComments++
		case "ticket":
			if e.Action == "create" {
				t.TicketsCreated++
			} else {
				t.TicketsUpdated++
			}
		case "artifact":
			t.Artifacts++
		case "skill_write":
			if e.Action == "create" {
				t.SkillsCreated++
			} else {
				t.SkillsUpdated++
			}
		case "model_switch":
			t.ModelSwitches++
		}
	}
	t.CostUSD = roundCost(t.CostUSD)
	t.Tasks = t.UserTurns
	t.FilesTouched, t.FilesCreated, t.FilesDeleted = len(files), len(created), len(deleted)
	for _, l := range b.lanes[1:] {
		if l.counted() {
			t.Subagents++
		}
	}
	slices.Sort(latencies)
	t.LLMLatencyP50 = nearestRank(latencies, 50)
	t.LLMLatencyP95 = nearestRank(latencies, 95)
	return t
}

// nearestRank is the p-th percentile of sorted values by the nearest-rank
// method (0 when there are none).
func nearestRank(sorted []int64, p int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}
