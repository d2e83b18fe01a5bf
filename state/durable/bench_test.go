package durable

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/internal/cputime"
)

// BenchmarkWriteFiles writes batches of 128 new 1 KiB files into one
// directory, as a catch-up's flush writes maps, and then the same batches
// again over them, as later flushes do. It reports the CPU time per file
// (user and system, of the whole process): the wall time is mostly the
// wait for the disk in syncfs, which is every writer's on the machine.
func BenchmarkWriteFiles(b *testing.B) {
	data := make([]byte, 1024)
	for _, replace := range []bool{false, true} {
		name := "new"
		if replace {
			name = "replace"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			batch := make([]Pending, 128)
			n := 0
			fill := func() {
				for i := range batch {
					batch[i] = Pending{Target: filepath.Join(dir, fmt.Sprintf("%08d-0000-4000-8000-000000000000.json.gz", n)), Data: data}
					batch[i].Replaces = replace // the hint (bench-flush.sh drops this line for a peer without it)
					n++
				}
			}
			if replace {
				fill()
				WriteFiles(batch, 0o600)
			}
			cpu0 := cputime.Process()
			b.ResetTimer()
			for b.Loop() {
				if !replace {
					fill()
				}
				for _, err := range WriteFiles(batch, 0o600) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N*len(batch)), "cpu-µs/file")
		})
	}
}
