package builder

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// sameAsReference checks that the encoder by hand gives the reference
// encoder's bytes and content hash for m.
func sameAsReference(t *testing.T, name string, m *Map) {
	t.Helper()
	got, err := m.Canonical()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	gotHash := m.ContentHash
	want, err := referenceCanonical(m)
	if err != nil {
		t.Fatalf("%s: reference: %v", name, err)
	}
	if gotHash != m.ContentHash {
		t.Errorf("%s: content hash %s, reference %s", name, gotHash, m.ContentHash)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: bytes differ from the reference at %d:\n got %.120s\nwant %.120s", name, i, got[i:], want[i:])
	}
}

func TestEncodeMatchesReference(t *testing.T) {
	for name, evs := range fixtureStreams(t) {
		for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed} {
			sameAsReference(t, name+"/"+string(mode), mustBuild(t, evs, Options{PathMode: mode, HashKey: goldenKey, Producer: "agentmap test"}))
		}
	}
	sameAsReference(t, "synthetic", mustBuild(t, syntheticSession(5000), Options{}))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		sameAsReference(t, "random "+itoa(i), randomMap(r))
	}
}

// TestEncodeMatchesReferenceOnCorpus builds every session of the corpus.
func TestEncodeMatchesReferenceOnCorpus(t *testing.T) {
	for i, evs := range corpusSessions(t) {
		for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeHashed} {
			sameAsReference(t, "corpus "+itoa(i)+"/"+string(mode), mustBuild(t, evs, Options{PathMode: mode, HashKey: goldenKey}))
		}
	}
}

// TestGzipOfBuildIsCanonical: Gzip compresses the bytes Build encoded,
// which are the canonical bytes, and gives the same bytes as a fresh map.
func TestGzipOfBuildIsCanonical(t *testing.T) {
	evs := syntheticSession(3000)
	m := mustBuild(t, evs, Options{})
	gz, err := m.Gzip()
	if err != nil {
		t.Fatal(err)
	}
	canon, _ := m.Canonical()
	fresh := &Map{}
	*fresh = *m
	fresh.canon = nil
	gz2, err := fresh.Gzip()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gz, gz2) {
		t.Fatal("gzip of the map Build encoded differs from that of a fresh encoding")
	}
	if got := gunzip(t, gz); !bytes.Equal(got, canon) {
		t.Fatal("gzip does not hold the canonical bytes")
	}
}

var randomKinds = []string{"read", "search", "edit", "exec", "verify", "mcp", "skill", "subagent", "web", "tool",
	"llm", "user", "error", "delay", "compaction", "commit", "pr_create", "pr_merge", "pr_close", "pr_comment",
	"ticket", "artifact", "skill_write", "model_switch", "other"}

// randomText mixes plain text, characters JSON escapes, non-ASCII and
// invalid UTF-8; empty a third of the time, so optional fields come and go.
func randomText(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return ""
	}
	parts := []string{"a", "src/x.go", "\"", "\\", "\n", "\t", "\x01", "\x1f", "é", "\u2028", "\x7f", "\xff", "日本", " "}
	var b []byte
	for range 1 + r.IntN(5) {
		b = append(b, parts[r.IntN(len(parts))]...)
	}
	return string(b)
}

func randomMap(r *rand.Rand) *Map {
	str := func() string { return randomText(r) }
	n := func() int { return r.IntN(4) - 1 } // -1 .. 2: zero and negative too
	opt := func() *int {
		if r.IntN(2) == 0 {
			return nil
		}
		v := r.IntN(50)
		return &v
	}
	opt64 := func() *int64 {
		if r.IntN(2) == 0 {
			return nil
		}
		v := r.Int64N(1 << 40)
		return &v
	}
	cost := func() float64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return float64(r.IntN(5))
		case 2:
			return 1e-7 * float64(r.IntN(1000))
		}
		return r.Float64() * 100
	}
	m := &Map{Schema: Schema, Session: Session{ID: str(), AgentTool: str(), CLIVersion: str(), StartedAt: str(),
		DurationMs: r.Int64N(1e9), Models: []string{str(), str()}[:r.IntN(3)], PathMode: "relative",
		Truncated: r.IntN(2) == 0, Outcome: str(), Role: str(), ParentSessionID: str()},
		Totals: Totals{CostUSD: cost(), ErrorsByClass: map[string]int{str(): 1, "b": 2}}}
	// Every counter its own value, so that two swapped are seen.
	fillCounters(reflect.ValueOf(&m.Totals).Elem(), r)
	for range r.IntN(4) {
		m.Repos = append(m.Repos, Repo{ID: str(), Name: str(), Remote: str()})
	}
	for i := range r.IntN(6) {
		m.Files = append(m.Files, File{ID: i, Repo: str(), Path: str(), Reads: n(), Edits: n(), Hits: n(), First: n(), Op: str()})
	}
	for range r.IntN(4) {
		m.Agents = append(m.Agents, Agent{ID: str(), Parent: str(), Kind: str(), SubagentType: str(), Model: str(),
			LaunchSeq: opt(), Start: r.Int64N(1e6), End: r.Int64N(1e6), Calls: n(), Requests: n(), Tokens: r.Int64N(1e9),
			Cost: cost(), Outcome: str()})
	}
	if r.IntN(3) > 0 {
		m.Tasks = []Task{}
		for range r.IntN(3) {
			m.Tasks = append(m.Tasks, Task{N: n(), ID: str(), Name: str(), Source: str(), StartSeq: n(), EndSeq: n(),
				StartT: r.Int64N(1e6), EndT: r.Int64N(1e6), FirstTurn: n(), LastTurn: n()})
		}
	}
	for range r.IntN(3) {
		m.PRs = append(m.PRs, PR{Provider: str(), Repo: str(), Number: n(), URL: str(), Seq: n(), State: str()})
	}
	for i := range r.IntN(40) {
		e := Event{Seq: i, T: r.Int64N(1e7) - 10, Kind: randomKinds[r.IntN(len(randomKinds))], Agent: str(),
			Err: r.IntN(2) == 0, Task: n(), Model: str(), Cat: str(), Tool: str(), Verb: str(), OutBytes: opt64(),
			Dur: opt64(), Server: str(), Skill: str(), SubagentType: str(), Child: str(), Host: str(), ErrClass: str(),
			ExitCode: opt(), RetryOf: opt(), Attempt: n(),
			In: r.Int64N(1e6), CW: r.Int64N(1e6), CR: r.Int64N(1e6), Out: r.Int64N(1e6), Cost: cost(), Latency: opt64(),
			Stop: str(), Thinking: r.IntN(2) == 0, ToolCalls: n(), TextChars: n(), Chars: n(), Images: n(), URLs: n(),
			Source: str(), Hook: str(), HookEvent: str(), SrcUUID: str(), Ref: opt(), Retry: n(), Cause: str(),
			Ms: r.Int64N(1e5), Trigger: str(), PreTokens: r.Int64N(1e6), PostTokens: r.Int64N(1e6), Repo: str(),
			SHA: str(), Files: n(), Ins: n(), Del: n(), Number: n(), URL: str(), Tracker: str(), Action: str(),
			ID: str(), Version: str(), Name: str(), From: str(), To: str()}
		for range r.IntN(4) {
			e.Targets = append(e.Targets, Target{File: n(), Label: str(), Touch: str(), Op: str()})
		}
		if r.IntN(2) == 0 {
			e.VCS = &VCS{Provider: str(), Action: str(), Repo: str(), Number: n()}
		}
		m.Events = append(m.Events, e)
	}
	return m
}

func gunzip(t *testing.T, gz []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fillCounters(v reflect.Value, r *rand.Rand) {
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(r.Int64N(1 << 40))
		case reflect.Struct:
			fillCounters(f, r)
		}
	}
}

// TestEncodeConcurrent: maps built and gzipped at the same time (a flush
// builds on every core) share the pooled buffers and writers, never bytes.
func TestEncodeConcurrent(t *testing.T) {
	var streams [][]event.Event
	for _, evs := range fixtureStreams(t) {
		streams = append(streams, evs)
	}
	streams = append(streams, syntheticSession(2000), syntheticSession(300))
	want := make([][]byte, len(streams))
	for i, evs := range streams {
		gz, err := mustBuild(t, evs, Options{}).Gzip()
		if err != nil {
			t.Fatal(err)
		}
		want[i] = gz
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(streams))
	for g := range 8 {
		wg.Go(func() {
			for k := range 3 * len(streams) {
				i := (g + k) % len(streams)
				m, err := Build(streams[i], Options{})
				if err != nil {
					errs <- err.Error()
					return
				}
				gz, err := m.Gzip()
				if err != nil || !bytes.Equal(gz, want[i]) {
					errs <- fmt.Sprintf("stream %d: bytes differ when built concurrently", i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
