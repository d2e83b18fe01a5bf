package builder

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/builder/validate"
)

var update = flag.Bool("update", false, "rewrite the golden maps in testdata/builder")

const fixtureDir = "../testdata/builder"

// goldenKey is the HMAC key of the hashed-mode goldens.
var goldenKey = []byte("golden-key")

func readFixture(t testing.TB, path string) []event.Event {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	if err := json.Unmarshal(raw, &evs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return evs
}

func fixtureStreams(t testing.TB) map[string][]event.Event {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.events.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s", fixtureDir)
	}
	out := map[string][]event.Event{}
	for _, p := range paths {
		out[strings.TrimSuffix(filepath.Base(p), ".events.json")] = readFixture(t, p)
	}
	return out
}

// TestGolden builds every hand-written fixture and compares the canonical
// map with its golden file (indented for review; compacted it must be the
// exact canonical bytes). The Claude fixture is also built in the other
// two path modes.
func TestGolden(t *testing.T) {
	for name, evs := range fixtureStreams(t) {
		modes := []redact.Mode{redact.ModeRelative}
		if name == "claude_session" {
			modes = append(modes, redact.ModeDirsOnly, redact.ModeHashed)
		}
		for _, mode := range modes {
			golden := filepath.Join(fixtureDir, name+".map.json")
			if mode != redact.ModeRelative {
				golden = filepath.Join(fixtureDir, name+"."+string(mode)+".map.json")
			}
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				m := mustBuild(t, evs, Options{PathMode: mode, HashKey: goldenKey, Producer: "agentmap test"})
				canon := canonical(t, m)
				checkInvariants(t, canon)
				if problems := validate.Map(canon); len(problems) > 0 {
					for _, p := range problems {
						t.Errorf("validate: %s %s: %s", p.Path, p.Rule, p.Message)
					}
				}
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, canon, "", "  "); err != nil {
					t.Fatal(err)
				}
				pretty.WriteByte('\n')
				if *update {
					if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update)", err)
				}
				var compact bytes.Buffer
				if err := json.Compact(&compact, want); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(compact.Bytes(), canon) {
					t.Errorf("map differs from %s (run with -update and review the diff)", golden)
				}
			})
		}
	}
}

// checkInvariants: events[i].seq == i, t never goes back, every reference
// points at an earlier kept event, and (not truncated) totals recount from
// the events.
func checkInvariants(t *testing.T, canon []byte) {
	t.Helper()
	var doc map[string]any
	d2 := json.NewDecoder(bytes.NewReader(canon))
	d2.UseNumber()
	if err := d2.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	// The direct event encoder and the generic one agree.
	if again, err := CanonicalJSON(doc); err != nil || !bytes.Equal(again, canon) {
		t.Fatalf("canonical bytes are not a fixed point of CanonicalJSON (%v)", err)
	}
	num := func(v any) int64 {
		n, _ := v.(json.Number).Int64()
		return n
	}
	events, _ := doc["events"].([]any)
	totals, _ := doc["totals"].(map[string]any)
	count := map[string]int64{}
	last := int64(0)
	for i, raw := range events {
		e := raw.(map[string]any)
		if num(e["seq"]) != int64(i) {
			t.Fatalf("events[%d].seq = %v", i, e["seq"])
		}
		tt := num(e["t"])
		if tt < last {
			t.Fatalf("events[%d].t = %d goes back from %d", i, tt, last)
		}
		last = tt
		for _, f := range []string{"ref", "retryOf"} {
			if r, ok := e[f]; ok && num(r) >= int64(i) {
				t.Errorf("events[%d].%s = %v does not point back", i, f, r)
			}
		}
		kind := e["kind"].(string)
		if isCallKind(kind) {
			count["calls"]++
		}
		if e["err"] == true {
			count["errors"]++
		}
		if _, ok := e["retryOf"]; ok {
			count["retries"]++
		}
		switch kind {
		case "llm":
			count["requests"]++
			count["tokens"] += num(e["in"]) + num(e["cw"]) + num(e["cr"]) + num(e["out"])
			count["outputTokens"] += num(e["out"])
		case "user":
			count["userTurns"]++
			count["promptChars"] += num(e["chars"])
		case "delay":
			count["delays"]++
			count["delayMs"] += num(e["ms"])
		case "compaction":
			count["compactions"]++
		case "commit":
			count["commits"]++
		case "model_switch":
			count["modelSwitches"]++
		}
	}
	truncated := doc["session"].(map[string]any)["truncated"] == true
	if truncated {
		return
	}
	for k, want := range count {
		if got := num(totals[k]); got != want {
			t.Errorf("totals.%s = %d, events give %d", k, got, want)
		}
	}
}
