package gemini_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/gemini"
)

// FuzzParse feeds arbitrary chat files through the parser: it must never
// panic, a restored carry-state must give the same events as an unbroken
// pass, and the builder must take what it yields.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "real", "tmp", "gemini-demo", "chats", "*.jsonl"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, uint8(3))
		}
	}
	f.Add([]byte(canaryChat()), uint8(1))
	f.Add([]byte(`{"sessionId":"s","projectHash":"h"}`+"\n"+`{"id":"a","type":"gemini","toolCalls":[{"id":"x","name":"run_shell_command","args":{"command":"ls"},"status":"error"}]}`), uint8(0))
	f.Add([]byte(`{"$set":{"messages":[{"id":"a","type":"user"}]}}`+"\n"+`{"$rewindTo":"a"}`), uint8(2))
	src := watchers.Source{Agent: gemini.Agent, Session: "fuzz"}
	f.Fuzz(func(t *testing.T, data []byte, every uint8) {
		one := gemini.NewParser(src)
		var want []event.Event
		p := gemini.NewParser(src)
		var got []event.Event
		for i, l := range bytes.Split(data, []byte("\n")) {
			want, _ = one.Line(l, want)
			if every > 0 && i%int(every) == 0 {
				st, err := p.State()
				if err != nil {
					t.Fatal(err)
				}
				if p, err = gemini.Restore(src, st); err != nil {
					t.Fatalf("restore own state: %v", err)
				}
			}
			got, _ = p.Line(l, got)
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("resumed parse differs\n got %s\nwant %s", g, w)
		}
		if _, err := builder.Build(want, builder.Options{}); err != nil && err != builder.ErrNoSession && !errors.Is(err, builder.ErrEmptySession) {
			t.Fatalf("build: %v", err)
		}
	})
}

// FuzzParseWhole feeds arbitrary documents as a whole-document chat of
// older clients: no input may fault the reader, and the builder must take
// what it yields.
func FuzzParseWhole(f *testing.F) {
	f.Add([]byte(`{"sessionId":"5e55a0e0-2222-4222-8222-222222222222","projectHash":"ef56","startTime":"2025-08-01T10:00:00.000Z","messages":[` +
		`{"id":"u1","timestamp":"2025-08-01T10:00:00.500Z","type":"user","content":"run the tests"},` +
		`{"id":"g1","timestamp":"2025-08-01T10:00:01.000Z","type":"gemini","content":"ok","model":"gemini-2.5-pro","tokens":{"input":10,"output":2,"total":12},` +
		`"toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"go test ./..."},"status":"error","result":[]}]}]}`))
	f.Add([]byte(`{"sessionId":"s","projectHash":"h","messages":[{"$set":{}},null,7,{"type":"gemini","toolCalls":[null,{}]}]}`))
	f.Add([]byte(`{"sessionId":"s","projectHash":"h","messages":[]}`))
	dir := f.TempDir()
	src := watchers.Source{Agent: gemini.Agent, Session: "fuzz"}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "session-2025-08-01T10-00-fuzz.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		evs, err := gemini.ParseWhole(path, src)
		if err != nil {
			return
		}
		evs = append([]event.Event{{Kind: event.KindSession, Session: &event.Session{NativeID: "fuzz", AgentTool: gemini.Tool}}}, evs...)
		if _, err := builder.Build(evs, builder.Options{}); err != nil && !errors.Is(err, builder.ErrEmptySession) {
			t.Fatalf("build: %v", err)
		}
	})
}
