package export_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	. "github.com/agentmap/agentmap/export"
)

// sessionFiles writes n map files of distinct sessions, each with calls
// calls, into a temporary directory.
func sessionFiles(t *testing.T, n, calls int) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for s := range n {
		id := fmt.Sprintf("session-%d", s)
		evs := []event.Event{{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: id, AgentTool: "claude-code", Role: "root"}},
			{Kind: event.KindUser, T: t0 + 1, User: &event.User{Chars: 10}}}
		for i := range calls {
			evs = append(evs, event.Event{Kind: event.KindLLM, T: t0 + int64(10+i*10), Model: "claude-sonnet-4-5",
				LLM: &event.LLM{In: 5, Out: 7, Stop: "end_turn", TextChars: 3}})
		}
		m, err := builder.Build(evs, builder.Options{Producer: "agentmap test"})
		if err != nil {
			t.Fatal(err)
		}
		gz, err := m.Gzip()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, id+".json.gz")
		if err := os.WriteFile(p, gz, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}

// failingWriter fails every write, as a full disk or device does.
type failingWriter struct{ writes int }

var errFull = errors.New("no space left")

func (w *failingWriter) Write([]byte) (int, error) { w.writes++; return 0, errFull }

// A failed output ends the export with its error, said once: it is not
// blamed on the maps, each of which would fail the same way after it.
func TestWriteStopsAtAFailedOutput(t *testing.T) {
	files := sessionFiles(t, 30, 200)
	for _, f := range Formats() {
		w := &failingWriter{}
		var blamed []string
		_, err := Write(w, f, testOptions(""), false, Selection{}, files, func(file string, err error) {
			blamed = append(blamed, filepath.Base(file)+": "+err.Error())
		})
		if !errors.Is(err, errFull) {
			t.Errorf("%s: error %v, want the output's", f, err)
		}
		if len(blamed) != 0 {
			t.Errorf("%s: %d maps blamed for the output, the first: %s", f, len(blamed), blamed[0])
		}
		if w.writes > 1 {
			t.Errorf("%s: %d writes after the output failed", f, w.writes-1)
		}
	}
}

// An output that is a symbolic link gets the export in the file it leads
// to; the link stays.
func TestWriteFileThroughALink(t *testing.T) {
	files := sessionFiles(t, 2, 3)
	var want bytes.Buffer
	if _, err := Write(&want, JSONL, testOptions(""), false, Selection{}, files, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "export.jsonl")
	os.WriteFile(target, []byte("old"), 0o600)
	link := filepath.Join(dir, "out.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic link: %v", err)
	}
	res, err := WriteFile(link, JSONL, testOptions(""), Selection{}, files, nil)
	if err != nil || res.Sessions != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if got, _ := os.ReadFile(target); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the link's file holds %.80q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || strings.Contains(entries[0].Name(), ".tmp") {
		t.Errorf("the link's directory holds %v", entries)
	}
}
