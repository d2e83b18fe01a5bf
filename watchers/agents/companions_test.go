package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentmap/agentmap/watchers"
)

// A directory of many main logs in the older flat layout: each main log's
// companions, found with one shared Beside, are exactly those found with
// none (a fresh listing each time), and each flat subagent log joins the
// session it names, and only that one.
func TestCompanionsSharedListingSameAsFresh(t *testing.T) {
	dir := t.TempDir()
	write := func(name, line string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	session := func(i int) string { return fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", i) }
	var mains []string
	want := map[string][]string{}
	for i := range 6 {
		m := write(session(i)+".jsonl", `{"type":"user","sessionId":"`+session(i)+`","uuid":"u"}`)
		mains = append(mains, m)
		for j := range i % 3 { // 0, 1 or 2 flat subagent logs a session
			a := write(fmt.Sprintf("agent-s%dn%d.jsonl", i, j),
				`{"isSidechain":true,"sessionId":"`+session(i)+`","agentId":"s`+fmt.Sprint(i)+`n`+fmt.Sprint(j)+`","type":"user","uuid":"w"}`)
			want[m] = append(want[m], a)
		}
	}
	write("agent-unreadable.jsonl", "not json")
	if err := os.Mkdir(filepath.Join(dir, session(1)), 0o700); err != nil { // a nested one too
		t.Fatal(err)
	}
	nested := filepath.Join(dir, session(1), "subagents", "agent-n1.jsonl")
	os.MkdirAll(filepath.Dir(nested), 0o700)
	os.WriteFile(nested, []byte(`{"isSidechain":true,"sessionId":"`+session(1)+`","agentId":"n1","type":"user"}`+"\n"), 0o600)
	want[mains[1]] = append(want[mains[1]], nested)

	var shared Beside
	for _, m := range mains {
		src := watchers.Source{}
		fresh := claudeSubagentFiles(m, src, nil)
		got := claudeSubagentFiles(m, src, &shared)
		if !slices.Equal(got, fresh) {
			t.Errorf("%s: shared listing %v, fresh %v", filepath.Base(m), got, fresh)
		}
		w := append([]string(nil), want[m]...)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: companions %v, want %v", filepath.Base(m), got, w)
		}
	}
	if len(shared.flat) != 1 || len(shared.sessions) != 7 {
		t.Errorf("the directory listed %d times and %d flat logs read; want once and 7", len(shared.flat), len(shared.sessions))
	}
}
