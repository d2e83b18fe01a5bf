package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/internal/cite"
)

// TestCorpus parses every corpus rollout: no record may fault, every record
// type must be known (handled or explicitly ignored), and each file yields
// one session with its id.
func TestCorpus(t *testing.T) {
	for _, path := range corpusFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			res := parseFile(t, path)
			for _, err := range res.errs {
				if errors.Is(err, errInternal) {
					t.Errorf("fault: %v", err)
				} else {
					t.Errorf("error: %v", err)
				}
			}
			if len(res.unknown) > 0 {
				t.Errorf("unknown record types: %v", res.unknown)
			}
			if res.src.Session == "" {
				t.Fatalf("no session")
			}
			if len(res.events) == 0 || res.events[0].Kind != event.KindSession {
				t.Fatalf("first event is not the session")
			}
			if got := res.events[0].Session.NativeID; got != res.src.Session {
				t.Errorf("session id %q, source %q", got, res.src.Session)
			}
			checkEvents(t, res.events)
		})
	}
}

// checkEvents checks what every event list must satisfy: times never go
// back, results follow their calls, ids are set where they pair.
func checkEvents(t *testing.T, evs []event.Event) {
	t.Helper()
	calls := map[string]bool{}
	var last int64
	for i, ev := range evs {
		if ev.T < last {
			t.Errorf("event %d (%s): time goes back %d < %d", i, ev.Kind, ev.T, last)
		}
		last = ev.T
		switch ev.Kind {
		case event.KindCall:
			if ev.Call.Kind == "" || ev.Call.Tool == "" {
				t.Errorf("event %d: call without kind or tool (kind %s, tool %s)", i, cite.Bytes(ev.Call.Kind), cite.Bytes(ev.Call.Tool))
			}
			c := ev.Call
			for _, f := range []struct{ name, s string }{{"tool", c.Tool}, {"server", c.Server}, {"MCP tool", c.MCPTool},
				{"subagent type", c.SubagentType}, {"host", c.Host}, {"continues", c.Continues}, {"category", c.Cat}} {
				if f.s != "" && identifier(f.s) != f.s {
					t.Errorf("event %d: the call's %s (%s) is not an identifier", i, f.name, cite.Bytes(f.s))
				}
			}
			if identifier(strings.ReplaceAll(c.Verb, " ", "_")) != strings.ReplaceAll(c.Verb, " ", "_") {
				t.Errorf("event %d: the call's verb (%s) is not of identifiers", i, cite.Bytes(c.Verb))
			}
			if ev.Call.ID != "" {
				calls[ev.Call.ID] = true
			}
		case event.KindResult:
			if !calls[ev.Result.CallID] {
				t.Errorf("event %d: result for unknown call %q", i, ev.Result.CallID)
			}
			if ev.Result.Err && ev.Result.ErrClass == "" {
				t.Errorf("event %d: error without class", i)
			}
		case event.KindLLM, event.KindModel:
			if ev.Model != "" && identifier(ev.Model) != ev.Model {
				t.Errorf("event %d: the model (%s) is not an identifier", i, cite.Bytes(ev.Model))
			}
			if ev.Kind == event.KindLLM && ev.LLM.MsgID == "" {
				t.Errorf("event %d: llm record without response id", i)
			}
		}
	}
}

// TestCorpusTokens checks the token invariant on every rollout with token
// counts. Where the cumulative total only grows, the usage of the emitted
// responses (one value per MsgID) sums to the last total. Where several
// counters share the rollout (a restart after an interrupt, a /review
// thread), it sums to the last_token_usage of each new total, which Codex
// reports independently of the totals.
func TestCorpusTokens(t *testing.T) {
	for _, path := range corpusFiles(t) {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			x := expectedUsage(t, path)
			if x.counts == 0 {
				t.Skip("no token counts")
			}
			got := emittedUsage(parseFile(t, path).events)
			if x.monotone && got != x.lastTotal {
				t.Errorf("emitted usage %d, last cumulative total %d", got, x.lastTotal)
			}
			if got != x.sumLast {
				t.Errorf("emitted usage %d, sum of last_token_usage over new totals %d", got, x.sumLast)
			}
		})
	}
}

// emittedUsage sums the usage of each response once.
func emittedUsage(evs []event.Event) int64 {
	per := map[string]int64{}
	var sum int64
	for _, ev := range evs {
		if ev.Kind != event.KindLLM {
			continue
		}
		u := ev.LLM.Usage()
		if ev.LLM.MsgID == "" {
			sum += u
			continue
		}
		if prev, ok := per[ev.LLM.MsgID]; ok && prev != u && prev != 0 && u != 0 {
			// a response's records repeat one usage once it is known
			per[ev.LLM.MsgID] = -1 << 40
			continue
		}
		per[ev.LLM.MsgID] = max(per[ev.LLM.MsgID], u)
	}
	for _, u := range per {
		sum += u
	}
	return sum
}

type tokenFacts struct {
	counts    int
	monotone  bool
	lastTotal int64
	sumLast   int64
}

// expectedUsage reads the token_count records independently of the parser.
func expectedUsage(t *testing.T, path string) tokenFacts {
	x := tokenFacts{monotone: true}
	type pair struct{ in, out int64 }
	seen := map[pair]bool{}
	var prev pair
	for _, line := range readLines(t, path) {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total *struct {
						In  int64 `json:"input_tokens"`
						Out int64 `json:"output_tokens"`
					} `json:"total_token_usage"`
					Last *struct {
						In  int64 `json:"input_tokens"`
						Out int64 `json:"output_tokens"`
					} `json:"last_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "token_count" ||
			l.Payload.Info == nil || l.Payload.Info.Total == nil {
			continue
		}
		tot := pair{l.Payload.Info.Total.In, l.Payload.Info.Total.Out}
		if x.counts > 0 && (tot.in < prev.in || tot.out < prev.out) {
			x.monotone = false
		}
		x.counts++
		prev = tot
		x.lastTotal = tot.in + tot.out
		if !seen[tot] && l.Payload.Info.Last != nil {
			x.sumLast += l.Payload.Info.Last.In + l.Payload.Info.Last.Out
		}
		seen[tot] = true
	}
	return x
}

// TestCorpusIncremental checks that parsing line by line, with the
// carry-state saved and restored after every line, yields exactly the
// events of one uninterrupted pass.
func TestCorpusIncremental(t *testing.T) {
	testIncremental(t, corpusFiles(t))
}

// TestFixturesIncremental is TestCorpusIncremental over our own fixtures.
func TestFixturesIncremental(t *testing.T) {
	testIncremental(t, append(fixtures(t), filepath.Join(fixtureDir(t), "leak.jsonl")))
}

func testIncremental(t *testing.T, paths []string) {
	for _, path := range paths {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			lines := readLines(t, path)
			src, _ := Identify(path, lines[0])
			whole, _, _ := parseLines(t, src, lines)
			var inc []event.Event
			var state []byte
			for i, l := range lines {
				p, err := Restore(src, state)
				if err != nil {
					t.Fatalf("line %d: restore: %v", i+1, err)
				}
				inc, _ = p.Line(l, inc)
				if state, err = p.State(); err != nil {
					t.Fatalf("line %d: state: %v", i+1, err)
				}
			}
			a, _ := json.Marshal(whole)
			b, _ := json.Marshal(inc)
			if !bytes.Equal(a, b) {
				t.Errorf("incremental events differ from one pass (%d vs %d events)", len(inc), len(whole))
			}
		})
	}
}

// TestCorpusZstd compresses a rollout the way Codex does and reads it back
// through OpenMaybeZstd, by name and by content, and through the fallback
// from a vanished plain file to its .zst twin.
func TestCorpusZstd(t *testing.T) {
	var src string
	for _, p := range corpusFiles(t) {
		if strings.Contains(p, "rollout-2025-12-25") {
			src = p
		}
	}
	if src == "" {
		t.Skip("rollout not in corpus")
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, filepath.Base(src))
	zst := plain + ".zst"
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(zst)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(enc, in); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	out.Close()

	want, _ := json.Marshal(parseFile(t, src).events)
	for _, path := range []string{zst, plain} { // plain is missing: falls back to .zst
		res := parseFile(t, path)
		got, _ := json.Marshal(res.events)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: events differ from the plain rollout", filepath.Base(path))
		}
		if len(res.errs) > 0 {
			t.Errorf("%s: %v", filepath.Base(path), res.errs)
		}
	}
}
