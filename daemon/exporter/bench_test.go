package exporter

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export"
)

// BenchmarkExport is one export of 200 freshly flushed sessions in every
// format.
func BenchmarkExport(b *testing.B) {
	f := newFixture(b)
	for i := range 200 {
		f.flush(fmt.Sprintf("s%03d", i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f2 := *f
		f2.out = b.TempDir()
		s := f2.scheduler(f.db, Config{Policy: All, Formats: export.Formats()})
		f.clock.Advance(time.Hour)
		b.StartTimer()
		if _, err := s.Export(f.clock.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNothingDue is the periodic check of a store of 5000 exported
// sessions when none changed: what an idle daemon pays each period.
func BenchmarkNothingDue(b *testing.B) {
	f := newFixture(b)
	for i := range 5000 {
		f.flush(fmt.Sprintf("s%04d", i))
	}
	s := f.scheduler(nil, Config{Formats: []export.Format{export.JSONL}})
	if _, err := s.Export(f.clock.Now()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.clock.Advance(time.Hour)
		o, err := s.Export(f.clock.Now())
		if err != nil || len(o.Files) != 0 {
			b.Fatalf("%v %v", o.Files, err)
		}
	}
}
