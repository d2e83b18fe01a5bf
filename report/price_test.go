package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	bev "github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/export/mapfile"
)

// pricedMap builds a Codex session of requests to models, as the builder
// writes it with the given [prices] overrides, and reads it back as the
// report does.
func pricedMap(t *testing.T, id string, over map[string]builder.Price, models ...string) *Map {
	t.Helper()
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC).UnixMilli()
	evs := []bev.Event{{Kind: bev.KindSession, T: start, Session: &bev.Session{NativeID: id, AgentTool: "codex"}}}
	for i, model := range models {
		evs = append(evs, bev.Event{Kind: bev.KindLLM, T: start + int64(i+1)*1000, Model: model,
			LLM: &bev.LLM{In: 400_000, CW: 100_000, CR: 2_000_000, Out: 50_000, LatencyMs: -1}})
	}
	b, err := builder.Build(evs, builder.Options{Prices: over})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := b.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUnpricedAsTheMapSays: a model the embedded table lacks but the
// config's [prices] priced when the map was written ("unknown", a request
// that names no model, and a house model) has its cost in the map, and
// neither the usage rows, the table's footer nor the report's data call it
// unpriced, while a model nothing priced still is. The same model in a map
// written without the override is unpriced in that map's rows alone.
func TestUnpricedAsTheMapSays(t *testing.T) {
	unit := builder.Price{Input: 1, CacheWrite: 1, CacheWrite1h: 1, CacheRead: 0.1, Output: 2}
	over := map[string]builder.Price{"unknown": unit, "house-model-7": unit}
	a := pricedMap(t, "a", over, "", "house-model-7", "mystery-model-9")
	b := pricedMap(t, "b", nil, "house-model-7")
	if a.Totals.CostUSD == 0 || len(a.UnpricedModels("")) != 1 {
		t.Fatalf("the map priced with overrides: cost $%v, unpriced %q", a.Totals.CostUSD, a.UnpricedModels(""))
	}

	byModel := Usage([]*Map{a}, ByModel, time.UTC)
	if len(byModel.Rows) != 3 {
		t.Fatalf("by model: %+v", byModel.Rows)
	}
	for _, r := range byModel.Rows {
		want := []string(nil)
		if r.Key == "mystery-model-9" {
			want = []string{r.Key}
		} else if r.CostUSD == 0 {
			t.Errorf("model %s: no cost, the map has one", r.Key)
		}
		if !slices.Equal(r.Unpriced, want) {
			t.Errorf("model %s: unpriced %q, want %q", r.Key, r.Unpriced, want)
		}
	}
	if !slices.Equal(byModel.Totals.Unpriced, []string{"mystery-model-9"}) {
		t.Errorf("totals: unpriced %q", byModel.Totals.Unpriced)
	}
	var out bytes.Buffer
	WriteUsageTable(&out, byModel, false)
	text := out.String()
	if !strings.Contains(text, "unpriced in their maps: mystery-model-9;") {
		t.Errorf("the footer does not name the model nothing priced:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "unknown ") || strings.HasPrefix(line, "house-model-7 ") {
			if strings.Contains(line, "unpriced") {
				t.Errorf("a model the map priced reads unpriced: %q", line)
			}
		}
		if strings.HasPrefix(line, "unpriced in their maps") && (strings.Contains(line, "unknown") || strings.Contains(line, "house-model-7")) {
			t.Errorf("the footer names a model the map priced: %q", line)
		}
	}

	bySess := Usage([]*Map{a, b}, BySess, time.UTC)
	got := map[string][]string{}
	for _, r := range bySess.Rows {
		got[r.Key] = r.Unpriced
	}
	if !slices.Equal(got["a"], []string{"mystery-model-9"}) || !slices.Equal(got["b"], []string{"house-model-7"}) {
		t.Errorf("session rows: unpriced %q", got)
	}

	// The report's session row holds the ids of its unpriced models at
	// report.js S.unpriced (26), which its cost figures read.
	for m, want := range map[*Map][]string{a: {"mystery-model-9"}, b: {"house-model-7"}} {
		st := newStrtab()
		row := sessionRow(st, m, len(m.Events))
		var names []string
		for _, id := range row[rowUnpriced].([]int) {
			names = append(names, st.list[id])
		}
		if !slices.Equal(names, want) {
			t.Errorf("report data of session %s: unpriced %q, want %q", m.Session.NativeID(), names, want)
		}
	}
}

// The places the page's script reads a session row's unpriced models and
// its requests without usage at (report.js S) are the row's.
func TestRowPlacesAsTheScriptReadsThem(t *testing.T) {
	for name, at := range map[string]int{"unpriced": rowUnpriced, "nu": rowNoUsage} {
		if !strings.Contains(script, fmt.Sprintf(" %s:%d", name, at)) {
			t.Errorf("report.js S has no %s:%d", name, at)
		}
	}
	m := synthMap(3, 40)
	m.Events = append(m.Events, mapfile.Event{Seq: len(m.Events), T: 1, Kind: "llm", Model: "m"}) // no usage
	row := sessionRow(newStrtab(), m, len(m.Events))
	if len(row) != rowNoUsage+1 || row[rowNoUsage] != m.RequestsWithoutUsage() || m.RequestsWithoutUsage() == 0 {
		t.Errorf("row of %d places, requests without usage %v (the map's %d)", len(row), row[len(row)-1], m.RequestsWithoutUsage())
	}
}
