package agents

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

// The tailer hands a parser each line as a slice of its read buffer, which
// the next read overwrites and another log's read reuses: a parser keeps
// nothing of a line past Line (not in an event, not in its carry-state).
// Each log of the corpus and of the fixtures is parsed twice: once with
// every line in memory of its own, kept; once with every line in one
// buffer that is scribbled over after each Line call. The events and the
// carry-state (taken often, after the scribble) must be the same.
func TestParsersKeepNoLineBytes(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dirs := []string{filepath.Join(root, "testdata"), filepath.Join(root, "watchers")}
	if c := filepath.Join(root, "..", "shared", "corpus"); dirExists(c) {
		dirs = append(dirs, c)
	} else {
		t.Log("corpus not present: the fixtures only")
	}
	seen := map[string]int{}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return nil
			}
			first, err := FirstLine(path)
			if err != nil {
				return nil
			}
			a, ok := Detect(first)
			if !ok {
				return nil
			}
			src, err := a.Identify(path, first)
			if err != nil {
				return nil
			}
			seen[a.Name]++
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if problem := keptLineBytes(data, path, a, src); problem != "" {
				t.Errorf("%s: %s", filepath.Base(path), problem)
			}
			return nil
		})
	}
	for _, name := range []string{"claude", "codex", "copilot"} {
		if seen[name] == 0 {
			t.Errorf("no %s log checked", name)
		}
	}
	t.Logf("logs checked: %v", seen)
}

func dirExists(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

// keptLineBytes parses data both ways and says how they differ ("" when
// they do not).
func keptLineBytes(data []byte, path string, a Agent, src watchers.Source) string {
	var lines [][]byte
	for l := range bytes.Lines(data) {
		if l = bytes.TrimRight(l, "\r\n"); len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	kept, reused := a.New(src), a.New(src)
	AttachFile(kept, path)
	AttachFile(reused, path)
	var evKept, evReused []event.Event
	var buf []byte
	for i, l := range lines {
		evKept, _ = kept.Line(bytes.Clone(l), evKept)
		buf = append(buf[:0], l...)
		evReused, _ = reused.Line(buf, evReused)
		for j := range buf {
			buf[j] = '"' // still JSON-ish, so a kept slice would parse to something else
		}
		if i%64 == 63 || i == len(lines)-1 {
			sk, err1 := kept.State()
			sr, err2 := reused.State()
			if err1 != nil || err2 != nil || !bytes.Equal(sk, sr) {
				return fmt.Sprintf("line %d: the carry-state holds bytes of a line (%v, %v)", i+1, err1, err2)
			}
		}
	}
	if !bytes.Equal(event.AppendJSON(nil, evKept), event.AppendJSON(nil, evReused)) {
		return "the events hold bytes of a line"
	}
	return ""
}

// keeper is a parser that keeps a line: in its state, and in a name.
type keeper struct{ last []byte }

func (k *keeper) Line(line []byte, out []event.Event) ([]event.Event, error) {
	k.last = line
	return append(out, event.Event{Kind: event.KindUser, User: &event.User{}, Agent: unsafe.String(unsafe.SliceData(line), min(len(line), 4))}), nil
}

func (k *keeper) State() ([]byte, error) { return bytes.Clone(k.last), nil }

// The check above can fail: a parser that keeps a line is caught.
func TestKeptLineBytesCatchesAKeeper(t *testing.T) {
	a := Agent{Name: "keeper", New: func(watchers.Source) watchers.Parser { return &keeper{} }}
	if keptLineBytes([]byte("{\"a\":1}\n{\"b\":2}\n"), "", a, watchers.Source{}) == "" {
		t.Fatal("a parser keeping its lines went unnoticed")
	}
}
