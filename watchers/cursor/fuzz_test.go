package cursor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

// FuzzParse feeds arbitrary lines to the transcript parser: it never
// panics, its events always marshal, and its carry-state always restores
// to a parser that goes on the same way.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"transcript.jsonl", "subagent.jsonl"} {
		for _, l := range bytes.Split(readFixture(f, name), []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"ApplyPatch","input":"*** Move to: x"}]}}`))
	f.Add([]byte(`{"role":"assistant","message":{"content":[{"type":"tool-call","toolName":"Shell","args":{"command":"bash -c 'x'"}}]}}`))
	f.Add([]byte(`{"role":"user","message":{"content":[{"type":"text","text":"<user_query><user_query></user_query>"}]}}`))
	f.Add([]byte("{\"role\":\"user\",\"message\":{\"content\":\"\xff\xfe\x00\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := watchers.Source{Agent: "cursor", Session: "s"}
		p := NewParser(src)
		p.SetFile("/h/.cursor/projects/h-code-x/agent-transcripts/s/s.jsonl", 1, 2)
		var evs []event.Event
		for _, l := range bytes.Split(data, []byte("\n")) {
			var err error
			evs, err = p.Line(l, evs)
			if err != nil && strings.Contains(err.Error(), string(l)) && len(l) > 8 {
				t.Fatalf("error quotes the line: %v", err)
			}
		}
		if _, err := json.Marshal(evs); err != nil {
			t.Fatal(err)
		}
		st, err := p.State()
		if err != nil {
			t.Fatal(err)
		}
		q, err := Restore(src, st)
		if err != nil {
			t.Fatalf("state does not restore: %v", err)
		}
		line := []byte(`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"path":"/h/code/x/a.go"}}]}}`)
		a, _ := p.Line(line, nil)
		b, _ := q.Line(line, nil)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("restored parser diverges:\n%s\n%s", ja, jb)
		}
	})
}

// BenchmarkParse measures transcript throughput (MB/s) over the fixture
// and, when present, the corpus transcripts, repeated to a few MB.
func BenchmarkParse(b *testing.B) {
	var one []byte
	one = append(one, readFixture(b, "transcript.jsonl")...)
	if d := corpusPathIfAny(b); d != "" {
		for _, f := range []string{"agent-tail__0cc7e0c68068-0__full.jsonl", "test-repo__b8b6fbd5f55f-0__full.jsonl"} {
			if data, err := readIfExists(d, f); err == nil {
				one = append(one, data...)
			}
		}
	}
	var data []byte
	for len(data) < 4<<20 {
		data = append(data, one...)
	}
	lines := bytes.Split(data, []byte("\n"))
	src := watchers.Source{Agent: "cursor", Session: "s"}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := NewParser(src)
		evs := make([]event.Event, 0, 4096)
		for _, l := range lines {
			evs, _ = p.Line(l, evs[:0])
		}
	}
}

// FuzzRows feeds arbitrary values to the row decoders of state.vscdb and
// store.db and builds what they yield: nothing panics.
func FuzzRows(f *testing.F) {
	var fx map[string]map[string]json.RawMessage
	if err := json.Unmarshal(readFixture(f, "vscdb.json"), &fx); err != nil {
		f.Fatal(err)
	}
	for _, rows := range fx {
		for _, v := range rows {
			f.Add([]byte(v))
		}
	}
	var st storeFixture
	if err := json.Unmarshal(readFixture(f, "storedb.json"), &st); err != nil {
		f.Fatal(err)
	}
	for _, m := range st.Messages {
		f.Add([]byte(m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var cvs []convo
		if c, err := decodeComposer(data); err == nil {
			cvs = append(cvs, composerConvo(c, inlineBubbles(c), "/w"))
			cvs = append(cvs, composerConvo(c, headerBubbles(c, func(string) []byte { return data }), ""))
		}
		if b, err := decodeBubble(data); err == nil {
			cvs = append(cvs, convo{id: "x", bubbles: []*bubble{b, b}})
		}
		cvs = append(cvs, workspaceComposers(data, "")...)
		cvs = append(cvs, chatConvos(data, "")...)
		for _, cv := range cvs {
			if _, err := json.Marshal(cv.build()); err != nil {
				t.Fatal(err)
			}
		}
		var sc storeConvo
		if m, ok := decodeStoreMessage(data); ok {
			sc.msgs = append(sc.msgs, m)
		}
		sc.root = decodeRoot(data)
		sc.meta, _ = decodeMeta(data)
		if _, err := json.Marshal(sc.build()); err != nil {
			t.Fatal(err)
		}
	})
}
