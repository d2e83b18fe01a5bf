package builder

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// The corpus's events, as the state database stores them, read back by
// event.DecodeJSON exactly as encoding/json reads them.
func TestDecodeJSONOnCorpus(t *testing.T) {
	n := 0
	for _, evs := range corpusSessions(t) {
		data := event.AppendJSON(nil, evs)
		got, ok := event.DecodeJSON(data)
		if !ok {
			t.Fatalf("DecodeJSON refuses a session's %d events", len(evs))
		}
		var want []event.Event
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeJSON and encoding/json differ on a session's %d events", len(evs))
		}
		n += len(evs)
	}
	t.Logf("%d events", n)
}

// BenchmarkDecodeEvents reads the corpus's sessions back as a flush of
// each does: the batches' JSON, by DecodeJSON and by encoding/json.
func BenchmarkDecodeEvents(b *testing.B) {
	var batches [][]byte
	size := 0
	for _, evs := range corpusSessions(b) {
		data := event.AppendJSON(nil, evs)
		batches = append(batches, data)
		size += len(data)
	}
	b.Run("DecodeJSON", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, data := range batches {
				if _, ok := event.DecodeJSON(data); !ok {
					b.Fatal("refused")
				}
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, data := range batches {
				var evs []event.Event
				if err := json.Unmarshal(data, &evs); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// Build reads its events and never writes to them: the daemon hands it
// the very slices it holds or has just read back, without a copy.
func TestBuildLeavesItsEvents(t *testing.T) {
	n := 0
	for _, evs := range corpusSessions(t) {
		before := event.AppendJSON(nil, evs)
		_, err := Build(evs, Options{}) // an error (ErrNoSession...) must not write either
		if after := event.AppendJSON(nil, evs); string(after) != string(before) {
			t.Fatalf("Build changed a session's %d events (err %v)", len(evs), err)
		}
		if err == nil {
			n++
		}
	}
	if n == 0 {
		t.Skip("no session built")
	}
	t.Logf("%d sessions", n)
}
