package export_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/agentmap/agentmap/builder/redact"
	. "github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/mapfile"
)

// FuzzExport: any bytes read as a map either fail with an error or export
// in every format without panicking; an error never quotes the input.
func FuzzExport(f *testing.F) {
	d := fixtureDoc(f, redact.ModeRelative)
	f.Add(d.Canonical)
	f.Add([]byte(`{"schema":"agentplay/v1","session":{"id":"x"},"events":[{"kind":"exec","targets":[{"file":7}]}]}`))
	f.Add([]byte(`{"schema":"agentplay/v1","session":{"id":"local:codex:"},"agents":[{"id":"sa","parent":"nope"}],"events":[{"kind":"subagent","child":"sa","agent":"sa"}]}`))
	f.Add([]byte("\x1f\x8b garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := mapfile.Read(bytes.NewReader(data))
		if err != nil {
			if len(data) >= 12 && bytes.Contains([]byte(err.Error()), data[:12]) {
				t.Fatalf("error quotes the input: %v", err)
			}
			return
		}
		for _, f := range Formats() {
			x, err := New(f, io.Discard, testOptions(redact.ModeDirsOnly))
			if err != nil {
				t.Fatal(err)
			}
			_ = x.Add(d)
			_, _ = x.Close()
		}
	})
}

// BenchmarkExport measures each format on a large map (the fixture's
// events repeated to about 20,000 events, the map event cap).
func BenchmarkExport(b *testing.B) {
	d := fixtureDoc(b, redact.ModeRelative)
	big := *d.Map
	big.Events = nil
	for len(big.Events) < 20000 {
		for _, e := range d.Map.Events {
			e.Seq = len(big.Events)
			big.Events = append(big.Events, e)
		}
	}
	doc := *d
	doc.Map = &big
	for _, f := range Formats() {
		if f == Bundle || f == JSONL {
			continue // they copy the canonical bytes: measured by the builder's gzip
		}
		b.Run(string(f), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				x, err := New(f, io.Discard, testOptions(""))
				if err != nil {
					b.Fatal(err)
				}
				if err := x.Add(&doc); err != nil {
					b.Fatal(err)
				}
				if _, err := x.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(big.Events)), "events/op")
		})
	}
}
