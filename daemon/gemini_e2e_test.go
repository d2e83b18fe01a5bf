package daemon

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGeminiCrashEquivalence appends the chats the real Gemini CLI wrote
// (watchers/gemini/testdata/real: a session and its resumed run) in random
// chunks that split records, SIGKILLs the daemon at random moments, and
// checks that its map is byte-identical to `agentmap build` of the
// complete files. The client rewrites no file in place: it appends a
// message again each time it changes (tokens, tool results), which the
// parser's carry-state must fold in exactly once across restarts.
func TestGeminiCrashEquivalence(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	repo := filepath.Join(home, "src", "gemini-demo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, ".gemini", "tmp", "gemini-demo")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".project_root"), []byte(repo+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srcDir := filepath.Join("..", "watchers", "gemini", "testdata", "real", "tmp", "gemini-demo", "chats")
	ents, err := os.ReadDir(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	var feeds []*feed
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(srcDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		feeds = append(feeds, &feed{from: e.Name(), to: filepath.Join(proj, "chats", e.Name()), data: b})
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	p := startDaemon(t, bin, home, data, "--log-level", "debug")
	kills := 0
	for {
		var open []*feed
		for _, f := range feeds {
			if f.written < len(f.data) {
				open = append(open, f)
			}
		}
		if len(open) == 0 {
			break
		}
		f := open[rng.IntN(len(open))]
		f.write(t, 1+rng.IntN(1<<10))
		if rng.IntN(3) == 0 {
			time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
			p.kill()
			kills++
			p = startDaemon(t, bin, home, data, "--log-level", "debug")
		}
	}
	var paths []string
	for _, f := range feeds {
		paths = append(paths, f.to)
	}
	want := expected(t, bin, paths)
	waitStore(t, data, want, p)
	p.stop(t)
	if kills < 5 {
		t.Errorf("only %d kills", kills)
	}
	t.Logf("%d kills; %d map(s) identical to agentmap build", kills, len(want))
}

// TestGeminiWholeDocumentRewritten follows a chat of the form older
// clients wrote (one JSON document, rewritten whole at every change) while
// it grows and is rewritten, with a kill in between: the map equals
// `agentmap build` of the last version.
func TestGeminiWholeDocumentRewritten(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	chats := filepath.Join(home, ".gemini", "tmp", "old-project", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(chats, "session-2025-08-01T10-00-5e55a0e0.json")
	msg := func(i int) string {
		return `{"id":"g` + itoa(i) + `","timestamp":"2025-08-01T10:00:0` + itoa(i) + `.000Z","type":"gemini","content":"step","model":"gemini-2.5-pro",` +
			`"tokens":{"input":` + itoa(1000+i) + `,"output":10,"cached":0,"thoughts":0,"tool":0,"total":` + itoa(1010+i) + `},` +
			`"toolCalls":[{"id":"run_shell_command-` + itoa(i) + `","name":"run_shell_command","args":{"command":"go test ./..."},"status":"success",` +
			`"timestamp":"2025-08-01T10:00:0` + itoa(i) + `.500Z","result":[{"functionResponse":{"id":"x","name":"run_shell_command","response":{"output":"ok"}}}]}]}`
	}
	write := func(n int) {
		var b strings.Builder
		b.WriteString("{\n  \"sessionId\": \"5e55a0e0-2222-4222-8222-222222222222\",\n  \"projectHash\": \"ef56\",\n  \"startTime\": \"2025-08-01T10:00:00.000Z\",\n  \"messages\": [\n")
		b.WriteString(`    {"id":"u1","timestamp":"2025-08-01T10:00:00.500Z","type":"user","content":"run the tests"}`)
		for i := 1; i <= n; i++ {
			b.WriteString(",\n    " + msg(i))
		}
		b.WriteString("\n  ]\n}\n")
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(1)
	p := startDaemon(t, bin, home, data)
	time.Sleep(1500 * time.Millisecond)
	write(3)
	time.Sleep(300 * time.Millisecond)
	p.kill()
	write(5)
	p = startDaemon(t, bin, home, data)
	want := expected(t, bin, []string{path})
	waitStore(t, data, want, p)
	p.stop(t)
}

func itoa(i int) string { return strconv.Itoa(i) }
