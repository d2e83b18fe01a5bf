package daemon

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/watchers"
)

// BenchmarkCatchUp measures `run --once` over many small synthetic Claude
// sessions with the real parsers and builder: the first run on a machine
// with a long history.
func BenchmarkCatchUp(b *testing.B) {
	const sessions = 1000
	home := b.TempDir()
	root := watchers.Root{Agent: "claude", Layout: watchers.LayoutClaude, Dir: filepath.Join(home, ".claude")}
	var total int64
	for i := 0; i < sessions; i++ {
		dir := filepath.Join(root.Dir, "projects", fmt.Sprintf("-w-app%d", i/100))
		os.MkdirAll(dir, 0o700)
		sid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		var content []byte
		for j := 0; j < 5; j++ {
			content = fmt.Appendf(content, `{"type":"user","sessionId":%q,"uuid":"u%d","timestamp":"2026-01-01T00:00:%02d.000Z","cwd":"/tmp/bench","version":"2.1.0","message":{"role":"user","content":"hello"}}`+"\n", sid, j, j)
			content = fmt.Appendf(content, `{"type":"assistant","sessionId":%q,"uuid":"a%d","timestamp":"2026-01-01T00:00:%02d.500Z","cwd":"/tmp/bench","requestId":"r%d","message":{"id":"m%d","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"output_tokens":5}}}`+"\n", sid, j, j, j, j)
		}
		os.WriteFile(filepath.Join(dir, sid+".jsonl"), content, 0o600)
		total += int64(len(content))
	}
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		data := filepath.Join(b.TempDir(), "data")
		start := time.Now()
		if err := New(Options{DataDir: data, Once: true, Roots: []watchers.Root{root}}).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/sessions, "µs/session")
	}
}

// BenchmarkExcludeAppliedAtStart measures a start whose privacy.exclude
// patterns changed since the last run: 2,000 kept sessions, half of them
// now covered and forgotten. It reports the start's time per forgotten
// session.
func BenchmarkExcludeAppliedAtStart(b *testing.B) {
	const sessions, covered = 2000, 1000
	home := b.TempDir()
	root := watchers.Root{Agent: "claude", Layout: watchers.LayoutClaude, Dir: filepath.Join(home, ".claude")}
	for i := 0; i < sessions; i++ {
		dir := filepath.Join(root.Dir, "projects", fmt.Sprintf("-w-app%d", i/100))
		os.MkdirAll(dir, 0o700)
		sid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		cwd := "/w/app"
		if i%2 == 0 {
			cwd = "/secret/app"
		}
		content := fmt.Appendf(nil, `{"type":"user","sessionId":%q,"uuid":"u0","timestamp":"2026-01-01T00:00:00.000Z","cwd":%q,"version":"2.1.0","message":{"role":"user","content":"hello"}}`+"\n", sid, cwd)
		os.WriteFile(filepath.Join(dir, sid+".jsonl"), content, 0o600)
	}
	kept := filepath.Join(home, "kept")
	if err := New(Options{DataDir: kept, Once: true, Roots: []watchers.Root{root}}).Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		data := filepath.Join(b.TempDir(), "data")
		if err := os.CopyFS(data, os.DirFS(kept)); err != nil {
			b.Fatal(err)
		}
		filepath.WalkDir(data, func(p string, e fs.DirEntry, err error) error {
			if err == nil {
				mode := os.FileMode(0o600)
				if e.IsDir() {
					mode = 0o700
				}
				err = os.Chmod(p, mode) // a data directory is the user's alone
			}
			return err
		})
		b.StartTimer()
		start := time.Now()
		opt := Options{DataDir: data, Once: true, Roots: []watchers.Root{root},
			Exclude: func(dir string) bool { return strings.HasPrefix(dir, "/secret/") }, ExcludeKey: "bench"}
		if err := New(opt).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/covered, "µs/forgotten")
	}
}
