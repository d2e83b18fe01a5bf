package attemptdb_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/attemptdb"
	"github.com/agentmap/agentmap/export/exportcheck"
	"github.com/agentmap/agentmap/export/mapfile"
)

// TestSessionEndedSaysUnpriced: session_ended never shows a cost of 0 for
// tokens that were used, as `list` and the AgentScope export do not:
// x_agentmap_unpriced_models names the models without a price (a request
// that names none as "unknown"), and x_agentmap_cost_usd, the priced part,
// is left out when nothing was priced. The stream stays valid against the
// published schema and AttemptDB's conformance rules.
func TestSessionEndedSaysUnpriced(t *testing.T) {
	load := func(name string) *mapfile.Map { return builderMap(t, name) }
	// unprice takes the price off the requests of the models named (to the
	// new name), as the builder leaves a model it has no price for.
	unprice := func(m *mapfile.Map, rename map[string]string) *mapfile.Map {
		for i := range m.Events {
			e := &m.Events[i]
			if to, ok := rename[e.Model]; ok && e.Kind == "llm" {
				m.Totals.CostUSD -= e.Cost
				e.Model, e.Cost = to, 0
			}
		}
		if m.Totals.CostUSD < 1e-9 {
			m.Totals.CostUSD = 0
		}
		return m
	}
	const opus, haiku, sonnet = "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"
	tests := []struct {
		name     string
		m        *mapfile.Map
		cost     any // nil: no x_agentmap_cost_usd
		unpriced any // nil: no x_agentmap_unpriced_models
	}{
		{"priced", load("claude_session"), 0.192223, nil},
		{"partly priced", unprice(load("claude_session"), map[string]string{haiku: "mystery-model"}), 0.189108, []any{"mystery-model"}},
		{"wholly unpriced", unprice(load("claude_session"), map[string]string{opus: "mystery-model", haiku: "", sonnet: "mystery-model"}), nil, []any{"mystery-model", "unknown"}},
		{"usage not recorded", load("cursor_transcript"), nil, nil},
	}
	var stream bytes.Buffer
	w, err := attemptdb.NewWriter(&stream, attemptdb.Options{DeviceID: "0190f3a2-7b4c-7d10-9e2f-3a4b5c6d7e8f", FirstSeq: 1, AdapterVersion: "agentmap test"})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range tests {
		// Each its own session, so the stream repeats no event id.
		tc.m.Session.ID += "-" + strconv.Itoa(i)
		var one bytes.Buffer
		ow, _ := attemptdb.NewWriter(&one, attemptdb.Options{DeviceID: "0190f3a2-7b4c-7d10-9e2f-3a4b5c6d7e8f", FirstSeq: 1, AdapterVersion: "agentmap test"})
		if err := ow.Add(tc.m); err != nil {
			t.Fatal(err)
		}
		ow.Close()
		attrs := sessionEndedAttrs(t, one.String())
		if cost, ok := attrs["x_agentmap_cost_usd"].(float64); (tc.cost == nil) == ok || ok && math.Abs(cost-tc.cost.(float64)) > 1e-9 {
			t.Errorf("%s: x_agentmap_cost_usd %v (present %v), want %v", tc.name, cost, ok, tc.cost)
		}
		if got, ok := attrs["x_agentmap_unpriced_models"]; (tc.unpriced == nil) == ok || ok && !reflect.DeepEqual(got, tc.unpriced) {
			t.Errorf("%s: x_agentmap_unpriced_models %v (present %v), want %v", tc.name, got, ok, tc.unpriced)
		}
		if err := w.Add(tc.m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := attemptdb.Check(bytes.NewReader(stream.Bytes()))
	if err != nil || !rep.Compatible() {
		t.Fatalf("conformance: %v\n%v", err, rep)
	}
	schemas, err := exportcheck.LoadSchemas(filepath.Join("..", "..", "..", "shared", "schemas"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("published schemas not available: the schema is not checked")
	}
	if err != nil {
		t.Fatal(err)
	}
	if p := schemas.Check(export.AttemptDB, stream.Bytes(), nil); len(p) > 0 {
		t.Errorf("against the published schema:\n%s", strings.Join(p, "\n"))
	}
}

// sessionEndedAttrs finds the one session_ended event of a stream.
// TestUsageNotRecordedIsNotZero: a session or request whose log recorded
// no usage is not written as one that used 0 tokens at $0: tokens, output
// tokens and cost are left out of its session_ended (and of a request's
// agent_message), x_agentmap_requests_without_usage counts those requests
// (and a request says x_agentmap_usage_not_recorded); a session only some
// of whose requests recorded none keeps its figures and says the count.
func TestUsageNotRecordedIsNotZero(t *testing.T) {
	load := func(name string) *mapfile.Map { return builderMap(t, name) }
	partly := load("claude_session")
	for i := range partly.Events {
		if e := &partly.Events[i]; e.Kind == "llm" {
			partly.Totals.Tokens -= e.In + e.CW + e.CR + e.Out
			partly.Totals.OutputTokens -= e.Out
			partly.Totals.CostUSD -= e.Cost
			e.In, e.CW, e.CR, e.Out, e.Cost = 0, 0, 0, 0, 0
			break
		}
	}
	for _, tc := range []struct {
		name    string
		m       *mapfile.Map
		without int
		figures bool
	}{
		{"recorded", load("claude_session"), 0, true},
		{"partly recorded", partly, 1, true},
		{"not recorded", load("cursor_transcript"), load("cursor_transcript").Totals.Requests, false},
	} {
		var out bytes.Buffer
		w, _ := attemptdb.NewWriter(&out, attemptdb.Options{DeviceID: "0190f3a2-7b4c-7d10-9e2f-3a4b5c6d7e8f", FirstSeq: 1, AdapterVersion: "agentmap test"})
		if err := w.Add(tc.m); err != nil {
			t.Fatal(err)
		}
		w.Close()
		attrs := sessionEndedAttrs(t, out.String())
		if got, _ := attrs["x_agentmap_requests_without_usage"].(float64); int(got) != tc.without {
			t.Errorf("%s: x_agentmap_requests_without_usage %v, want %d", tc.name, attrs["x_agentmap_requests_without_usage"], tc.without)
		}
		for _, k := range []string{"x_agentmap_tokens", "output_tokens", "x_agentmap_cost_usd"} {
			if _, ok := attrs[k]; ok != tc.figures {
				t.Errorf("%s: session_ended has %s: %v, want %v", tc.name, k, ok, tc.figures)
			}
		}
		if tc.figures && attrs["x_agentmap_tokens"].(float64) != float64(tc.m.Totals.Tokens) {
			t.Errorf("%s: x_agentmap_tokens %v, the map %d", tc.name, attrs["x_agentmap_tokens"], tc.m.Totals.Tokens)
		}
		said, messages := 0, 0
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var ev struct {
				Kind      string         `json:"kind"`
				SourceSeq int            `json:"source_seq"`
				Attrs     map[string]any `json:"attrs"`
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Kind != "agent_message" {
				continue
			}
			messages++
			_, tokens := ev.Attrs["output_tokens"]
			if ev.Attrs["x_agentmap_usage_not_recorded"] == true {
				said++
				if tokens {
					t.Errorf("%s: an agent_message says usage not recorded and output_tokens", tc.name)
				}
			} else if !tokens {
				t.Errorf("%s: an agent_message says neither its tokens nor that none were recorded", tc.name)
			}
		}
		if said != tc.without || messages == 0 {
			t.Errorf("%s: %d of %d agent_message events say usage not recorded, want %d", tc.name, said, messages, tc.without)
		}
	}
}

// builderMap reads the golden map testdata/builder/NAME.map.json.
func builderMap(t *testing.T, name string) *mapfile.Map {
	t.Helper()
	d, err := mapfile.ReadFile(filepath.Join("..", "..", "testdata", "builder", name+".map.json"))
	if err != nil {
		t.Fatal(err)
	}
	return d.Map
}

func sessionEndedAttrs(t *testing.T, stream string) map[string]any {
	t.Helper()
	var found map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stream), "\n") {
		var ev struct {
			Kind  string         `json:"kind"`
			Attrs map[string]any `json:"attrs"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Kind == "session_ended" {
			if found != nil {
				t.Fatal("two session_ended events")
			}
			found = ev.Attrs
		}
	}
	if found == nil {
		t.Fatal("no session_ended event")
	}
	return found
}
