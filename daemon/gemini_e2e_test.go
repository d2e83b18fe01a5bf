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
// (watchers/gemini/testdata/real: a session and its resumed run, a session
// with a subagent's chat) in random
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
	var feeds []*feed
	err := filepath.WalkDir(srcDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(srcDir, p)
		feeds = append(feeds, &feed{from: rel, to: filepath.Join(proj, "chats", rel), data: b})
		return nil
	})
	if err != nil || len(feeds) < 4 {
		t.Fatalf("%d chat files: %v", len(feeds), err)
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
	bin, home, data, chats := geminiHome(t)
	path := filepath.Join(chats, "session-2025-08-01T10-00-5e55a0e0.json")
	msg := geminiStep
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

// geminiHome is the binary, a HOME with a Gemini CLI chats directory, and
// a data directory.
func geminiHome(t *testing.T) (bin, home, data, chats string) {
	bin, home, data = buildBinary(t), t.TempDir(), filepath.Join(t.TempDir(), "data")
	chats = filepath.Join(home, ".gemini", "tmp", "old-project", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	return bin, home, data, chats
}

// geminiStep is message i of a chat: a model response that ran the tests.
func geminiStep(i int) string {
	return `{"id":"g` + itoa(i) + `","timestamp":"2025-08-01T10:00:0` + itoa(i) + `.000Z","type":"gemini","content":"step","model":"gemini-2.5-pro",` +
		`"tokens":{"input":` + itoa(1000+i) + `,"output":10,"cached":0,"thoughts":0,"tool":0,"total":` + itoa(1010+i) + `},` +
		`"toolCalls":[{"id":"run_shell_command-` + itoa(i) + `","name":"run_shell_command","args":{"command":"go test ./..."},"status":"success",` +
		`"timestamp":"2025-08-01T10:00:0` + itoa(i) + `.500Z","result":[{"functionResponse":{"id":"x","name":"run_shell_command","response":{"output":"ok"}}}]}]}`
}

// TestGeminiWholeDocumentTwinned follows a chat of the older form (one
// JSON document) that a current client resumes: it writes the whole
// conversation again as a .jsonl beside it, and goes on there. The daemon
// read the document first; the map then equals `agentmap build` of the
// copy (which build reads instead of the document), not both counted.
func TestGeminiWholeDocumentTwinned(t *testing.T) {
	bin, home, data, chats := geminiHome(t)
	path := filepath.Join(chats, "session-2025-08-01T10-00-5e55a0e1.json")
	const sid = "5e55a0e1-2222-4222-8222-222222222222"
	user := `{"id":"u1","timestamp":"2025-08-01T10:00:00.500Z","type":"user","content":"run the tests"}`
	msg := geminiStep
	doc := "{\n  \"sessionId\": \"" + sid + "\",\n  \"projectHash\": \"ef56\",\n  \"startTime\": \"2025-08-01T10:00:00.000Z\",\n  \"messages\": [\n    " +
		user + ",\n    " + msg(1) + ",\n    " + msg(2) + "\n  ]\n}\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDaemon(t, bin, home, data)
	waitStore(t, data, expected(t, bin, []string{path}), p)

	// Resumed by a current client: the conversation again, and a step more.
	twin := strings.Join([]string{`{"sessionId":"` + sid + `","projectHash":"ef56","startTime":"2025-08-01T10:00:00.000Z","kind":"main"}`,
		user, msg(1), msg(2), msg(3)}, "\n") + "\n"
	if err := os.WriteFile(path+"l", []byte(twin), 0o600); err != nil {
		t.Fatal(err)
	}
	waitStore(t, data, expected(t, bin, []string{path + "l"}), p)
	p.stop(t)
}
