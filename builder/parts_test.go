package builder

import (
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

func TestCap(t *testing.T) {
	evs := stream(sess("s"), repoEv(0, "k1", "api", ""), userEv(0, 5))
	for i := range 10 {
		id := "c" + itoa(i)
		evs = append(evs, llmEv(float64(i), "", "gpt-5", 10, 1, 1, 0),
			callEv(float64(i), id, "Read", "read", file("k1", "f"+itoa(i), "read", "")),
			resultEv(float64(i)+0.5, id, i%2 == 0))
	}
	evs = append(evs, repoEv(20, "k2", "web", ""), userEv(20, 7),
		callEv(21, "late", "Edit", "edit", file("k2", "x", "edit", "create")))
	full := mustBuild(t, evs, Options{})
	m := mustBuild(t, evs, Options{EventCap: 5})
	if !m.Session.Truncated || full.Session.Truncated {
		t.Fatalf("truncated %v / full %v", m.Session.Truncated, full.Session.Truncated)
	}
	if len(m.Events) != 5 {
		t.Fatalf("%d events", len(m.Events))
	}
	for i := range m.Events {
		a, b := m.Events[i], full.Events[i]
		a.Task, b.Task = 0, 0
		if a.Kind != b.Kind || a.T != b.T || a.Seq != b.Seq {
			t.Errorf("event %d differs from the full map's", i)
		}
	}
	ft, mt := full.Totals, m.Totals
	if mt.Calls != ft.Calls || mt.Requests != ft.Requests || mt.Errors != ft.Errors || mt.Tokens != ft.Tokens ||
		mt.CostUSD != ft.CostUSD || mt.UserTurns != 2 || mt.FilesTouched != 11 || mt.FilesCreated != 1 || mt.Tasks != 2 {
		t.Errorf("capped totals %+v\nfull %+v", mt, ft)
	}
	// files, repos and tasks only reference kept events.
	if len(m.Files) != 2 || len(m.Repos) != 1 || len(m.Tasks) != 1 || m.Tasks[0].EndSeq != 4 {
		t.Errorf("files %d repos %d tasks %+v", len(m.Files), len(m.Repos), m.Tasks)
	}
	if len(full.Repos) != 2 || len(full.Files) != 11 || len(full.Tasks) != 2 {
		t.Errorf("full: repos %d files %d tasks %d", len(full.Repos), len(full.Files), len(full.Tasks))
	}
}

func TestTasks(t *testing.T) {
	tests := []struct {
		name string
		evs  []event.Event
		want []Task
		task []int // events[].task
	}{
		{"no user turn: no tasks", stream(sess("s"), llmEv(1, "", "gpt-5", 1, 1, 0, 1)), nil, []int{0}},
		{"events before the first turn belong to task 1", stream(sess("s"),
			llmEv(1, "", "gpt-5", 1, 1, 0, 1), userEv(2, 4), llmEv(3, "", "gpt-5", 1, 1, 0, 1),
			userEv(5, 4), llmEv(9, "", "gpt-5", 1, 1, 0, 1)),
			[]Task{
				{N: 1, ID: "t1", Name: "Turn 1", Source: "turns", StartSeq: 0, EndSeq: 2, StartT: 0, EndT: 2000, FirstTurn: 0, LastTurn: 0},
				{N: 2, ID: "t2", Name: "Turn 2", Source: "turns", StartSeq: 3, EndSeq: 4, StartT: 4000, EndT: 8000, FirstTurn: 1, LastTurn: 1},
			}, []int{1, 1, 1, 2, 2}},
		{"subagent lanes split no turns", stream(sess("s"), userEv(1, 4),
			onLane("sa-1", userEv(2, 9), llmEv(3, "", "gpt-5", 1, 1, 0, 1))),
			[]Task{{N: 1, ID: "t1", Name: "Turn 1", Source: "turns", StartSeq: 0, EndSeq: 1, StartT: 0, EndT: 2000}},
			[]int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			if len(m.Tasks) != len(tt.want) || (tt.want == nil) != (m.Tasks == nil) {
				t.Fatalf("tasks %+v, want %+v", m.Tasks, tt.want)
			}
			for i := range tt.want {
				if m.Tasks[i] != tt.want[i] {
					t.Errorf("task %d = %+v, want %+v", i, m.Tasks[i], tt.want[i])
				}
			}
			for i, e := range m.Events {
				if e.Task != tt.task[i] {
					t.Errorf("events[%d].task = %d, want %d", i, e.Task, tt.task[i])
				}
			}
			if m.Totals.Tasks != len(tt.want) {
				t.Errorf("totals.tasks %d", m.Totals.Tasks)
			}
		})
	}
}

func TestFilesAndTargets(t *testing.T) {
	key := []byte("k3y")
	evs := stream(sess("s"), repoEv(0, "kb", "web", "acme/web"), repoEv(0, "ka", "api", ""),
		callEv(1, "g", "Grep", "search", file("ka", "src/a.go", "hit", ""), file("ka", "src/b.go", "hit", "")),
		callEv(2, "r", "Read", "read", file("ka", "src/a.go", "read", "")),
		callEv(3, "w", "Write", "edit", file("kb", "docs/new.md", "edit", "create")),
		callEv(4, "e", "Edit", "edit", file("ka", "src/a.go", "edit", "modify")),
		callEv(5, "d", "Bash", "exec", file("ka", "src/b.go", "edit", "delete"),
			event.Target{Label: "/tmp (scratch)", Touch: "read"}, event.Target{Path: "loose", Touch: "read"}),
	)
	for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed} {
		for _, k := range [][]byte{key, nil} {
			t.Run(string(mode)+"/key="+string(k), func(t *testing.T) {
				render := redact.NewRenderer(mode, k)
				m := mustBuild(t, evs, Options{PathMode: mode, HashKey: k})
				if m.Session.PathMode != string(render.Mode()) {
					t.Errorf("pathMode %s, renderer says %s", m.Session.PathMode, render.Mode())
				}
				// Repos in order of first use: api is first touched although
				// web was declared first... both are declared at t=0 in that
				// order, which counts as use.
				if len(m.Repos) != 2 || m.Repos[0] != (Repo{ID: "r0", Name: "web", Remote: "acme/web"}) || m.Repos[1] != (Repo{ID: "r1", Name: "api"}) {
					t.Errorf("repos %+v", m.Repos)
				}
				want := []File{
					{ID: 0, Repo: "r1", Path: render.Path("src/a.go"), Reads: 1, Edits: 1, Hits: 1, First: 0, Op: "modify"},
					{ID: 1, Repo: "r1", Path: render.Path("src/b.go"), Edits: 1, Hits: 1, First: 0, Op: "delete"},
					{ID: 2, Repo: "r0", Path: render.Path("docs/new.md"), Edits: 1, First: 2, Op: "create"},
				}
				if len(m.Files) != len(want) {
					t.Fatalf("files %+v", m.Files)
				}
				for i := range want {
					if m.Files[i] != want[i] {
						t.Errorf("files[%d] = %+v, want %+v", i, m.Files[i], want[i])
					}
				}
				tg := m.Events[4].Targets
				if len(tg) != 3 || tg[0] != (Target{File: 1, Touch: "edit", Op: "delete"}) ||
					tg[1] != (Target{File: -1, Label: "/tmp (scratch)", Touch: "read"}) ||
					tg[2] != (Target{File: -1, Label: "outside-repo", Touch: "read"}) {
					t.Errorf("targets %+v", tg)
				}
				if m.Totals.FilesTouched != 3 || m.Totals.FilesCreated != 1 || m.Totals.FilesDeleted != 1 {
					t.Errorf("totals files %d/%d/%d", m.Totals.FilesTouched, m.Totals.FilesCreated, m.Totals.FilesDeleted)
				}
			})
		}
	}
}

func TestSessionBlock(t *testing.T) {
	evs := []event.Event{
		{Kind: event.KindSession, T: at(0), Session: &event.Session{NativeID: "child", AgentTool: "codex"}},
		{Kind: event.KindSession, T: at(1), Session: &event.Session{Role: "subagent", ParentNativeID: "parent", AgentVersion: "0.50.0"}},
		llmEv(1, "", "gpt-5", 1, 1, 0, 1),
	}
	m := mustBuild(t, evs, Options{Producer: "agentmap 9.9"})
	s := m.Session
	if s.ID != "local:codex:child" || s.AgentTool != "codex" || s.Role != "subagent" ||
		s.ParentSessionID != "local:codex:parent" || s.CLIVersion != "agentmap 9.9" || m.NativeID() != "child" {
		t.Errorf("session %+v", s)
	}
	if _, err := Build([]event.Event{userEv(1, 1)}, Options{}); err == nil {
		t.Error("no session id: no error")
	}
	if _, err := Build(evs, Options{PathMode: "absolute"}); err == nil {
		t.Error("unknown path mode: no error")
	}
}

func TestAsLane(t *testing.T) {
	in := stream(sess("child"), userEv(1, 3), llmEv(2, "", "gpt-5", 1, 1, 0, 1))
	out := AsLane(in, "sa-child")
	if len(out) != 2 || out[0].Agent != "sa-child" || out[1].Agent != "sa-child" || in[1].Agent != "" {
		t.Errorf("AsLane: %+v", out)
	}
}

func TestErrorEvents(t *testing.T) {
	hook := event.Event{Kind: event.KindError, T: at(3), Error: &event.Error{Source: "hook", Class: "hook_blocking",
		Hook: "PostToolUse:Bash", HookEvent: "PostToolUse", SrcUUID: "u-1", RefCallID: "c"}}
	evs := stream(sess("s"), shellEv(1, "c", "ls", false), resultEv(2, "c", true), hook,
		errorEv(4, "llm", "rate_limit"), errorEv(5, "", ""),
		func() event.Event { e := errorEv(6, "hook", ""); return e }(),
		func() event.Event {
			e := callEv(7, "m", "x", "mcp")
			e.Call.Server, e.Call.MCPTool = "srv", "x"
			return e
		}(), resultEv(8, "m", true),
		func() event.Event { e := callEv(9, "t", "Task", "subagent"); return e }(), resultEv(10, "t", true))
	m := mustBuild(t, evs, Options{})
	h := find(m, "error")[0]
	if h.Source != "hook" || h.ErrClass != "hook_blocking" || h.Hook != "PostToolUse:Bash" || h.SrcUUID != "u-1" ||
		h.Ref == nil || *h.Ref != 0 || !h.Err {
		t.Errorf("hook error %+v", h)
	}
	if e := find(m, "error")[2]; e.Source != "orchestration" || e.ErrClass != "api_error" {
		t.Errorf("defaulted error %+v", e)
	}
	if e := find(m, "error")[3]; e.ErrClass != "hook_error" {
		t.Errorf("defaulted hook error %+v", e)
	}
	bs := m.Totals.ErrorsBySource
	if bs != (ErrorsBySource{Tool: 1, MCP: 1, LLM: 1, Hook: 2, Orchestration: 2}) || m.Totals.Errors != 7 {
		t.Errorf("errorsBySource %+v errors %d", bs, m.Totals.Errors)
	}
	sum := 0
	for _, n := range m.Totals.ErrorsByClass {
		sum += n
	}
	if sum != m.Totals.Errors || m.Totals.ErrorsByClass["exit_code"] != 3 {
		t.Errorf("errorsByClass %v", m.Totals.ErrorsByClass)
	}
}

func TestLatencyPercentiles(t *testing.T) {
	tests := []struct {
		vals     []int64
		p50, p95 int64
	}{
		{nil, 0, 0},
		{[]int64{7}, 7, 7},
		{[]int64{1, 2, 3, 4}, 2, 4},
		{[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 10, 19},
	}
	for _, tt := range tests {
		if p := nearestRank(tt.vals, 50); p != tt.p50 {
			t.Errorf("%v: p50 %d, want %d", tt.vals, p, tt.p50)
		}
		if p := nearestRank(tt.vals, 95); p != tt.p95 {
			t.Errorf("%v: p95 %d, want %d", tt.vals, p, tt.p95)
		}
	}
	evs := stream(sess("s"))
	for i, lat := range []int64{300, 100, 200, -1, 0} {
		e := llmEv(float64(i), "", "gpt-5", 1, 1, 0, 1)
		e.LLM.LatencyMs = lat
		evs = append(evs, e)
	}
	m := mustBuild(t, evs, Options{})
	if m.Totals.LLMLatencyP50 != 200 || m.Totals.LLMLatencyP95 != 300 {
		t.Errorf("p50 %d p95 %d", m.Totals.LLMLatencyP50, m.Totals.LLMLatencyP95)
	}
}
