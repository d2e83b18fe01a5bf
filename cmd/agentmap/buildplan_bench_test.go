package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// planHome lays out n small Claude sessions, a hundred to a project
// directory (as scripts/benchhome does), and returns their paths.
func planHome(b *testing.B, n int) []string {
	b.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	paths := make([]string, 0, n)
	for i := range n {
		project := filepath.Join(dir, "projects", fmt.Sprintf("-home-bench-project-%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(project, 0o700); err != nil {
				b.Fatal(err)
			}
		}
		p := filepath.Join(project, fmt.Sprintf("%08x-0000-4000-8000-%012x.jsonl", i, i))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// BenchmarkBuildPlan measures what the plan of a build keeps an input: the
// live heap after planning 20,000 logs, less the live heap before, per
// input (the paths themselves, given on the command line, are not counted).
func BenchmarkBuildPlan(b *testing.B) {
	const n = 20000
	paths := planHome(b, n)
	b.ResetTimer()
	var perInput float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		pl := &buildPlan{}
		pl.given(paths)
		planBuild(context.Background(), pl, "auto", io.Discard)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(pl.sessions) != n {
			b.Fatalf("%d sessions planned, want %d", len(pl.sessions), n)
		}
		perInput = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
		runtime.KeepAlive(pl)
	}
	b.ReportMetric(perInput, "live-B/input")
}
