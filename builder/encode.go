package builder

import (
	"slices"
	"strconv"
)

// A catch-up writes thousands of maps, and their events are most of their
// bytes: every part of a map is appended to one buffer by hand, each
// object's keys written in their canonical (sorted) order, with no
// intermediate map, sort or reflection. The result is byte-identical to
// CanonicalJSON of the same fields, which the tests check against the
// general encoder for every kind, optional field and counter.
//
// A key argument is the key already quoted, with the comma before it when
// it is not the object's first: `,"kind":`.

// jsonAppender appends canonical JSON to b; the first failure (a
// non-finite number) is kept in err.
type jsonAppender struct {
	b   []byte
	err error
}

func (w *jsonAppender) raw(s string) { w.b = append(w.b, s...) }

func (w *jsonAppender) str(key, v string) {
	w.b = append(w.b, key...)
	w.b = appendString(w.b, v)
}

func (w *jsonAppender) optStr(key, v string) {
	if v != "" {
		w.str(key, v)
	}
}

func (w *jsonAppender) int(key string, v int64) {
	w.b = append(w.b, key...)
	w.b = strconv.AppendInt(w.b, v, 10)
}

// optInt writes a count only when it is positive (task, attempt, retry).
func (w *jsonAppender) optInt(key string, v int64) {
	if v > 0 {
		w.int(key, v)
	}
}

func (w *jsonAppender) ptr(key string, v *int64) {
	if v != nil {
		w.int(key, *v)
	}
}

func (w *jsonAppender) intPtr(key string, v *int) {
	if v != nil {
		w.int(key, int64(*v))
	}
}

func (w *jsonAppender) bool(key string, v bool) {
	w.b = append(w.b, key...)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *jsonAppender) float(key string, v float64) {
	w.b = append(w.b, key...)
	var err error
	if w.b, err = appendFloatValue(w.b, v); err != nil && w.err == nil {
		w.err = err
	}
}

// appendEvents appends the canonical JSON array of the events.
func appendEvents(w *jsonAppender, events []Event) {
	w.b = append(w.b, '[')
	for i := range events {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		events[i].appendTo(w)
	}
	w.b = append(w.b, ']')
}

// appendTo writes the event's object: the common fields (agent, err, kind,
// model, seq, t, task) and those of its kind, merged in key order. Only the
// fields of its kind are written, and optional ones only when present.
func (e *Event) appendTo(w *jsonAppender) {
	if isCallKind(e.Kind) {
		e.appendCall(w)
		return
	}
	switch e.Kind {
	case "llm":
		w.str(`{"agent":`, e.Agent)
		if e.Cost > 0 {
			w.float(`,"cost":`, e.Cost)
		}
		w.int(`,"cr":`, e.CR)
		w.int(`,"cw":`, e.CW)
		w.bool(`,"err":`, e.Err)
		w.int(`,"in":`, e.In)
		w.str(`,"kind":`, e.Kind)
		w.ptr(`,"latency":`, e.Latency)
		w.optStr(`,"model":`, e.Model)
		w.int(`,"out":`, e.Out)
		w.int(`,"seq":`, int64(e.Seq))
		w.optStr(`,"stop":`, e.Stop)
		w.int(`,"t":`, e.T)
		w.optInt(`,"task":`, int64(e.Task))
		w.int(`,"textChars":`, int64(e.TextChars))
		w.bool(`,"thinking":`, e.Thinking)
		w.int(`,"toolCalls":`, int64(e.ToolCalls))
	case "user":
		w.str(`{"agent":`, e.Agent)
		w.int(`,"chars":`, int64(e.Chars))
		w.bool(`,"err":`, e.Err)
		w.int(`,"images":`, int64(e.Images))
		w.str(`,"kind":`, e.Kind)
		w.optStr(`,"model":`, e.Model)
		e.seqTTask(w)
		w.int(`,"urls":`, int64(e.URLs))
	case "error":
		w.str(`{"agent":`, e.Agent)
		w.bool(`,"err":`, e.Err)
		w.str(`,"errClass":`, e.ErrClass)
		w.optStr(`,"hook":`, e.Hook)
		w.optStr(`,"hookEvent":`, e.HookEvent)
		w.str(`,"kind":`, e.Kind)
		w.optStr(`,"model":`, e.Model)
		w.intPtr(`,"ref":`, e.Ref)
		w.optInt(`,"retry":`, int64(e.Retry))
		w.int(`,"seq":`, int64(e.Seq))
		w.str(`,"source":`, e.Source)
		w.optStr(`,"srcUuid":`, e.SrcUUID)
		w.int(`,"t":`, e.T)
		w.optInt(`,"task":`, int64(e.Task))
	case "delay":
		w.str(`{"agent":`, e.Agent)
		w.str(`,"cause":`, e.Cause)
		w.bool(`,"err":`, e.Err)
		w.str(`,"kind":`, e.Kind)
		w.optStr(`,"model":`, e.Model)
		w.int(`,"ms":`, e.Ms)
		w.intPtr(`,"ref":`, e.Ref)
		e.seqTTask(w)
	case "compaction":
		e.head(w)
		w.optStr(`,"model":`, e.Model)
		w.int(`,"ms":`, e.Ms)
		w.int(`,"postTokens":`, e.PostTokens)
		w.int(`,"preTokens":`, e.PreTokens)
		e.seqTTask(w)
		w.optStr(`,"trigger":`, e.Trigger)
	case "commit":
		w.str(`{"agent":`, e.Agent)
		w.int(`,"del":`, int64(e.Del))
		w.bool(`,"err":`, e.Err)
		w.int(`,"files":`, int64(e.Files))
		w.int(`,"ins":`, int64(e.Ins))
		w.str(`,"kind":`, e.Kind)
		w.optStr(`,"model":`, e.Model)
		w.optStr(`,"repo":`, e.Repo)
		w.int(`,"seq":`, int64(e.Seq))
		w.str(`,"sha":`, e.SHA)
		w.int(`,"t":`, e.T)
		w.optInt(`,"task":`, int64(e.Task))
	case "pr_merge", "pr_close", "pr_comment":
		e.head(w)
		w.optStr(`,"model":`, e.Model)
		w.int(`,"number":`, int64(e.Number))
		w.str(`,"repo":`, e.Repo)
		e.seqTTask(w)
		w.optStr(`,"url":`, e.URL)
	case "ticket":
		w.str(`{"action":`, e.Action)
		w.str(`,"agent":`, e.Agent)
		w.bool(`,"err":`, e.Err)
		w.str(`,"id":`, e.ID)
		w.str(`,"kind":`, e.Kind)
		w.optStr(`,"model":`, e.Model)
		e.seqTTask(w)
		w.str(`,"tracker":`, e.Tracker)
	case "artifact":
		e.head(w)
		w.optStr(`,"model":`, e.Model)
		e.seqTTask(w)
		w.str(`,"url":`, e.URL)
		w.optStr(`,"version":`, e.Version)
	case "skill_write":
		w.str(`{"action":`, e.Action)
		w.str(`,"agent":`, e.Agent)
		w.bool(`,"err":`, e.Err)
		w.str(`,"kind":`, e.Kind)
		w.optStr(`,"model":`, e.Model)
		w.str(`,"name":`, e.Name)
		e.seqTTask(w)
	case "model_switch":
		w.str(`{"agent":`, e.Agent)
		w.bool(`,"err":`, e.Err)
		w.str(`,"from":`, e.From)
		w.str(`,"kind":`, e.Kind)
		w.optStr(`,"model":`, e.Model)
		e.seqTTask(w)
		w.str(`,"to":`, e.To)
	default:
		e.head(w)
		w.optStr(`,"model":`, e.Model)
		e.seqTTask(w)
	}
	w.b = append(w.b, '}')
}

// head opens the object with agent, err and kind, for the kinds that have
// no key of their own before "kind".
func (e *Event) head(w *jsonAppender) {
	w.str(`{"agent":`, e.Agent)
	w.bool(`,"err":`, e.Err)
	w.str(`,"kind":`, e.Kind)
}

func (e *Event) seqTTask(w *jsonAppender) {
	w.int(`,"seq":`, int64(e.Seq))
	w.int(`,"t":`, e.T)
	w.optInt(`,"task":`, int64(e.Task))
}

// appendCall writes a tool call: the keys of every call kind in one sorted
// sequence, each written only for the kinds that have it.
func (e *Event) appendCall(w *jsonAppender) {
	k := e.Kind
	targeted := hasTargets(k)
	timed := targeted || k == "mcp" // outBytes and dur
	w.str(`{"agent":`, e.Agent)
	w.optInt(`,"attempt":`, int64(e.Attempt))
	w.optStr(`,"cat":`, e.Cat)
	if k == "subagent" {
		w.optStr(`,"child":`, e.Child)
	}
	if timed {
		w.ptr(`,"dur":`, e.Dur)
	}
	w.bool(`,"err":`, e.Err)
	w.optStr(`,"errClass":`, e.ErrClass)
	w.intPtr(`,"exitCode":`, e.ExitCode)
	if k == "web" {
		w.str(`,"host":`, e.Host)
	}
	w.str(`,"kind":`, k)
	w.optStr(`,"model":`, e.Model)
	if timed {
		w.ptr(`,"outBytes":`, e.OutBytes)
	}
	w.intPtr(`,"retryOf":`, e.RetryOf)
	w.int(`,"seq":`, int64(e.Seq))
	switch k {
	case "mcp":
		w.str(`,"server":`, e.Server)
	case "skill":
		w.str(`,"skill":`, e.Skill)
	case "subagent":
		w.optStr(`,"subagentType":`, e.SubagentType)
	}
	w.int(`,"t":`, e.T)
	if targeted {
		w.raw(`,"targets":[`)
		for i, t := range e.Targets {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if t.File < 0 {
				w.str(`{"label":`, t.Label)
				w.str(`,"scope":"outside","touch":`, t.Touch)
				w.b = append(w.b, '}')
				continue
			}
			w.int(`{"file":`, int64(t.File))
			w.optStr(`,"op":`, t.Op)
			w.str(`,"touch":`, t.Touch)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.optInt(`,"task":`, int64(e.Task))
	switch k {
	case "mcp", "tool", "read", "search", "edit", "exec", "verify":
		w.str(`,"tool":`, e.Tool)
	}
	if v := e.VCS; targeted && v != nil {
		w.str(`,"vcs":{"action":`, v.Action)
		w.optInt(`,"number":`, int64(v.Number))
		w.str(`,"provider":`, v.Provider)
		w.optStr(`,"repo":`, v.Repo)
		w.b = append(w.b, '}')
	}
	if k == "exec" || k == "verify" {
		w.optStr(`,"verb":`, e.Verb)
	}
	w.b = append(w.b, '}')
}

// appendFiles appends the files[] array.
func appendFiles(w *jsonAppender, files []File) {
	w.b = append(w.b, '[')
	for i := range files {
		f := &files[i]
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.int(`{"edits":`, int64(f.Edits))
		w.int(`,"first":`, int64(f.First))
		w.int(`,"hits":`, int64(f.Hits))
		w.int(`,"id":`, int64(f.ID))
		w.optStr(`,"op":`, f.Op)
		w.str(`,"path":`, f.Path)
		w.int(`,"reads":`, int64(f.Reads))
		w.str(`,"repo":`, f.Repo)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ']')
}

func appendRepos(w *jsonAppender, repos []Repo) {
	w.b = append(w.b, '[')
	for i := range repos {
		r := &repos[i]
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.str(`{"id":`, r.ID)
		w.str(`,"name":`, r.Name)
		w.optStr(`,"remote":`, r.Remote)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ']')
}

func appendAgents(w *jsonAppender, agents []Agent) {
	w.b = append(w.b, '[')
	for i := range agents {
		a := &agents[i]
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.int(`{"calls":`, int64(a.Calls))
		w.float(`,"cost":`, a.Cost)
		w.int(`,"end":`, a.End)
		w.str(`,"id":`, a.ID)
		w.str(`,"kind":`, a.Kind)
		w.intPtr(`,"launchSeq":`, a.LaunchSeq)
		w.optStr(`,"model":`, a.Model)
		w.str(`,"outcome":`, a.Outcome)
		if a.Parent == "" {
			w.raw(`,"parent":null`)
		} else {
			w.str(`,"parent":`, a.Parent)
		}
		w.int(`,"requests":`, int64(a.Requests))
		w.int(`,"start":`, a.Start)
		w.optStr(`,"subagentType":`, a.SubagentType)
		w.int(`,"tokens":`, a.Tokens)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ']')
}

func appendTasks(w *jsonAppender, tasks []Task) {
	w.b = append(w.b, '[')
	for i := range tasks {
		t := &tasks[i]
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.int(`{"endSeq":`, int64(t.EndSeq))
		w.int(`,"endT":`, t.EndT)
		w.int(`,"firstTurn":`, int64(t.FirstTurn))
		w.str(`,"id":`, t.ID)
		w.int(`,"lastTurn":`, int64(t.LastTurn))
		w.int(`,"n":`, int64(t.N))
		w.str(`,"name":`, t.Name)
		w.str(`,"source":`, t.Source)
		w.int(`,"startSeq":`, int64(t.StartSeq))
		w.int(`,"startT":`, t.StartT)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ']')
}

func appendPRs(w *jsonAppender, prs []PR) {
	w.b = append(w.b, '[')
	for i := range prs {
		p := &prs[i]
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.int(`{"number":`, int64(p.Number))
		w.str(`,"provider":`, p.Provider)
		w.str(`,"repo":`, p.Repo)
		w.int(`,"seq":`, int64(p.Seq))
		w.str(`,"state":`, p.State)
		w.optStr(`,"url":`, p.URL)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ']')
}

// appendTotals appends the totals block.
func appendTotals(w *jsonAppender, t *Totals) {
	w.int(`{"artifacts":`, int64(t.Artifacts))
	w.int(`,"calls":`, int64(t.Calls))
	w.int(`,"commits":`, int64(t.Commits))
	w.int(`,"compactions":`, int64(t.Compactions))
	w.float(`,"costUsd":`, t.CostUSD)
	w.int(`,"delayMs":`, t.DelayMs)
	w.int(`,"delays":`, int64(t.Delays))
	w.int(`,"errors":`, int64(t.Errors))
	w.raw(`,"errorsByClass":`)
	appendCounts(w, t.ErrorsByClass)
	s := &t.ErrorsBySource
	w.int(`,"errorsBySource":{"hook":`, int64(s.Hook))
	w.int(`,"llm":`, int64(s.LLM))
	w.int(`,"mcp":`, int64(s.MCP))
	w.int(`,"orchestration":`, int64(s.Orchestration))
	w.int(`,"tool":`, int64(s.Tool))
	w.b = append(w.b, '}')
	w.int(`,"filesCreated":`, int64(t.FilesCreated))
	w.int(`,"filesDeleted":`, int64(t.FilesDeleted))
	w.int(`,"filesTouched":`, int64(t.FilesTouched))
	w.int(`,"llmLatencyP50":`, t.LLMLatencyP50)
	w.int(`,"llmLatencyP95":`, t.LLMLatencyP95)
	w.int(`,"maxContext":`, t.MaxContext)
	w.int(`,"modelSwitches":`, int64(t.ModelSwitches))
	w.int(`,"outputTokens":`, t.OutputTokens)
	w.int(`,"prComments":`, int64(t.PRComments))
	w.int(`,"promptChars":`, int64(t.PromptChars))
	w.int(`,"promptImages":`, int64(t.PromptImages))
	w.int(`,"promptUrls":`, int64(t.PromptURLs))
	w.int(`,"prsClosed":`, int64(t.PRsClosed))
	w.int(`,"prsCreated":`, int64(t.PRsCreated))
	w.int(`,"prsMerged":`, int64(t.PRsMerged))
	w.int(`,"requests":`, int64(t.Requests))
	w.int(`,"retries":`, int64(t.Retries))
	w.int(`,"skillsCreated":`, int64(t.SkillsCreated))
	w.int(`,"skillsUpdated":`, int64(t.SkillsUpdated))
	w.int(`,"subagents":`, int64(t.Subagents))
	w.int(`,"tasks":`, int64(t.Tasks))
	w.int(`,"ticketsCreated":`, int64(t.TicketsCreated))
	w.int(`,"ticketsUpdated":`, int64(t.TicketsUpdated))
	w.int(`,"tokens":`, t.Tokens)
	w.int(`,"userTurns":`, int64(t.UserTurns))
	w.b = append(w.b, '}')
}

// appendCounts appends a map of counts with its keys sorted.
func appendCounts(w *jsonAppender, counts map[string]int) {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.b = append(w.b, '{')
	for i, k := range keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendString(w.b, k)
		w.int(":", int64(counts[k]))
	}
	w.b = append(w.b, '}')
}

// appendSession appends the session block, with or without cliVersion
// (which the content hash leaves out).
func appendSession(w *jsonAppender, s *Session, withVersion bool) {
	w.str(`{"agentTool":`, s.AgentTool)
	if withVersion {
		w.str(`,"cliVersion":`, s.CLIVersion)
	}
	w.int(`,"durationMs":`, s.DurationMs)
	w.str(`,"id":`, s.ID)
	w.raw(`,"models":[`)
	for i, m := range s.Models {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendString(w.b, m)
	}
	w.b = append(w.b, ']')
	w.str(`,"outcome":`, s.Outcome)
	if s.ParentSessionID == "" {
		w.raw(`,"parentSessionId":null`)
	} else {
		w.str(`,"parentSessionId":`, s.ParentSessionID)
	}
	w.str(`,"pathMode":`, s.PathMode)
	w.str(`,"role":`, s.Role)
	w.optStr(`,"startedAt":`, s.StartedAt)
	w.bool(`,"truncated":`, s.Truncated)
	w.b = append(w.b, '}')
}
