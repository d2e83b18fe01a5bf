package cursor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
)

// laneView is what a golden file of subagent lanes holds: the lane count,
// the agents[] entries and the subagent events of a built map.
type laneView struct {
	Subagents int              `json:"subagents"`
	Agents    []map[string]any `json:"agents"`
	Launches  []map[string]any `json:"launches"`
}

// parseAt parses lines as the file at path, born at startMs.
func parseAt(t *testing.T, path string, startMs int64, data []byte) []event.Event {
	t.Helper()
	src, err := Identify(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(src)
	p.SetFile(path, startMs, fixtureEndMs)
	var evs []event.Event
	for _, l := range bytes.Split(data, []byte("\n")) {
		evs, _ = p.Line(l, evs)
	}
	return evs
}

func buildLanes(t *testing.T, evs []event.Event) laneView {
	t.Helper()
	m, err := builder.Build(evs, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	canon, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	noCanary(t, "map", canon)
	var tree struct {
		Totals struct {
			Subagents int `json:"subagents"`
		} `json:"totals"`
		Agents []map[string]any `json:"agents"`
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(canon, &tree); err != nil {
		t.Fatal(err)
	}
	v := laneView{Subagents: tree.Totals.Subagents, Agents: tree.Agents}
	for _, e := range tree.Events {
		if e["kind"] == "subagent" {
			v.Launches = append(v.Launches, e)
		}
	}
	return v
}

// launches is a transcript whose main agent starts three subagents (two in
// one response) and answers; it is written here, not taken from a log.
var launches = []byte(`{"role":"user","message":{"content":[{"type":"text","text":"<user_query>CANARY-prompt</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"CANARY-reply"},{"type":"tool_use","name":"Subagent","input":{"subagent_type":"explore","model":"fast","description":"CANARY-d1","prompt":"CANARY-p1","readonly":true}}]}}
{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Subagent","input":{"subagent_type":"memory-graph-analyst","model":"fast","description":"CANARY-d2","prompt":"CANARY-p2"}},{"type":"tool_use","name":"Subagent","input":{"subagent_type":"code-simplifier","model":"CANARY model name","description":"CANARY-d3","prompt":"CANARY-p3"}}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"CANARY-final"}]}}
`)

var subagentFile = []byte(`{"role":"user","message":{"content":[{"type":"text","text":"<user_query>CANARY-task</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"tool_use","name":"ReadFile","input":{"path":"/home/dev/code/acme-api/README.md"}}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"CANARY-done"}]}}
`)

// TestSubagentLanesGolden: every Subagent call of a main transcript starts
// a lane. Without the subagent's file the lane is listed with no events;
// with files, they take the launches' places in order of their birth
// (not of their ids); files beyond the launches stay lanes of their own.
func TestSubagentLanesGolden(t *testing.T) {
	mainPath := transcriptPath(false)
	subPath := func(id string) string {
		return "/home/dev/.cursor/projects/" + fixtureProject + "/agent-transcripts/" + fixtureSession + "/subagents/" + id + ".jsonl"
	}
	// The ids sort against their birth order.
	const first, second, third = "ffff0000-0000-4000-8000-000000000001", "aaaa0000-0000-4000-8000-000000000002", "0000aaaa-0000-4000-8000-000000000003"
	cases := []struct {
		name  string
		files map[string]int64 // subagent id -> birth
	}{
		{"no subagent files", nil},
		{"one file", map[string]int64{second: fixtureStartMs + 5000}},
		{"two files, born in order", map[string]int64{first: fixtureStartMs + 1000, second: fixtureStartMs + 2000}},
		{"four files for three launches", map[string]int64{first: fixtureStartMs + 1000, second: fixtureStartMs + 2000,
			third: fixtureStartMs + 3000, "bbbb0000-0000-4000-8000-000000000004": fixtureStartMs + 4000}},
	}
	got := map[string]laneView{}
	for _, c := range cases {
		evs := parseAt(t, mainPath, fixtureStartMs, launches)
		for id, born := range c.files {
			evs = append(evs, parseAt(t, subPath(id), born, subagentFile)...)
		}
		v := buildLanes(t, evs)
		got[c.name] = v
		wantLanes := max(3, len(c.files))
		if v.Subagents != wantLanes || len(v.Agents) != wantLanes+1 {
			t.Errorf("%s: totals.subagents %d, %d agents; want %d lanes", c.name, v.Subagents, len(v.Agents), wantLanes)
		}
		if len(v.Launches) != 3 {
			t.Fatalf("%s: %d subagent events, want 3", c.name, len(v.Launches))
		}
		// Each launch names a listed lane of its type, which points back.
		byID := map[string]map[string]any{}
		for _, a := range v.Agents {
			byID[a["id"].(string)] = a
		}
		for _, e := range v.Launches {
			a := byID[fmt.Sprint(e["child"])]
			if a == nil || a["subagentType"] != e["subagentType"] || a["launchSeq"] != e["seq"] {
				t.Errorf("%s: launch %v has lane %v", c.name, e, a)
			}
		}
	}
	// Birth order, not id order: the first-born file is the first launch.
	two := got["two files, born in order"]
	if two.Launches[0]["child"] != LaneID(first) || two.Launches[1]["child"] != LaneID(second) {
		t.Errorf("files paired out of birth order: %v, %v", two.Launches[0]["child"], two.Launches[1]["child"])
	}
	// A file's lane has its events; a launch without a file has none.
	for _, a := range two.Agents {
		if a["id"] == LaneID(first) && a["calls"] != float64(1) {
			t.Errorf("file lane %v: want its one call", a)
		}
	}
	// The asked model is the launch's model when it is an identifier.
	if m := got["no subagent files"].Launches[0]["model"]; m != "fast" {
		t.Errorf("asked model %v, want fast", m)
	}
	if m, ok := got["no subagent files"].Launches[2]["model"]; ok {
		t.Errorf("a model that is no identifier is kept: %v", m)
	}
	var view []any
	for _, c := range cases {
		view = append(view, map[string]any{"case": c.name, "map": got[c.name]})
	}
	golden(t, "lanes.golden.json", view)
}

// TestSubagentLaneIDsStable: the launch lanes of a transcript are the same
// whether it is read at once or in pieces with restored carry-state, and
// differ between sessions.
func TestSubagentLaneIDsStable(t *testing.T) {
	lanes := func(evs []event.Event) []string {
		var out []string
		for _, e := range evs {
			if e.Kind == event.KindLane {
				out = append(out, e.Agent+"<-"+e.Lane.LaunchCallID)
			}
		}
		return out
	}
	whole := lanes(parseAt(t, transcriptPath(false), fixtureStartMs, launches))
	src, _ := Identify(transcriptPath(false), nil)
	var evs []event.Event
	var state []byte
	for _, l := range bytes.Split(launches, []byte("\n")) {
		p, err := Restore(src, state)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ = p.Line(l, evs)
		state, _ = p.State()
	}
	if a, b := fmt.Sprint(whole), fmt.Sprint(lanes(evs)); a != b || len(whole) != 3 {
		t.Errorf("lanes at once %s, in pieces %s", a, b)
	}
	other := "/home/dev/.cursor/projects/" + fixtureProject + "/agent-transcripts/0a1b2c3d-0000-4000-8000-00000000ffff.jsonl"
	if o := lanes(parseAt(t, other, fixtureStartMs, launches)); fmt.Sprint(o) == fmt.Sprint(whole) {
		t.Errorf("two sessions share lane ids %v", o)
	}
}
