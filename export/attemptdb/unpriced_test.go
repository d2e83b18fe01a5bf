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
	load := func(name string) *mapfile.Map {
		t.Helper()
		d, err := mapfile.ReadFile(filepath.Join("..", "..", "testdata", "builder", name+".map.json"))
		if err != nil {
			t.Fatal(err)
		}
		return d.Map
	}
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
		{"no tokens", load("cursor_transcript"), 0.0, nil},
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
