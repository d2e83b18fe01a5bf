package claude

import (
	"sort"

	"github.com/agentmap/agentmap/builder/event"
)

// costStateLine is Claude Code's cost-state record: the running total of
// what the session's process was billed, per model, including requests no
// transcript line shows (the WebFetch page summary on the small model,
// and the like). Only numbers are decoded.
type costStateLine struct {
	StartTime    int64   `json:"startTime"`
	TotalCostUSD float64 `json:"totalCostUSD"`
	ModelUsage   map[string]struct {
		Input      int64 `json:"inputTokens"`
		Output     int64 `json:"outputTokens"`
		CacheRead  int64 `json:"cacheReadInputTokens"`
		CacheWrite int64 `json:"cacheCreationInputTokens"`
		Write1h    int64 `json:"cacheCreationEphemeral1hInputTokens"`
	} `json:"modelUsage"`
}

// costState emits the client's total as a KindClientTotal record; the
// builder turns what it holds beyond the transcript's requests into side
// requests. A line that does not decode is skipped: it is bookkeeping.
func (p *Parser) costState(line []byte, out []event.Event) []event.Event {
	var cs costStateLine
	if decode(line, &cs) != nil || cs.StartTime <= 0 || len(cs.ModelUsage) == 0 {
		return out
	}
	ct := &event.ClientTotal{Process: cs.StartTime, CostUSD: cs.TotalCostUSD}
	for m, u := range cs.ModelUsage {
		model := ident(m)
		if model == "" {
			continue
		}
		ct.Models = append(ct.Models, event.ModelTotal{Model: model, In: max(u.Input, 0), CW: max(u.CacheWrite, 0),
			CW1h: min(max(u.Write1h, 0), max(u.CacheWrite, 0)), CR: max(u.CacheRead, 0), Out: max(u.Output, 0)})
	}
	sort.Slice(ct.Models, func(i, j int) bool { return ct.Models[i].Model < ct.Models[j].Model })
	return append(out, event.Event{Kind: event.KindClientTotal, T: p.st.T, Total: ct})
}
