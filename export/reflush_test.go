package export_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	. "github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/mapfile"
)

// A session flushed early and again once it grew: the AttemptDB events of
// the first flush keep their ids in the second, so ingestion deduplicates
// them instead of storing them twice.
func TestReflushKeepsEventIDs(t *testing.T) {
	all := fixtureEvents()
	var early []event.Event
	for _, e := range all {
		if e.T > t0+3200 { // up to the compaction, before the commit
			break
		}
		early = append(early, e)
	}
	ids := func(events []event.Event) map[string]string {
		m, err := builder.Build(events, builder.Options{Producer: "agentmap test"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := mapfile.FromMap(m)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := exportDocs(t, AttemptDB, testOptions(""), d)
		got := map[string]string{}
		for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			var ev struct {
				ID   string `json:"event_id"`
				Kind string `json:"kind"`
			}
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatal(err)
			}
			got[ev.ID] = ev.Kind
		}
		return got
	}
	first, second := ids(early), ids(all)
	kept := 0
	for id, kind := range first {
		if kind == "session_ended" {
			// The end moved: a new fact with a new id.
			if second[id] != "" {
				t.Error("the first flush's session_ended is also in the second")
			}
			continue
		}
		if second[id] != kind {
			t.Errorf("%s event %s of the first flush is not in the second", kind, id)
		}
		kept++
	}
	if kept < 20 {
		t.Errorf("only %d events compared", kept)
	}
}
