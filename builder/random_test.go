package builder

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// randomSession makes a plausible but messy event stream: lanes, missing
// times, results before calls, duplicate ids, continuations, records with
// nil payloads. Every field is an identifier-like value.
func randomSession(rng *rand.Rand, n int) []event.Event {
	lanes := []string{"", "", "", "sa-1", "sa-2"}
	models := []string{"claude-opus-4-5", "claude-haiku-4-5", "gpt-5", ""}
	kinds := []string{"read", "search", "edit", "exec", "verify", "mcp", "skill", "subagent", "web", "tool", "bogus"}
	touches := []string{"hit", "read", "edit"}
	ops := []string{"", "create", "modify", "delete"}
	classes := []string{"", "exit_code", "interrupted", "blocked", "permission_denied"}
	evs := []event.Event{{Kind: event.KindSession, Session: &event.Session{NativeID: "rnd", AgentTool: "claude-code"}}}
	t := epoch
	ids := []string{}
	for i := 0; i < n; i++ {
		if rng.IntN(10) > 0 {
			t += rng.Int64N(40_000)
		}
		tt := t
		if rng.IntN(12) == 0 {
			tt = 0
		}
		e := event.Event{T: tt, Agent: lanes[rng.IntN(len(lanes))]}
		switch rng.IntN(12) {
		case 0:
			e.Kind, e.User = event.KindUser, &event.User{Chars: rng.IntN(500), Images: rng.IntN(2), URLs: rng.IntN(3)}
		case 1, 2:
			e.Kind, e.Model = event.KindLLM, models[rng.IntN(len(models))]
			e.LLM = &event.LLM{MsgID: []string{"", "m" + itoa(rng.IntN(20))}[rng.IntN(2)],
				In: rng.Int64N(1000), CW: rng.Int64N(1000), CR: rng.Int64N(100000), Out: rng.Int64N(2000),
				LatencyMs: rng.Int64N(90_000) - 1, ToolCalls: rng.IntN(3), TextChars: rng.IntN(2) * rng.IntN(300),
				Thinking: rng.IntN(2) == 0}
		case 3, 4, 5:
			id := "c" + itoa(rng.IntN(n))
			ids = append(ids, id)
			c := &event.Call{ID: id, Tool: "T" + itoa(rng.IntN(4)), Kind: kinds[rng.IntN(len(kinds))], Verb: []string{"", "go test", "ls"}[rng.IntN(3)]}
			for range rng.IntN(3) {
				if rng.IntN(4) == 0 {
					c.Targets = append(c.Targets, event.Target{Label: "/tmp (scratch)", Touch: touches[rng.IntN(3)]})
				} else {
					c.Targets = append(c.Targets, event.Target{Repo: []string{"k1", "k2", ""}[rng.IntN(3)],
						Path: "f" + itoa(rng.IntN(9)), Touch: touches[rng.IntN(3)], Op: ops[rng.IntN(4)]})
				}
			}
			if rng.IntN(6) == 0 && len(ids) > 1 {
				c.Continues = ids[rng.IntN(len(ids))]
			}
			if rng.IntN(8) == 0 {
				c.SkillWrite = "sk"
			}
			e.Kind, e.Call = event.KindCall, c
		case 6, 7:
			id := "c" + itoa(rng.IntN(n))
			if len(ids) > 0 && rng.IntN(4) > 0 {
				id = ids[rng.IntN(len(ids))]
			}
			r := &event.Result{CallID: id, Err: rng.IntN(3) == 0, OutBytes: rng.Int64N(5000), DurMs: rng.Int64N(60_000) - 1}
			r.ErrClass = classes[rng.IntN(len(classes))]
			switch rng.IntN(10) {
			case 0:
				r.PR = &event.PR{Action: []string{"create", "merge", "close", "comment"}[rng.IntN(4)], Provider: "github", Repo: "a/b", Number: 1 + rng.IntN(3), URL: "https://github.com/a/b/pull/1"}
			case 1:
				r.Commit = &event.Commit{SHA: "abcdef1", Files: 1}
			case 2:
				r.Child = "sa-" + itoa(1+rng.IntN(2))
			}
			e.Kind, e.Result = event.KindResult, r
		case 8:
			e.Kind, e.Error = event.KindError, &event.Error{Source: []string{"llm", "hook", "orchestration", ""}[rng.IntN(4)],
				Class: classes[rng.IntN(len(classes))], RefCallID: "c" + itoa(rng.IntN(n))}
		case 9:
			e.Kind, e.Model = event.KindModel, models[rng.IntN(len(models))]
		case 10:
			e.Kind = []event.Kind{event.KindTurnEnd, event.KindCompaction, event.KindRepo, event.KindLane, event.KindEnd}[rng.IntN(5)]
			switch e.Kind {
			case event.KindCompaction:
				e.Compact = &event.Compaction{Trigger: "auto", PreTokens: rng.Int64N(100000)}
			case event.KindRepo:
				e.Repo = &event.Repo{Key: []string{"k1", "k2"}[rng.IntN(2)], Name: "r"}
			case event.KindLane:
				e.Lane = &event.Lane{SubagentType: "Explore", LaunchCallID: "c" + itoa(rng.IntN(n))}
			}
		default:
			// a record of a kind without its payload
			e.Kind = []event.Kind{event.KindUser, event.KindLLM, event.KindCall, event.KindResult, event.KindError}[rng.IntN(5)]
		}
		evs = append(evs, e)
	}
	return evs
}

func TestRandomSessions(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 99))
		evs := randomSession(rng, 10+rng.IntN(300))
		for _, cap := range []int{0, 7} {
			m, err := Build(evs, Options{EventCap: cap})
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			canon := canonical(t, m)
			checkInvariants(t, canon)
			again := canonical(t, mustBuild(t, evs, Options{EventCap: cap}))
			if string(again) != string(canon) {
				t.Fatalf("seed %d: two builds differ", seed)
			}
		}
	}
}

// FuzzBuild: any event stream builds without panicking and keeps the map
// invariants.
func FuzzBuild(f *testing.F) {
	f.Add(uint64(1), uint16(50))
	f.Add(uint64(42), uint16(400))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], seed)
		rng := rand.New(rand.NewChaCha8([32]byte{b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]}))
		evs := randomSession(rng, int(n%2000))
		m, err := Build(evs, Options{EventCap: 1 + int(seed%500)})
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, canonical(t, m))
	})
}
