package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// The fake agent reads lines {"s":"<session>","k":"<kind>"}. Its parser
// numbers the lines it accepts in its carry-state and stamps each event
// with that number, so a lost or repeated line, or a carry-state not
// restored, shows in the events.
type fakeLine struct {
	S string `json:"s"`
	K string `json:"k"`
	P string `json:"p"` // parent session: the file is a child session and a lane of it
}

type fakeParser struct {
	src watchers.Source
	N   int64 `json:"n"`
}

func (p *fakeParser) Line(line []byte, out []event.Event) ([]event.Event, error) {
	var l fakeLine
	if err := json.Unmarshal(line, &l); err != nil || l.K == "" {
		return out, errors.New("not a fake line")
	}
	p.N++
	e := event.Event{Kind: event.Kind(l.K), T: p.N, Agent: p.src.Lane}
	if p.N == 1 && p.src.Lane == "" {
		out = append(out, event.Event{Kind: event.KindSession, T: p.N, Session: &event.Session{NativeID: p.src.Session}})
	}
	return append(out, e), nil
}

func (p *fakeParser) State() ([]byte, error) { return json.Marshal(p) }

func fakeIdentify(path string, first []byte) (watchers.Source, error) {
	var l fakeLine
	if err := json.Unmarshal(first, &l); err != nil || l.S == "" {
		return watchers.Source{}, errors.New("no session")
	}
	src := watchers.Source{Session: l.S}
	if l.P != "" {
		src.ParentSession, src.ChildLane = l.P, "sa-"+l.S
	}
	if b := filepath.Base(path); strings.HasPrefix(b, "agent-") {
		src.Lane = "sa-" + strings.TrimSuffix(strings.TrimPrefix(b, "agent-"), ".jsonl")
	}
	return src, nil
}

var fakeAgent = fakeAgentNamed("claude")

func fakeAgentNamed(name string) agents.Agent {
	return agents.Agent{
		Name: name, Tool: name,
		LooksLike: func(b []byte) bool { return bytes.Contains(b, []byte(`"s"`)) },
		Identify:  fakeIdentify,
		New:       func(s watchers.Source) watchers.Parser { return &fakeParser{src: s} },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			p := &fakeParser{src: s}
			return p, json.Unmarshal(st, p)
		},
	}
}

// fakeMapper writes the events as JSON lines (deterministic, not gzipped:
// the tests read it back).
func fakeMapper(events []event.Event) (Built, error) {
	var id string
	var buf bytes.Buffer
	for _, e := range events {
		if e.Kind == event.KindSession && e.Session != nil {
			id = e.Session.NativeID
		}
		fmt.Fprintf(&buf, "%s %s %d\n", e.Agent, e.Kind, e.T)
	}
	return Built{NativeID: id, Gzip: buf.Bytes(), Start: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}, nil
}

// fakeMap is what fakeMapper gives for whole files (one per lane).
func fakeMap(lanes map[string][]string) string {
	var buf bytes.Buffer
	var names []string
	for l := range lanes {
		names = append(names, l)
	}
	sortStrings(names)
	if _, main := lanes[""]; !main && len(names) > 0 {
		// Only lanes: the session's record is the one the daemon adds,
		// as `agentmap build` does (agents.EnsureSession).
		fmt.Fprintf(&buf, " session 0\n")
	}
	for _, lane := range names {
		n := 0
		for _, k := range lanes[lane] {
			n++
			if n == 1 && lane == "" {
				fmt.Fprintf(&buf, " session 1\n")
			}
			fmt.Fprintf(&buf, "%s %s %d\n", lane, k, n)
		}
	}
	return buf.String()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
