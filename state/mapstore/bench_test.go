package mapstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmap/agentmap/internal/cputime"
)

// BenchmarkWriteMany writes batches of 128 new 1 KiB maps spread over four
// months of one agent, as a catch-up's flush does, and then the same
// batches again over them, as later flushes do. It reports the CPU time
// per map, which is where the checks of the store's directories (once a
// batch per directory) would show.
func BenchmarkWriteMany(b *testing.B) {
	data := make([]byte, 1024)
	for _, replace := range []bool{false, true} {
		name := "new"
		if replace {
			name = "replace"
		}
		b.Run(name, func(b *testing.B) {
			s := New(b.TempDir())
			batch := make([]Item, 128)
			n := 0
			fill := func() {
				for i := range batch {
					start := time.Date(2026, time.Month(1+n%4), 1, 0, 0, 0, 0, time.UTC)
					batch[i] = Item{Rel: RelPath("claude", fmt.Sprintf("%08d-0000-4000-8000-000000000000", n), start), Data: data, Replaces: replace}
					n++
				}
			}
			if replace {
				fill()
				s.WriteMany(batch)
			}
			cpu0 := cputime.Process()
			b.ResetTimer()
			for b.Loop() {
				if !replace {
					fill()
				}
				for _, err := range s.WriteMany(batch) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N*len(batch)), "cpu-µs/map")
		})
	}
}
