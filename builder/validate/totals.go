package validate

// notCalls are the event kinds that totals.calls leaves out by the letter
// of the format page. The output kinds (commit, pr_merge, ticket, …) that
// remain are derived from a tool call's result rather than being calls of
// their own, so a producer may count only the tool-call kinds instead;
// both readings are accepted.
var notCalls = map[string]bool{"llm": true, "user": true, "compaction": true, "error": true, "delay": true}

// callKinds are the tool-call kinds.
var callKinds = map[string]bool{
	"read": true, "search": true, "edit": true, "exec": true, "verify": true,
	"mcp": true, "skill": true, "subagent": true, "web": true, "tool": true,
}

// sums are the totals an event list implies.
type sums struct {
	calls, toolCalls, requests, userTurns, errors, compactions, tokens, outputTokens int64
	retries, delays, modelSwitches, commits                                          int64
	promptChars, promptImages, promptURLs                                            int64
	delayMs                                                                          float64
	models                                                                           map[string]bool
}

func (c *checker) sum() sums {
	s := sums{models: map[string]bool{}}
	for _, v := range c.events {
		ev := object(v)
		kind, _ := str(ev["kind"])
		if kind == "" {
			continue
		}
		if !notCalls[kind] {
			s.calls++
		}
		if callKinds[kind] {
			s.toolCalls++
		}
		if boolean(ev["err"]) {
			s.errors++
		}
		if ev["retryOf"] != nil {
			s.retries++
		}
		get := func(f string) int64 { n, _ := integer(ev[f]); return n }
		switch kind {
		case "llm":
			s.requests++
			s.tokens += get("in") + get("cw") + get("cr") + get("out")
			s.outputTokens += get("out")
			if m, ok := str(ev["model"]); ok {
				s.models[m] = true
			}
		case "user":
			s.userTurns++
			s.promptChars += get("chars")
			s.promptImages += get("images")
			s.promptURLs += get("urls")
		case "compaction":
			s.compactions++
		case "delay":
			s.delays++
			ms, _ := number(ev["ms"])
			s.delayMs += ms
		case "model_switch":
			s.modelSwitches++
		case "commit":
			s.commits++
		}
	}
	return s
}

// totals checks the session-wide counters against the events. A truncated
// map keeps only its earliest events while totals count the whole session,
// so there is nothing to compare then.
func (c *checker) totals(top map[string]any) {
	session := object(top["session"])
	if boolean(session["truncated"]) {
		return
	}
	s := c.sum()
	totals := object(top["totals"])
	for _, want := range []struct {
		field string
		n     int64
	}{
		{"requests", s.requests}, {"userTurns", s.userTurns},
		{"errors", s.errors}, {"compactions", s.compactions}, {"tokens", s.tokens},
		{"outputTokens", s.outputTokens}, {"retries", s.retries}, {"delays", s.delays},
		{"modelSwitches", s.modelSwitches}, {"commits", s.commits},
		{"promptChars", s.promptChars}, {"promptImages", s.promptImages}, {"promptUrls", s.promptURLs},
	} {
		raw, present := totals[want.field]
		if !present {
			continue
		}
		got, ok := integer(raw)
		if ok && got != want.n {
			c.add(ptr("totals", want.field), RuleTotals, "is %d, the events give %d", got, want.n)
		}
	}
	if got, ok := integer(totals["calls"]); ok && got != s.calls && got != s.toolCalls {
		c.add(ptr("totals", "calls"), RuleTotals, "is %d, the events give %d tool calls (%d counting output events)", got, s.toolCalls, s.calls)
	}
	if raw, present := totals["delayMs"]; present {
		if got, ok := number(raw); ok && got != s.delayMs {
			c.add(ptr("totals", "delayMs"), RuleTotals, "is %v, the delay events give %v", got, s.delayMs)
		}
	}
	if raw, present := totals["tasks"]; present && c.hasTask {
		if got, ok := integer(raw); ok && got != int64(len(c.tasks)) {
			c.add(ptr("totals", "tasks"), RuleTotals, "is %d, tasks lists %d", got, len(c.tasks))
		}
	}
	if raw, present := totals["subagents"]; present {
		lanes := int64(0)
		for _, a := range array(top["agents"]) {
			if object(a)["kind"] == "subagent" {
				lanes++
			}
		}
		if got, ok := integer(raw); ok && top["agents"] != nil && got != lanes {
			c.add(ptr("totals", "subagents"), RuleTotals, "is %d, agents lists %d subagent lanes", got, lanes)
		}
	}
	if models, present := session["models"]; present {
		listed := map[string]bool{}
		for _, m := range array(models) {
			if s, ok := str(m); ok {
				listed[s] = true
			}
		}
		for m := range s.models {
			if !listed[m] {
				c.add(ptr("session", "models"), RuleTotals, "misses a model that served a request")
				break
			}
		}
	}
}
