package builder

import (
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

func TestPairing(t *testing.T) {
	exit := func(n int) *int { return &n }
	withRes := func(e event.Event, f func(*event.Result)) event.Event { f(e.Result); return e }
	tests := []struct {
		name  string
		evs   []event.Event
		check func(t *testing.T, e Event)
	}{
		{"result fields and time-based dur", stream(sess("s"), shellEv(1, "c", "go build", true),
			withRes(resultEv(4.5, "c", true), func(r *event.Result) { r.ExitCode = exit(2); r.OutBytes = 77 })),
			func(t *testing.T, e Event) {
				if !e.Err || e.ErrClass != "exit_code" || *e.ExitCode != 2 || *e.OutBytes != 77 || *e.Dur != 3500 || e.T != 0 {
					t.Errorf("%+v", e)
				}
			}},
		{"reported duration wins", stream(sess("s"), shellEv(1, "c", "ls", false),
			withRes(resultEv(9, "c", false), func(r *event.Result) { r.DurMs = 1234 })),
			func(t *testing.T, e Event) {
				if e.Err || e.ErrClass != "" || *e.Dur != 1234 {
					t.Errorf("%+v", e)
				}
			}},
		{"result before call in input (other lane order) still pairs", stream(sess("s"),
			resultEv(2, "c", false), shellEv(1, "c", "ls", false)),
			func(t *testing.T, e Event) {
				if e.OutBytes == nil || *e.OutBytes != 10 || *e.Dur != 1000 {
					t.Errorf("%+v", e)
				}
			}},
		{"failed result without class is other", stream(sess("s"), shellEv(1, "c", "ls", false),
			withRes(resultEv(2, "c", true), func(r *event.Result) { r.ErrClass = "" })),
			func(t *testing.T, e Event) {
				if !e.Err || e.ErrClass != "other" {
					t.Errorf("%+v", e)
				}
			}},
		{"unanswered call followed by a request: no_result", stream(sess("s"), shellEv(1, "c", "ls", false),
			shellEv(1, "d", "pwd", false), resultEv(2, "d", false), llmEv(3, "", "gpt-5", 1, 1, 0, 1)),
			func(t *testing.T, e Event) {
				if !e.Err || e.ErrClass != "no_result" || e.OutBytes != nil || e.Dur != nil {
					t.Errorf("%+v", e)
				}
			}},
		{"unanswered last call stays open", stream(sess("s"), shellEv(1, "x", "pwd", false), resultEv(2, "x", false),
			llmEv(3, "", "gpt-5", 1, 1, 1, 0), shellEv(4, "c", "ls", false)),
			func(t *testing.T, e Event) {
				if e.Verb != "ls" {
					e = Event{Verb: "?"}
				}
				if e.Err || e.ErrClass != "" {
					t.Errorf("%+v", e)
				}
			}},
		{"parallel calls of one response ending the lane stay open", stream(sess("s"), shellEv(1, "x", "pwd", false),
			resultEv(2, "x", false), llmEv(3, "m", "claude-sonnet-4-5", 1, 1, 1, 0), shellEv(3, "c", "cp", false),
			llmEv(4, "m", "claude-sonnet-4-5", 1, 1, 1, 0), shellEv(4, "d", "cp", false)),
			func(t *testing.T, e Event) {
				if e.Err || e.ErrClass != "" || e.RetryOf != nil {
					t.Errorf("%+v", e)
				}
			}},
		{"a source without results never marks no_result", stream(sess("s"), shellEv(1, "c", "ls", false),
			llmEv(3, "", "gpt-5", 1, 1, 0, 1)),
			func(t *testing.T, e Event) {
				if e.Err {
					t.Errorf("%+v", e)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			var calls []Event
			for _, e := range m.Events {
				if isCallKind(e.Kind) {
					calls = append(calls, e)
				}
			}
			if len(calls) == 0 {
				t.Fatal("no call event")
			}
			if tt.name == "parallel calls of one response ending the lane stay open" {
				for _, e := range calls {
					tt.check(t, e)
				}
				return
			}
			if tt.name == "unanswered call followed by a request: no_result" {
				tt.check(t, calls[0])
				return
			}
			tt.check(t, calls[len(calls)-1])
		})
	}
}

func TestContinuation(t *testing.T) {
	exit := func(n int) *int { return &n }
	cont := func(sec float64, id, of string) event.Event {
		e := callEv(sec, id, "write_stdin", "exec")
		e.Call.Continues = of
		return e
	}
	res := func(sec float64, id string, out int64, code *int) event.Event {
		e := resultEv(sec, id, code != nil && *code != 0)
		e.Result.OutBytes, e.Result.ExitCode = out, code
		return e
	}
	evs := stream(sess("s"),
		shellEv(1, "c1", "npm test", true), res(2, "c1", 100, nil),
		cont(3, "c2", "c1"), res(10, "c2", 50, nil),
		cont(11, "c3", "c2"), res(40, "c3", 25, exit(1)),
		llmEv(41, "", "gpt-5", 1, 1, 0, 1))
	m := mustBuild(t, evs, Options{})
	if got := kinds(m); len(got) != 3 || got[0] != "verify" || got[1] != "delay" || got[2] != "llm" {
		t.Fatalf("kinds %v", got)
	}
	e := m.Events[0]
	if !e.Err || *e.ExitCode != 1 || *e.OutBytes != 175 || *e.Dur != 39000 || e.ErrClass != "exit_code" {
		t.Errorf("folded call %+v", e)
	}
	if m.Totals.Calls != 1 {
		t.Errorf("calls = %d", m.Totals.Calls)
	}
	// A continuation of an unknown call is a call of its own.
	m = mustBuild(t, stream(sess("s"), cont(1, "c9", "gone"), res(2, "c9", 5, nil)), Options{})
	if m.Totals.Calls != 1 || *m.Events[0].OutBytes != 5 {
		t.Errorf("orphan continuation: %+v", m.Events)
	}
}

func TestSubagentLink(t *testing.T) {
	task := func(sec float64, id string) event.Event {
		e := callEv(sec, id, "Task", "subagent")
		e.Call.SubagentType = "Explore"
		return e
	}
	laneDecl := func(lane, launch, model string) event.Event {
		return event.Event{Kind: event.KindLane, Agent: lane, T: at(2), Model: model,
			Lane: &event.Lane{LaunchCallID: launch}}
	}
	childRes := func(sec float64, id, child string) event.Event {
		e := resultEv(sec, id, false)
		e.Result.Child = child
		return e
	}
	tests := []struct {
		name string
		evs  []event.Event
	}{
		{"child from the result", stream(sess("s"), task(1, "t1"), childRes(50, "t1", "sa-1"),
			onLane("sa-1", llmEv(2, "", "claude-haiku-4-5", 1, 1, 0, 1)))},
		{"child from the lane declaration", stream(sess("s"), task(1, "t1"), resultEv(50, "t1", false),
			laneDecl("sa-1", "t1", ""), onLane("sa-1", llmEv(2, "", "claude-haiku-4-5", 1, 1, 0, 1)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			sa := find(m, "subagent")[0]
			if sa.Child != "sa-1" || sa.Model != "claude-haiku-4-5" || sa.SubagentType != "Explore" || sa.Cat != "subagent" {
				t.Errorf("subagent event %+v", sa)
			}
			if len(m.Agents) != 2 {
				t.Fatalf("agents %+v", m.Agents)
			}
			a := m.Agents[1]
			if a.ID != "sa-1" || a.Parent != "main" || a.Kind != "subagent" || a.LaunchSeq == nil ||
				*a.LaunchSeq != sa.Seq || a.SubagentType != "Explore" || a.Model != "claude-haiku-4-5" || a.Requests != 1 {
				t.Errorf("agent %+v", a)
			}
			d := find(m, "delay")
			if len(d) != 1 || d[0].Cause != "subagent" || d[0].Ms != 49000 || *d[0].Ref != sa.Seq {
				t.Errorf("delays %+v", d)
			}
			if m.Totals.Subagents != 1 {
				t.Errorf("subagents = %d", m.Totals.Subagents)
			}
		})
	}
}

// TestSubagentAskedModel: without a lane, a subagent event carries the
// model its call asked for; a lane's own model wins over it.
func TestSubagentAskedModel(t *testing.T) {
	task := func(sec float64, id, model string) event.Event {
		e := callEv(sec, id, "Agent", "subagent")
		e.Call.SubagentType, e.Call.SubagentModel = "Explore", model
		return e
	}
	res := resultEv(3, "t2", false)
	res.Result.Child = "sa-2"
	m := mustBuild(t, stream(sess("s"), llmEv(0.5, "m1", "claude-opus-4-6", 1, 1, 2, 0),
		task(1, "t1", "haiku"), resultEv(2, "t1", false),
		task(1, "t2", "sonnet"), res,
		onLane("sa-2", llmEv(2, "", "claude-sonnet-4-5", 1, 1, 0, 1))), Options{})
	sa := find(m, "subagent")
	if len(sa) != 2 || sa[0].Model != "haiku" || sa[1].Model != "claude-sonnet-4-5" {
		t.Fatalf("subagent events %+v", sa)
	}
	if got := m.Session.Models; len(got) != 2 || got[0] != "claude-opus-4-6" || got[1] != "claude-sonnet-4-5" {
		t.Errorf("session models %v: an asked model served no request", got)
	}
}

func TestConfirmedOutputs(t *testing.T) {
	ghCreate := shellEv(1, "p", "gh pr create", false)
	ghCreate.Call.VCS = &event.VCS{Provider: "github", Action: "pr_create_attempt"}
	prRes := resultEv(2, "p", false)
	prRes.Result.PR = &event.PR{Action: "create", Provider: "github", Repo: "acme/api", Number: 7, URL: "https://github.com/acme/api/pull/7"}
	merge := shellEv(3, "mg", "gh pr merge", false)
	mergeRes := resultEv(4, "mg", false)
	mergeRes.Result.PR = &event.PR{Action: "merge", Provider: "github", Repo: "acme/api", Number: 7}
	commit := shellEv(5, "cm", "git commit", false)
	commitRes := resultEv(6, "cm", false)
	commitRes.Result.Commit = &event.Commit{Repo: "k", SHA: "abc1234", Files: 2, Ins: 10, Del: 3}
	tk := callEv(7, "tk", "linear_create", "mcp")
	tk.Call.Server, tk.Call.MCPTool = "linear", "create_issue"
	tkRes := resultEv(8, "tk", false)
	tkRes.Result.Ticket = &event.Ticket{Tracker: "linear", Action: "create", ID: "ENG-12"}
	tkRes.Result.Artifact = &event.Artifact{URL: "https://example.com/a", Version: "1"}
	sk := callEv(9, "sk", "Write", "edit", file("k", ".claude/skills/x/SKILL.md", "edit", "create"))
	sk.Call.SkillWrite = "x"
	skFail := callEv(11, "sk2", "Edit", "edit", file("k", ".claude/skills/y/SKILL.md", "edit", "modify"))
	skFail.Call.SkillWrite = "y"
	sk3 := callEv(13, "sk3", "Edit", "edit", file("k", ".claude/skills/x/SKILL.md", "edit", "modify"))
	sk3.Call.SkillWrite = "x"
	evs := stream(sess("s"), repoEv(0, "k", "api", "acme/api"), ghCreate, prRes, merge, mergeRes,
		commit, commitRes, tk, tkRes, sk, resultEv(10, "sk", false), skFail, resultEv(12, "sk2", true),
		sk3, resultEv(14, "sk3", false))
	m := mustBuild(t, evs, Options{})
	want := []string{"exec", "exec", "pr_merge", "exec", "commit", "mcp", "ticket", "artifact",
		"edit", "skill_write", "edit", "edit", "skill_write"}
	if got := kinds(m); !equalStrings(got, want) {
		t.Fatalf("kinds\n got %v\nwant %v", got, want)
	}
	if v := m.Events[0].VCS; v == nil || v.Action != "pr_create" || v.Provider != "github" || v.Repo != "acme/api" || v.Number != 7 {
		t.Errorf("pr create vcs %+v", v)
	}
	if len(m.PRs) != 1 || m.PRs[0] != (PR{Provider: "github", Repo: "acme/api", Number: 7,
		URL: "https://github.com/acme/api/pull/7", Seq: 0, State: "merged"}) {
		t.Errorf("prs %+v", m.PRs)
	}
	if e := m.Events[2]; e.Repo != "acme/api" || e.Number != 7 || e.T != m.Events[1].T {
		t.Errorf("pr_merge %+v", e)
	}
	if e := m.Events[4]; e.Repo != "r0" || e.SHA != "abc1234" || e.Files != 2 || e.Ins != 10 || e.Del != 3 {
		t.Errorf("commit %+v", e)
	}
	if e := m.Events[6]; e.Tracker != "linear" || e.Action != "create" || e.ID != "ENG-12" {
		t.Errorf("ticket %+v", e)
	}
	if e := m.Events[9]; e.Name != "x" || e.Action != "create" {
		t.Errorf("skill_write %+v", e)
	}
	if e := m.Events[12]; e.Name != "x" || e.Action != "update" {
		t.Errorf("skill_write %+v", e)
	}
	tot := m.Totals
	if tot.PRsCreated != 1 || tot.PRsMerged != 1 || tot.Commits != 1 || tot.TicketsCreated != 1 ||
		tot.Artifacts != 1 || tot.SkillsCreated != 1 || tot.SkillsUpdated != 1 || tot.Calls != 7 {
		t.Errorf("totals %+v", tot)
	}
	if m.Session.Outcome != OutcomePRCreated || m.Agents[0].Outcome != OutcomePRCreated {
		t.Errorf("outcome %s", m.Session.Outcome)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMissingLaneAndIdentifiers(t *testing.T) {
	task := callEv(1, "t1", "Task", "subagent")
	res := resultEv(2, "t1", false)
	res.Result.Child = "sa-gone"
	mcp := callEv(3, "m", "", "mcp")
	evs := stream(sess("s"), task, res, mcp, callEv(4, "x", "", "weird-kind"))
	m := mustBuild(t, evs, Options{})
	if e := find(m, "subagent")[0]; e.Child != "" {
		t.Errorf("child %q names a lane that is not in agents[]", e.Child)
	}
	if e := find(m, "mcp")[0]; e.Server != "unknown" || e.Tool != "unknown" {
		t.Errorf("mcp %+v", e)
	}
	if e := find(m, "tool")[0]; e.Tool != "unknown" || e.Cat != "tool" {
		t.Errorf("tool %+v", e)
	}
}
