package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// served sums what the model servers answered for a set of scripts.
type served struct {
	requests int
	tokens   int64
}

// session is one session's expectations against its map.
type session struct {
	name   string // for messages
	native string
	tool   string // agentTool
	model  string
	e      *expect
	main   served // the main lane
	lanes  []lane // subagent lanes
	// role and parent, when set, are session.role and session.parentSessionId.
	role, parent string
	// llmErrors are error classes of failed model requests the client retried.
	llmErrors map[string]int
	// client is the client's own account of the session's cost and
	// tokens (Claude Code's cost-state), when it keeps one.
	client *clientTotal
	// side is how many of the main lane's requests were side requests
	// (compaction, titles) the client may have written no line for.
	side int
}

// clientTotal is what a client says a session cost it.
type clientTotal struct {
	usd    float64
	tokens int64
}

type lane struct {
	typ string
	served
}

func (s session) all() served {
	all := s.main
	for _, l := range s.lanes {
		all.requests += l.requests
		all.tokens += l.tokens
	}
	return all
}

// check compares one map with what its session's scripts made happen.
func check(t *testing.T, s session, m *agentMap) {
	t.Helper()
	errf := func(format string, args ...any) {
		t.Errorf("%s (%s): %s", s.name, s.native, fmt.Sprintf(format, args...))
	}
	if m == nil {
		errf("no map")
		return
	}
	if want := "local:" + s.tool + ":" + s.native; m.Session.ID != want {
		errf("session.id = %q, want %q", m.Session.ID, want)
	}
	if !slices.Contains(m.Session.Models, s.model) {
		errf("session.models = %v, want %s among them", m.Session.Models, s.model)
	}
	for _, other := range m.Session.Models {
		if other != s.model && strings.HasPrefix(other, s.model) {
			errf("session.models = %v: %s a second time, as %s", m.Session.Models, s.model, other)
		}
	}
	if s.role != "" && m.Session.Role != s.role {
		errf("session.role = %q, want %q", m.Session.Role, s.role)
	}
	if s.parent != "" && (m.Session.ParentSessionID == nil || *m.Session.ParentSessionID != s.parent) {
		errf("session.parentSessionId = %v, want %s", m.Session.ParentSessionID, s.parent)
	}
	all := s.all()
	if m.Totals.Requests != all.requests && (m.Totals.Requests > all.requests || m.Totals.Requests < all.requests-s.side) {
		errf("totals.requests = %d, the server answered %d (%d of them side requests)", m.Totals.Requests, all.requests, s.side)
	}
	if m.Totals.Tokens != all.tokens {
		errf("totals.tokens = %d, the server reported %d", m.Totals.Tokens, all.tokens)
	}
	if c := s.client; c != nil {
		// The map prices every billed request at list prices; the client
		// does the same. They must agree within 0.1% (per-request
		// rounding to 6 decimals is the only expected difference).
		if diff := m.Totals.CostUSD - c.usd; diff > 0.001*c.usd || -diff > 0.001*c.usd {
			errf("totals.costUsd = %.6f, the client's own cost-state says %.6f", m.Totals.CostUSD, c.usd)
		}
		if m.Totals.Tokens != c.tokens {
			errf("totals.tokens = %d, the client's own cost-state says %d", m.Totals.Tokens, c.tokens)
		}
		t.Logf("%s: map $%.6f, %d tokens; Claude Code's cost-state $%.6f, %d tokens", s.name, m.Totals.CostUSD,
			m.Totals.Tokens, c.usd, c.tokens)
	}
	if m.Totals.UserTurns != s.e.userTurns {
		errf("totals.userTurns = %d, want %d", m.Totals.UserTurns, s.e.userTurns)
	}
	if m.Totals.Compactions != s.e.compactions {
		errf("totals.compactions = %d, want %d", m.Totals.Compactions, s.e.compactions)
	}
	if m.Totals.Subagents != len(s.lanes) {
		errf("totals.subagents = %d, want %d", m.Totals.Subagents, len(s.lanes))
	}

	// Lanes: the main lane and each subagent lane served what their
	// scripts served.
	var subs []lane
	for _, a := range m.Agents {
		switch a.Kind {
		case "main":
			// Side requests the client wrote no line for are known only
			// from its running total, which says their tokens but not how
			// many they were: the map counts one per step of the total.
			if a.Requests > s.main.requests || a.Requests < s.main.requests-s.side || a.Tokens != s.main.tokens {
				errf("main lane: %d requests, %d tokens; the server answered %d requests, %d tokens",
					a.Requests, a.Tokens, s.main.requests, s.main.tokens)
			}
		case "subagent":
			if a.LaunchSeq == nil || *a.LaunchSeq >= len(m.Events) ||
				m.Events[*a.LaunchSeq].Kind != "subagent" || m.Events[*a.LaunchSeq].Child != a.ID {
				errf("lane %s: launchSeq %v is not the subagent event that started it", a.ID, a.LaunchSeq)
			}
			subs = append(subs, lane{a.SubagentType, served{a.Requests, a.Tokens}})
			if len(s.lanes) == 1 && s.lanes[0].typ == "" {
				subs[len(subs)-1].typ = "" // the client names no type
			}
		}
	}
	sortLanes(subs)
	want := append([]lane(nil), s.lanes...)
	sortLanes(want)
	if fmt.Sprint(subs) != fmt.Sprint(want) {
		errf("subagent lanes (type requests tokens) = %v, want %v", subs, want)
	}

	// Tool calls by kind and by the client's tool name.
	kinds := map[string]int{}
	tools := map[string]int{}
	var exits []int
	var skills []string
	servers := map[string]int{}
	calls := 0
	retried := 0
	for _, e := range m.Events {
		switch e.Kind {
		case "llm", "user", "error", "compaction", "delay", "model_switch", "commit", "pr_merge",
			"pr_close", "pr_comment", "ticket", "artifact", "skill_write":
			continue
		}
		calls++
		kinds[e.Kind]++
		if e.Kind == "mcp" {
			servers[e.Server]++
		}
		switch {
		case e.Kind == "skill":
			skills = append(skills, e.Skill)
		case e.Tool != "" && e.Kind != "subagent": // subagents and skills name no tool
			tools[e.Tool]++
		}
		if want, ok := s.e.outBytes[e.Verb]; ok && e.OutBytes != want {
			errf("%s %s: outBytes = %d, the command printed %d", e.Tool, e.Verb, e.OutBytes, want)
		}
		if e.Err && e.ExitCode != nil {
			exits = append(exits, *e.ExitCode)
		}
		if e.RetryOf != nil && *e.RetryOf < len(m.Events) {
			prev := m.Events[*e.RetryOf]
			if prev.Err && prev.Verb == e.Verb && !e.Err {
				retried++
			}
			// A retry repeats its attempt's first target: commands on
			// different files are not retries of each other.
			if a, b := firstTarget(prev.Targets), firstTarget(e.Targets); a != b {
				errf("event %d (%s %s) is a retry of event %d with another first target (%s, %s)", e.Seq, e.Tool, e.Verb, prev.Seq, b, a)
			}
		}
	}
	wantCalls := 0
	for _, n := range s.e.calls {
		wantCalls += n
	}
	if m.Totals.Calls != wantCalls || calls != wantCalls {
		errf("totals.calls = %d and %d call events, the scripts made %d", m.Totals.Calls, calls, wantCalls)
	}
	if fmt.Sprint(kinds) != fmt.Sprint(s.e.calls) {
		errf("calls by kind = %v, want %v", kinds, s.e.calls)
	}
	if fmt.Sprint(tools) != fmt.Sprint(s.e.tools) {
		errf("calls by tool = %v, want %v", tools, s.e.tools)
	}
	if fmt.Sprint(servers) != fmt.Sprint(s.e.servers) {
		errf("MCP calls by server = %v, want %v", servers, s.e.servers)
	}
	if fmt.Sprint(skills) != fmt.Sprint(s.e.skills) {
		errf("skills = %v, want %v", skills, s.e.skills)
	}
	sort.Ints(exits)
	wantExits := append([]int(nil), s.e.exits...)
	sort.Ints(wantExits)
	if fmt.Sprint(exits) != fmt.Sprint(wantExits) {
		errf("exit codes of failed commands = %v, want %v", exits, wantExits)
	}
	if s.e.retries > 0 && retried != s.e.retries {
		errf("%d passing retries of a failed command, want %d (totals.retries = %d)", retried, s.e.retries, m.Totals.Retries)
	}
	if got := m.Totals.ErrorsBySource["mcp"]; got != s.e.mcpErrors {
		errf("totals.errorsBySource.mcp = %d, want %d", got, s.e.mcpErrors)
	}
	if got := m.Totals.ErrorsBySource["hook"]; got != s.e.hookErrors {
		errf("totals.errorsBySource.hook = %d, want %d", got, s.e.hookErrors)
	}
	for class, n := range s.llmErrors {
		if got := m.Totals.ErrorsByClass[class]; got != n {
			errf("totals.errorsByClass[%s] = %d, want %d", class, got, n)
		}
	}

	// Files touched.
	var files []string
	for _, f := range m.Files {
		files = append(files, f.Path)
	}
	sort.Strings(files)
	if fmt.Sprint(files) != fmt.Sprint(s.e.fileList()) {
		errf("files = %v, want %v", files, s.e.fileList())
	}
	// Every file a shell command read, with its reads counted.
	if s.e.reads != nil {
		reads := map[string]int{}
		for _, f := range m.Files {
			if f.Reads > 0 {
				reads[f.Path] = f.Reads
			}
		}
		if fmt.Sprint(reads) != fmt.Sprint(s.e.reads) {
			errf("files[].reads = %v, want %v", reads, s.e.reads)
		}
	}
}

// firstTarget names an event's first target: a file id, an outside-repo
// bucket, or none.
func firstTarget(ts []mapTarget) string {
	switch {
	case len(ts) == 0:
		return "none"
	case ts[0].File != nil:
		return fmt.Sprintf("file %d", *ts[0].File)
	}
	return ts[0].Scope + " " + ts[0].Label
}

func sortLanes(l []lane) {
	sort.Slice(l, func(i, j int) bool { return fmt.Sprint(l[i]) < fmt.Sprint(l[j]) })
}
