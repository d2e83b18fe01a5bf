package builder

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

func TestOrdering(t *testing.T) {
	tests := []struct {
		name  string
		evs   []event.Event
		want  []string // kind@agent@t
		start string
	}{
		{
			name: "same time: main first, then lanes lexically, then lane order",
			evs: stream(sess("s"),
				onLane("sa-b", callEv(1, "b1", "Read", "read")),
				onLane("sa-a", callEv(1, "a1", "Grep", "search")),
				callEv(1, "m1", "Bash", "exec"),
				callEv(1, "m2", "Bash", "exec"),
				onLane("sa-a", callEv(0.5, "a0", "Glob", "search")),
			),
			// sa-a's own order puts a1 before a0 although a0 is earlier:
			// the sort is by time first.
			want: []string{"search@sa-a@0", "exec@main@500", "exec@main@500", "search@sa-a@500", "read@sa-b@500"},
		},
		{
			name: "untimed records take the previous time of their lane",
			evs: stream(sess("s"),
				callEv(1, "m1", "Bash", "exec"),
				event.Event{Kind: event.KindCall, Call: &event.Call{ID: "m2", Tool: "Read", Kind: "read"}},
				onLane("sa-a", callEv(2, "a1", "Read", "read")),
				callEv(3, "m3", "Bash", "exec"),
			),
			want: []string{"exec@main@0", "read@main@0", "read@sa-a@1000", "exec@main@2000"},
		},
		{
			name: "leading untimed record takes the lane's next time",
			evs: stream(sess("s"),
				event.Event{Kind: event.KindCall, Call: &event.Call{ID: "m0", Tool: "Read", Kind: "read"}},
				callEv(4, "m1", "Bash", "exec"),
				onLane("sa-a", callEv(2, "a1", "Read", "read")),
			),
			want: []string{"read@sa-a@0", "read@main@2000", "exec@main@2000"},
		},
		{
			name: "all untimed: input order per lane, t = 0",
			evs: stream(
				event.Event{Kind: event.KindSession, Session: &event.Session{NativeID: "s", AgentTool: "cursor", StartT: at(10), EndT: at(70)}},
				event.Event{Kind: event.KindUser, User: &event.User{Chars: 3}},
				event.Event{Kind: event.KindCall, Call: &event.Call{Tool: "Read", Kind: "read"}},
				event.Event{Kind: event.KindLLM, LLM: &event.LLM{TextChars: 4}, Model: "gpt-5"},
			),
			want:  []string{"user@main@0", "read@main@0", "llm@main@0"},
			start: isoMillis(at(10)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			var got []string
			for i, e := range m.Events {
				if e.Seq != i {
					t.Fatalf("events[%d].seq = %d", i, e.Seq)
				}
				got = append(got, e.Kind+"@"+e.Agent+"@"+itoa(int(e.T)))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("order\n got %v\nwant %v", got, tt.want)
			}
			if tt.start != "" && m.Session.StartedAt != tt.start {
				t.Errorf("startedAt = %q, want %q", m.Session.StartedAt, tt.start)
			}
		})
	}
}

func TestUntimedSessionTimes(t *testing.T) {
	tests := []struct {
		name         string
		start, end   int64
		wantStart    string
		wantDuration int64
	}{
		{"start and end", at(10), at(70), isoMillis(at(10)), 60000},
		{"start only", at(10), 0, isoMillis(at(10)), 0},
		{"end only", 0, at(70), isoMillis(at(70)), 0},
		{"no time at all", 0, 0, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := []event.Event{
				{Kind: event.KindSession, Session: &event.Session{NativeID: "s", AgentTool: "cursor", StartT: tt.start, EndT: tt.end}},
				{Kind: event.KindUser, User: &event.User{Chars: 3}},
			}
			m := mustBuild(t, evs, Options{})
			if m.Session.StartedAt != tt.wantStart || m.Session.DurationMs != tt.wantDuration {
				t.Errorf("startedAt %q durationMs %d, want %q %d", m.Session.StartedAt, m.Session.DurationMs, tt.wantStart, tt.wantDuration)
			}
		})
	}
}

func TestTimedSessionStartsAtFirstEvent(t *testing.T) {
	evs := stream(sess("s"), userEv(5, 1), llmEv(9, "", "gpt-5", 1, 1, 0, 1), turnEnd(30))
	m := mustBuild(t, evs, Options{})
	if m.Session.StartedAt != isoMillis(at(5)) || m.Session.DurationMs != 4000 {
		t.Errorf("startedAt %s durationMs %d", m.Session.StartedAt, m.Session.DurationMs)
	}
	if m.Events[0].T != 0 {
		t.Errorf("first event t = %d", m.Events[0].T)
	}
}

// TestInterleavingDoesNotMatter: the daemon and the one-shot build may see
// the lanes interleaved differently; each lane's own order is all that
// counts.
func TestInterleavingDoesNotMatter(t *testing.T) {
	main := stream(sess("s"), repoEv(0, "k", "api", "acme/api"), userEv(1, 10),
		llmEv(2, "m1", "claude-opus-4-5", 10, 10, 1, 0),
		func() event.Event {
			e := callEv(2, "t1", "Task", "subagent")
			e.Call.SubagentType = "Explore"
			return e
		}(),
		resultEv(40, "t1", false),
		llmEv(41, "m2", "claude-opus-4-5", 10, 10, 0, 5))
	lane := onLane("sa-1",
		event.Event{Kind: event.KindLane, T: at(3), Lane: &event.Lane{SubagentType: "Explore", LaunchCallID: "t1"}},
		llmEv(3, "x1", "claude-haiku-4-5", 5, 5, 1, 0),
		callEv(3, "r1", "Read", "read", file("k", "a.go", "read", "")),
		resultEv(4, "r1", false),
		llmEv(5, "x2", "claude-haiku-4-5", 5, 5, 0, 9))
	want := canonical(t, mustBuild(t, stream(main, lane), Options{}))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		mixed := interleave(rng, main, lane)
		if got := canonical(t, mustBuild(t, mixed, Options{})); string(got) != string(want) {
			t.Fatalf("interleaving changed the map:\n%s\n%s", got, want)
		}
	}
}

func interleave(rng *rand.Rand, a, b []event.Event) []event.Event {
	out := make([]event.Event, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || (i < len(a) && rng.IntN(2) == 0) {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}

func canonical(t testing.TB, m *Map) []byte {
	t.Helper()
	b, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
