package report

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/export/mapfile"
)

// decodeColumns rebuilds the events of a session page's JSON as the
// page's script does (report.js, sessionData), into the objects it works
// with.
func decodeColumns(t *testing.T, page []byte) []event {
	t.Helper()
	var p struct {
		Str []string `json:"str"`
		Ev  struct {
			Count    int
			T        []int64
			K, L, Lb []int
			Sp       map[string][2]json.RawMessage
		} `json:"ev"`
	}
	if err := json.Unmarshal(page, &p); err != nil {
		t.Fatal(err)
	}
	objs := make([]map[string]any, p.Ev.Count)
	for i, at := 0, int64(0); i < p.Ev.Count; i++ {
		at += p.Ev.T[i]
		objs[i] = map[string]any{"t": at, "k": p.Str[p.Ev.K[i]], "l": p.Ev.L[i]}
		if p.Ev.Lb[i] != 0 {
			objs[i]["n"] = p.Str[p.Ev.Lb[i]]
		}
	}
	for key, col := range p.Ev.Sp {
		var idx []int
		var vals []json.RawMessage
		if json.Unmarshal(col[0], &idx) != nil || json.Unmarshal(col[1], &vals) != nil {
			t.Fatalf("column %s: %s", key, col)
		}
		at := 0
		for j, step := range idx {
			at += step
			switch {
			case j >= len(vals):
				objs[at][key] = 1 // a flag
			case key == "tool" || key == "cat" || key == "c" || key == "src" || key == "stop":
				var s int
				json.Unmarshal(vals[j], &s)
				objs[at][key] = p.Str[s]
			case key == "fu" || key == "tg":
				var ids []int
				json.Unmarshal(vals[j], &ids)
				var ss []string
				for _, s := range ids {
					ss = append(ss, p.Str[s])
				}
				objs[at][key] = ss
			default:
				objs[at][key] = vals[j]
			}
		}
	}
	b, _ := json.Marshal(objs)
	var out []event
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestColumnsCarryEveryEvent: what a page's columns decode to is every
// event as buildSessionPage made it, a value of zero (exit code 0, a
// retry of event #0, a duration of 0) told apart from no value.
func TestColumnsCarryEveryEvent(t *testing.T) {
	zero, one := 0, 1
	var zero64 int64
	m := synthMap(9, 400)
	m.Events = append(m.Events,
		mapfile.Event{Seq: 400, T: m.Events[399].T - 5, Kind: "exec", Tool: "Bash", Verb: "true", ExitCode: &zero, RetryOf: &zero, Dur: &zero64, Agent: "main"},
		mapfile.Event{Seq: 401, T: m.Events[399].T + 10, Kind: "error", Source: "hook", Hook: "PreToolUse", Ref: &one, Agent: "main"},
		mapfile.Event{Seq: 402, T: m.Events[399].T + 20, Kind: "compaction", Trigger: "auto", PreTokens: 180000, PostTokens: 12000, Ms: 900},
	)
	for _, mm := range []*Map{m, synthMap(1, 0), synthMap(2, 5000)} {
		p := buildSessionPage(mm)
		b, err := p.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("the page is not JSON: %.200s", b)
		}
		got := decodeColumns(t, b)
		if len(got) != len(mm.Events) || (len(got) > 0 && !reflect.DeepEqual(got, p.events)) {
			for i := range min(len(got), len(p.events)) {
				if !reflect.DeepEqual(got[i], p.events[i]) {
					g, _ := json.Marshal(got[i])
					w, _ := json.Marshal(p.events[i])
					t.Fatalf("event %d decodes to %s, the page was made of %s", i, g, w)
				}
			}
			t.Fatalf("%d events decoded of %d", len(got), len(mm.Events))
		}
	}
}
