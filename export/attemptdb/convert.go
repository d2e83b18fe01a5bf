package attemptdb

import (
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/export/mapfile"
)

// noRepo is project.root and name for a session that touched no repository.
const noRepo = "outside-repo"

// conversion turns one map into events. Ids are derived from the session id
// and the map's own sequence numbers, so exporting the same map twice
// gives the same event ids and AttemptDB's ingestion deduplicates them.
type conversion struct {
	m        *mapfile.Map
	opts     Options
	sid      string
	native   string
	provider string
	base     int64 // observed_at of t = 0, in µs
	undated  bool
	project  Project
	mainSpan string
	lanes    map[string]*mapfile.Agent
	started  map[string]bool
	out      []Event
	// flush writes and drops the events converted so far, so one map
	// event's worth of output is in memory at a time.
	flush func([]Event) error
}

func newConversion(m *mapfile.Map, o Options) *conversion {
	c := &conversion{m: m, opts: o, native: m.Session.NativeID(), provider: ProviderOf(m.Session.AgentTool),
		lanes: map[string]*mapfile.Agent{}, started: map[string]bool{}}
	if c.provider == "" {
		c.provider = "unknown"
	}
	c.sid = SessionID(c.provider, c.native)
	c.mainSpan = Derive(prefixSpan, c.sid, "session")
	if start, ok := m.Start(); ok && start.UnixMicro() > 0 {
		c.base = start.UnixMicro()
	} else {
		c.undated = true
		c.base = o.Undated.UnixMicro()
		if c.base <= 0 {
			c.base = 1
		}
	}
	c.project = projectOf(m, o.DeviceID)
	for i := range m.Agents {
		a := &m.Agents[i]
		if a.ID != "main" {
			c.lanes[a.ID] = a
		}
	}
	return c
}

// projectOf names the project by its first repository. A map keeps no
// absolute path, and its remote is owner/name without a host, which
// AttemptDB's remote rule treats as unparseable; so the project takes
// AttemptDB's root form, the root being the repository's name (a logical
// root, never a path): project_id = prj_ ␟ root ␟ device ␟ root, name =
// its last segment. The owner/name remote goes to session_started's attrs.
func projectOf(m *mapfile.Map, device string) Project {
	root := noRepo
	if len(m.Repos) > 0 && m.Repos[0].Name != "" && ValueAllowed(m.Repos[0].Name) {
		root = m.Repos[0].Name
	}
	return Project{ProjectID: RootProjectID(device, root), Root: root, Name: rootName(root)}
}

func (c *conversion) at(t int64) int64 { return c.base + t*1000 }

// event starts an event of the session; id names it within the session.
func (c *conversion) event(kind, name, id string, t int64) *Event {
	c.out = append(c.out, Event{
		EventID:           Derive(prefixEvent, c.sid, id),
		SchemaVersion:     1,
		DeviceID:          c.opts.DeviceID,
		ObservedAt:        c.at(t),
		Provider:          c.provider,
		AdapterVersion:    c.opts.AdapterVersion,
		CaptureMode:       "metadata_only",
		ProviderEventName: "agentplay." + name,
		Kind:              kind,
		Project:           c.project,
		SessionID:         c.sid,
		ProviderSessionID: c.native,
		Attrs:             map[string]any{},
	})
	ev := &c.out[len(c.out)-1]
	if c.undated {
		ev.Attrs["x_agentmap_time_unknown"] = true
	}
	return ev
}

func (c *conversion) mainAgent() *Agent {
	a := &Agent{AgentID: MainAgentID(c.sid), AgentType: "main"}
	if len(c.m.Session.Models) > 0 {
		a.Model = c.m.Session.Models[0]
	}
	return a
}

func (c *conversion) laneAgent(lane string) *Agent {
	if lane == "main" {
		return c.mainAgent()
	}
	a := &Agent{AgentID: SubagentID(c.sid, lane), ProviderAgentID: lane, ParentAgentID: MainAgentID(c.sid)}
	if l := c.lanes[lane]; l != nil {
		a.AgentType, a.Model = l.SubagentType, l.Model
	}
	return a
}

func (c *conversion) laneSpan(lane string) string {
	if lane == "main" {
		return c.mainSpan
	}
	return Derive(prefixSpan, c.sid, "agent", lane)
}

func (c *conversion) run() error {
	c.sessionStarted()
	for i := range c.m.Events {
		e := &c.m.Events[i]
		c.ensureLane(e.Lane(), e.T)
		c.convert(e)
		if err := c.emit(); err != nil {
			return err
		}
	}
	// Lanes are closed in agents[] order, after their last event.
	for _, a := range c.m.Agents {
		if a.ID != "main" && c.started[a.ID] {
			c.laneStopped(&a)
		}
	}
	c.sessionEnded()
	return c.emit()
}

func (c *conversion) emit() error {
	if len(c.out) == 0 || c.flush == nil {
		return nil
	}
	err := c.flush(c.out)
	c.out = c.out[:0]
	return err
}

func (c *conversion) sessionStarted() {
	s := c.m.Session
	ev := c.event("session_started", "session", "session_started", 0)
	ev.SpanID = c.mainSpan
	ev.Agent = c.mainAgent()
	setStr(ev.Attrs, "x_agentmap_agent_tool", s.AgentTool)
	setStr(ev.Attrs, "x_agentmap_path_mode", s.PathMode)
	setStr(ev.Attrs, "x_agentmap_role", s.Role)
	if len(c.m.Repos) > 0 {
		setStr(ev.Attrs, "x_agentmap_repo_remote", c.m.Repos[0].Remote)
	}
	if s.ParentSessionID != "" {
		parent := s.ParentSessionID
		if rest, ok := strings.CutPrefix(parent, "local:"+s.AgentTool+":"); ok {
			parent = rest
		}
		ev.Attrs["x_agentmap_parent_session_id"] = SessionID(c.provider, parent)
		ev.Attrs["is_subagent"] = true
	}
	if s.Truncated {
		ev.Attrs["x_agentmap_truncated"] = true
	}
	if len(s.Models) > 0 {
		setStrs(ev.Attrs, "x_agentmap_models", s.Models)
	}
}

func (c *conversion) sessionEnded() {
	s, tot := c.m.Session, c.m.Totals
	// The end moves when a re-flushed session grows: a new end is a new
	// fact, so its id names the duration and outcome it reports.
	ev := c.event("session_ended", "session_end",
		"session_ended."+strconv.FormatInt(s.DurationMs, 10)+"."+s.Outcome+"."+c.m.ContentHash, s.DurationMs)
	ev.SpanID = c.mainSpan
	ev.Agent = c.mainAgent()
	ev.Outcome = &Outcome{Status: outcomeStatus(s.Outcome)}
	d := max(s.DurationMs, 0)
	ev.DurationMs = &d
	setStr(ev.Attrs, "x_agentmap_outcome", s.Outcome)
	setStr(ev.Attrs, "x_agentmap_content_hash", c.m.ContentHash)
	ev.Attrs["x_agentmap_calls"] = tot.Calls
	ev.Attrs["x_agentmap_requests"] = tot.Requests
	ev.Attrs["x_agentmap_user_turns"] = tot.UserTurns
	ev.Attrs["x_agentmap_errors"] = tot.Errors
	if usageAttrs(ev.Attrs, tot.Tokens, c.m.RequestsWithoutUsage(), tot.Requests) {
		costAttrs(ev.Attrs, tot.CostUSD, c.m.UnpricedModels(""))
		ev.Attrs["output_tokens"] = tot.OutputTokens
	}
	ev.Attrs["file_count"] = tot.FilesTouched
}

// usageAttrs says the tokens of a session or lane, and reports whether
// it has any to say: x_agentmap_requests_without_usage counts its model
// requests whose log recorded no usage (Cursor writes none; a Codex
// response no token_count measured), and when none of them recorded any,
// tokens, output tokens and cost are left out rather than written as 0,
// as `list` says "not recorded" and AgentScope's cost "usage not
// recorded" (a reader summing them must not take such a session for one
// that used nothing).
func usageAttrs(a map[string]any, tokens int64, without, requests int) bool {
	if without > 0 {
		a["x_agentmap_requests_without_usage"] = without
	}
	if without > 0 && without == requests && tokens == 0 {
		return false
	}
	a["x_agentmap_tokens"] = tokens
	return true
}

// costAttrs says the cost as every other place that shows one does, never
// a cost of 0 for tokens that were used: x_agentmap_unpriced_models names
// the models among the tokens that have no price (their requests add
// nothing to the cost), and x_agentmap_cost_usd, the priced part, is left
// out when nothing was priced, as `list` says "unpriced" and AgentScope's
// cost "unpriced" (a reader summing costs must not take such a session
// for free).
func costAttrs(a map[string]any, usd float64, unpriced []string) {
	var names []string
	for _, m := range unpriced {
		if m == "" || !ValueAllowed(m) {
			m = "unknown" // a model not named, or a name that is not content-free: still said
		}
		if !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	if len(names) > 0 {
		a["x_agentmap_unpriced_models"] = names
	}
	if usd != 0 || len(names) == 0 {
		a["x_agentmap_cost_usd"] = usd
	}
}

// outcomeStatus maps session.outcome onto outcome.status.
func outcomeStatus(o string) string {
	switch o {
	case "pr_created", "verified", "completed":
		return "success"
	case "unresolved_errors":
		return "failure"
	case "interrupted":
		return "cancelled"
	case "blocked":
		return "denied"
	}
	return "unknown"
}

// ensureLane opens a subagent lane the first time it is seen, when no
// subagent call launched it (a lane whose launch is not in the map).
func (c *conversion) ensureLane(lane string, t int64) {
	if lane == "main" || c.started[lane] {
		return
	}
	c.laneStarted(lane, c.mainSpan, "lane."+lane, t, "", nil)
}

func (c *conversion) laneStarted(lane, parentSpan, id string, t int64, tool string, e *mapfile.Event) {
	c.started[lane] = true
	ev := c.event("subagent_started", "subagent", id, t)
	ev.SpanID = c.laneSpan(lane)
	ev.ParentSpanID = parentSpan
	ev.Agent = c.laneAgent(lane)
	ev.Attrs["is_subagent"] = true
	if l := c.lanes[lane]; l != nil {
		setStr(ev.Attrs, "subagent_type", l.SubagentType)
		setStr(ev.Attrs, "model", l.Model)
	}
	if e != nil {
		ev.Tool = &Tool{Name: safeName(tool, "subagent"), Category: "subagent", CallID: strconv.Itoa(e.Seq)}
		ev.ProviderTurnID = turnID(e.Task)
	}
}

func (c *conversion) laneStopped(a *mapfile.Agent) {
	ev := c.event("subagent_stopped", "subagent_end",
		"lane_end."+a.ID+"."+strconv.FormatInt(a.End, 10)+"."+a.Outcome, a.End)
	ev.SpanID = c.laneSpan(a.ID)
	parent := a.Parent
	if parent == "" {
		parent = "main"
	}
	ev.ParentSpanID = c.laneSpan(parent)
	if !c.started[parent] && parent != "main" {
		ev.ParentSpanID = c.mainSpan
	}
	ev.Agent = c.laneAgent(a.ID)
	ev.Outcome = &Outcome{Status: outcomeStatus(a.Outcome)}
	d := max(a.End-a.Start, 0)
	ev.DurationMs = &d
	setStr(ev.Attrs, "x_agentmap_outcome", a.Outcome)
	ev.Attrs["x_agentmap_calls"] = a.Calls
	ev.Attrs["x_agentmap_requests"] = a.Requests
	without := 0
	for i := range c.m.Events {
		if e := &c.m.Events[i]; e.NoUsage() && e.Lane() == a.ID {
			without++
		}
	}
	usageAttrs(ev.Attrs, a.Tokens, without, a.Requests)
}

func (c *conversion) convert(e *mapfile.Event) {
	seq := strconv.Itoa(e.Seq)
	lane := e.Lane()
	switch {
	case e.Kind == "subagent" && e.Child != "" && !c.started[e.Child]:
		// A call that launches a lane is a tool call like any other:
		// AttemptDB pairs tool_call_started with its finished or failed
		// event by call_id, and a denied launch still fails. Its lane's
		// subagent_started keeps the id "call.<fact>" it has always had,
		// so exports made before the call had a start of its own still
		// deduplicate with this one; the start takes a key of its own.
		c.callStartedAs("subagent_call."+factKey(e), e, seq, lane)
		c.laneStarted(e.Child, c.laneSpan(lane), "call."+factKey(e), e.T, e.Tool, e)
		c.callFinished(e, seq, lane)
	case e.IsCall():
		c.callStarted(e, seq, lane)
		c.callFinished(e, seq, lane)
	case e.Kind == "user":
		ev := c.lineEvent("prompt_submitted", e, seq, lane)
		ev.Attrs["prompt_chars"] = e.Chars
		ev.Attrs["image_count"] = e.Images
		ev.Attrs["x_agentmap_url_count"] = e.URLs
	case e.Kind == "llm":
		ev := c.lineEvent("agent_message", e, seq, lane)
		if ev.Agent.Model == "" || e.Model != "" {
			ev.Agent.Model = e.Model
		}
		setStr(ev.Attrs, "model", e.Model)
		setStr(ev.Attrs, "stop_reason", e.Stop)
		ev.Attrs["message_chars"] = e.TextChars
		if e.NoUsage() {
			// its log recorded no usage: none is said, not 0 of each
			ev.Attrs["x_agentmap_usage_not_recorded"] = true
		} else {
			ev.Attrs["output_tokens"] = e.Out
			ev.Attrs["x_agentmap_input_tokens"] = e.In
			ev.Attrs["x_agentmap_cache_write_tokens"] = e.CW
			ev.Attrs["x_agentmap_cache_read_tokens"] = e.CR
		}
		ev.Attrs["x_agentmap_tool_calls"] = e.ToolCalls
		ev.Attrs["x_agentmap_thinking"] = e.Thinking
		if e.Latency != nil {
			ev.Attrs["x_agentmap_latency_ms"] = *e.Latency
		}
	case e.Kind == "error":
		ev := c.lineEvent("turn_failed", e, seq, lane)
		ev.Outcome = &Outcome{Status: "failure", Class: safeToken(e.ErrClass)}
		setStr(ev.Attrs, "error_class", e.ErrClass)
		setStr(ev.Attrs, "x_agentmap_error_source", e.Source)
		setStr(ev.Attrs, "hook_event_name", e.HookEvent)
		setStr(ev.Attrs, "x_agentmap_hook", e.Hook)
		if e.Retry > 0 {
			ev.Attrs["x_agentmap_retry"] = e.Retry
		}
	case e.Kind == "compaction":
		ev := c.lineEvent("compaction_started", e, seq, lane)
		setStr(ev.Attrs, "compaction_trigger", e.Trigger)
		setStr(ev.Attrs, "trigger", e.Trigger)
		ev.Attrs["pre_tokens"] = e.PreTokens
		end := c.event("compaction_finished", "compaction_end", "compaction_end."+factKey(e), e.T+max(e.Ms, 0))
		end.ParentSpanID, end.Agent, end.ProviderTurnID = ev.ParentSpanID, ev.Agent, ev.ProviderTurnID
		end.Attrs["post_tokens"] = e.PostTokens
		setStr(end.Attrs, "compaction_trigger", e.Trigger)
		d := max(e.Ms, 0)
		end.DurationMs = &d
	case e.Kind == "delay":
		// A delay is agentmap's inference from timings, not an observed
		// fact; AttemptDB keeps inference out of its events.
	case e.Kind == "model_switch":
		ev := c.lineEvent("config_changed", e, seq, lane)
		setStr(ev.Attrs, "model", e.To)
		setStr(ev.Attrs, "x_agentmap_previous_model", e.From)
	default:
		ev := c.lineEvent("unknown", e, seq, lane)
		c.outputAttrs(ev, e)
	}
}

// lineEvent is the event of one map event that is not a tool call.
func (c *conversion) lineEvent(kind string, e *mapfile.Event, seq, lane string) *Event {
	ev := c.event(kind, e.Kind, "ev."+factKey(e), e.T)
	ev.ParentSpanID = c.laneSpan(lane)
	ev.Agent = c.laneAgent(lane)
	ev.ProviderTurnID = turnID(e.Task)
	return ev
}

// outputAttrs carries the identifiers of confirmed outputs (commits, PRs,
// tickets): never a URL, a title or a message.
func (c *conversion) outputAttrs(ev *Event, e *mapfile.Event) {
	setStr(ev.Attrs, "x_agentmap_sha", e.SHA)
	setStr(ev.Attrs, "x_agentmap_repo", e.Repo)
	setStr(ev.Attrs, "x_agentmap_action", e.Action)
	setStr(ev.Attrs, "x_agentmap_tracker", e.Tracker)
	if e.Kind == "ticket" {
		setStr(ev.Attrs, "x_agentmap_ticket_id", e.ID)
	}
	if e.Kind == "skill_write" {
		setStr(ev.Attrs, "x_agentmap_skill", e.Name)
	}
	if e.Number > 0 {
		ev.Attrs["x_agentmap_number"] = e.Number
	}
	if e.Kind == "commit" {
		ev.Attrs["file_count"] = e.Files
		ev.Attrs["lines_added"] = e.Ins
		ev.Attrs["lines_removed"] = e.Del
	}
}

func (c *conversion) callStarted(e *mapfile.Event, seq, lane string) {
	c.callStartedAs("call."+factKey(e), e, seq, lane)
}

// callStartedAs is callStarted under the event id key id.
func (c *conversion) callStartedAs(id string, e *mapfile.Event, seq, lane string) {
	ev := c.event("tool_call_started", e.Kind, id, e.T)
	ev.SpanID = Derive(prefixSpan, c.sid, "call", factKey(e))
	ev.ParentSpanID = c.laneSpan(lane)
	ev.Agent = c.laneAgent(lane)
	ev.ProviderTurnID = turnID(e.Task)
	ev.Tool = &Tool{Name: safeName(e.Tool, e.Kind), Category: category(e), CallID: seq}
	a := ev.Attrs
	setStr(a, "x_agentmap_kind", e.Kind)
	if e.Kind == "exec" || e.Kind == "verify" {
		setStr(a, "command_category", e.Cat)
		setStr(a, "x_agentmap_verb", e.Verb)
	} else {
		setStr(a, "x_agentmap_category", e.Cat)
	}
	if e.VCS != nil && e.VCS.Provider == "git" {
		setStr(a, "git_subcommand", e.VCS.Action)
	} else if e.VCS != nil {
		setStr(a, "x_agentmap_vcs_action", e.VCS.Action)
	}
	setStr(a, "x_agentmap_server", e.Server)
	setStr(a, "x_agentmap_skill", e.Skill)
	setStr(a, "x_agentmap_host", e.Host)
	setStr(a, "subagent_type", e.SubagentType)
	if e.RetryOf != nil {
		a["x_agentmap_retry_of"] = *e.RetryOf
	}
	if e.Attempt > 0 {
		a["x_agentmap_attempt"] = e.Attempt
	}
	c.targetAttrs(a, e)
}

// targetAttrs lists the files a call touched, as the map renders them
// (repo-relative, or hashed in the map's path mode) and the bucket labels
// outside repos. Paths that fail the value rule are left out, never cut.
func (c *conversion) targetAttrs(a map[string]any, e *mapfile.Event) {
	if len(e.Targets) == 0 {
		return
	}
	var paths, labels, exts []string
	seenExt := map[string]bool{}
	for _, t := range e.Targets {
		if t.File == nil {
			if t.Label != "" {
				labels = append(labels, t.Label)
			}
			continue
		}
		p, ok := c.m.FilePath(*t.File)
		if !ok {
			continue
		}
		paths = append(paths, p)
		if x := path.Ext(p); x != "" && !strings.HasPrefix(path.Base(p), "•") && !seenExt[x] {
			seenExt[x] = true
			exts = append(exts, x)
		}
	}
	a["file_count"] = len(paths)
	setStrs(a, "x_agentmap_paths", paths)
	setStrs(a, "x_agentmap_outside", labels)
	if c.m.Session.PathMode == "relative" {
		sort.Strings(exts)
		setStrs(a, "path_extensions", exts)
	}
}

func (c *conversion) callFinished(e *mapfile.Event, seq, lane string) {
	dur := int64(0)
	if e.Dur != nil && *e.Dur > 0 {
		dur = *e.Dur
	}
	kind := "tool_call_finished"
	if e.Err {
		kind = "tool_call_failed"
	}
	ev := c.event(kind, e.Kind+"_result", "result."+factKey(e), e.T+dur)
	// The call's span, as its start's: the lane it launched has a span
	// of its own, opened and closed by subagent_started and _stopped.
	ev.SpanID = Derive(prefixSpan, c.sid, "call", factKey(e))
	ev.ParentSpanID = c.laneSpan(lane)
	ev.Agent = c.laneAgent(lane)
	ev.ProviderTurnID = turnID(e.Task)
	ev.Tool = &Tool{Name: safeName(e.Tool, e.Kind), Category: category(e), CallID: seq}
	if e.Dur != nil {
		ev.DurationMs = &dur
	}
	ev.Outcome = &Outcome{Status: "success"}
	if e.Err {
		ev.Outcome = &Outcome{Status: "failure", Class: safeToken(e.ErrClass), ExitCode: e.ExitCode}
		if e.ErrClass == "permission_denied" || e.ErrClass == "needs_approval" {
			ev.Outcome.Status = "denied"
		}
		if e.ErrClass == "interrupted" {
			ev.Outcome.Status = "cancelled"
		}
		setStr(ev.Attrs, "error_class", e.ErrClass)
	}
	if e.ExitCode != nil {
		ev.Attrs["exit_code"] = *e.ExitCode
	}
	if e.OutBytes != nil {
		ev.Attrs["tool_output_bytes"] = *e.OutBytes
	}
}

// category maps a map event kind onto tool.category.
func category(e *mapfile.Event) string {
	switch e.Kind {
	case "read":
		return "file_read"
	case "search":
		return "search"
	case "edit":
		if e.Tool == "NotebookEdit" {
			return "notebook"
		}
		for _, t := range e.Targets {
			if t.Op == "create" && (e.Tool == "Write" || e.Tool == "write_file") {
				return "file_write"
			}
		}
		return "file_edit"
	case "exec", "verify":
		return "shell"
	case "web":
		return "web"
	case "mcp":
		return "mcp"
	case "subagent":
		return "subagent"
	case "tool":
		switch e.Tool {
		case "TodoWrite", "update_plan", "ExitPlanMode", "EnterPlanMode", "TaskCreate", "TaskUpdate":
			return "plan"
		}
	}
	return "other"
}

// factKey names a map event within its session for the derived ids: its
// seq with its kind, time and lane, so a re-flushed map gives its
// unchanged events the ids they had (AttemptDB deduplicates them) while an
// event that moved to another seq never takes an id of a different fact.
func factKey(e *mapfile.Event) string {
	return strconv.Itoa(e.Seq) + "." + e.Kind + "." + strconv.FormatInt(e.T, 10) + "." + e.Lane()
}

func turnID(task int) string {
	if task <= 0 {
		return ""
	}
	return strconv.Itoa(task)
}

// safeName keeps a tool name that passes the value rule, or the kind.
func safeName(name, fallback string) string {
	if name == "" || !ValueAllowed(name) {
		return fallback
	}
	return name
}

// safeToken drops a class that is not a plain token.
func safeToken(s string) string {
	if !ValueAllowed(s) || strings.ContainsAny(s, " /\\") {
		return ""
	}
	return s
}

// setStr sets a string attr when it is non-empty and content-free.
func setStr(a map[string]any, k, v string) {
	if v != "" && ValueAllowed(v) {
		a[k] = v
	}
}

// setStrs sets an array attr of the content-free elements.
func setStrs(a map[string]any, k string, vs []string) {
	var keep []string
	for _, v := range vs {
		if v != "" && ValueAllowed(v) {
			keep = append(keep, v)
		}
	}
	if len(keep) > 0 {
		a[k] = keep
	}
}
