package gemini_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers/agents"
)

// TestResumeEqualsWhole parses each chat with the carry-state saved and
// restored at random points (every line at worst, as a daemon killed
// between batches does) and checks that the events are those of one pass.
func TestResumeEqualsWhole(t *testing.T) {
	chats := realDir(t)
	files, _ := filepath.Glob(filepath.Join(chats, "*.jsonl"))
	files = append(files, writtenFiles(t)...)
	a := agent(t)
	for _, f := range files {
		want, src := parse(t, f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(0); seed < 8; seed++ {
			rng := rand.New(rand.NewPCG(seed, 3))
			p := a.New(src)
			agents.AttachFile(p, f)
			var got []event.Event
			for _, l := range lines(b) {
				if seed == 0 || rng.IntN(3) == 0 {
					st, err := p.State()
					if err != nil {
						t.Fatal(err)
					}
					if p, err = a.Restore(src, st); err != nil {
						t.Fatal(err)
					}
					agents.AttachFile(p, f)
				}
				got, _ = p.Line(l, got)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("%s seed %d: resumed parse differs\n got %s\nwant %s", filepath.Base(f), seed, g, w)
			}
		}
	}
}

// TestStateHoldsNoText checks that the carry-state after every line of the
// real chats holds none of the scripted text (every scripted text carries
// the canary "zqcanary").
func TestStateHoldsNoText(t *testing.T) {
	chats := realDir(t)
	files, _ := filepath.Glob(filepath.Join(chats, "*.jsonl"))
	a := agent(t)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		first, _ := agents.FirstLine(f)
		src, _ := a.Identify(f, first)
		p := a.New(src)
		for _, l := range lines(b) {
			p.Line(l, nil)
			st, _ := p.State()
			if containsFold(st, "zqcanary") {
				t.Fatalf("%s: carry-state holds scripted text: %s", filepath.Base(f), st)
			}
		}
	}
}
