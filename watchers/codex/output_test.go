package codex

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/internal/cite"
)

// checkOutputHead: an output read from the start of its text, whatever
// that start's length, reads exactly as the whole decoded text does. raw
// is an output of the line in.
func checkOutputHead(t *testing.T, in cite.Line, raw json.RawMessage) {
	t.Helper()
	var whole string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &whole) != nil {
		return
	}
	want := parseOutput(whole)
	p := NewParser(sourceOf("0190eeee-0000-7000-8000-000000000003"))
	for _, head := range []int{0, 1, 5, 12, 13, 20, 33, 34, 35, 36, 40, 64, 100, 200, outputHead, 1 << 30} {
		o := p.readOutputHead(raw, head)
		got := fmt.Sprint(deref(o.exit), o.durMs, o.session, o.failed, o.bodyLen(), o.Body() == want.body, o.Text() == whole)
		if exp := fmt.Sprint(deref(want.exit), want.durMs, want.session, want.failed, len(want.body), true, true); got != exp {
			t.Fatalf("output %s of %s read from %d bytes: %s, the whole text gives %s", in.Part(raw), in, head, got, exp)
		}
	}
}

var outputHeadCases = []string{
	"Exit code: 0\nWall time: 0.5 seconds\nOutput:\nhello",
	"Chunk ID: ab12\nWall time: 10.0 seconds\nProcess running with session ID 27299\nOriginal token count: 0\nOutput:\n",
	"Chunk ID: ab12\r\nWall time: 1.0017 seconds\r\nProcess exited with code 3\r\nOutput:\r\nx",
	`{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":1.25}}`,
	`{"output":"boom","metadata":{"exit_code":2,"duration_seconds":0}}`,
	`{"metadata":{"exit_code":1},"output":"é"}`, `{"output":"x","Output":"y"}`, `{"output":5}`, `{"output":"x","metadata":{"exit_code":1.5}}`,
	`{"output":`, "Exit code: " + strings.Repeat(" ", 40) + "7\nOutput:\nbody",
	"Process running with session ID " + strings.Repeat("1", 30) + "\nOutput:\n",
	"Process running with session ID 12\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\nOutput:\n",
	"Output:" + strings.Repeat("\r", 40) + "\nbody", strings.Repeat("x", 40) + "\nExit code: 1\nOutput:\n",
	"Wall time: 2s\n" + strings.Repeat("y", 600),
	"\n\n   \n" + strings.Repeat(" ", 30) + "failed to parse function arguments: x",
	"  error: nope", "Plan updated", "", "Exit code: 1\n", "Exit code: 1", "Total output lines: 3\nChunk ID: 1\nWall time: 1\nExit code: 2\nOriginal token count: 1\nProcess exited with code 3\nWall time: 4\nChunk ID: 5\nOutput:\nx",
}

func TestOutputReadFromItsStart(t *testing.T) {
	for _, c := range outputHeadCases {
		raw, _ := json.Marshal(c)
		checkOutputHead(t, cite.Own(raw), raw)
	}
}

// TestOutputReadFromItsStartOnCorpus holds every string output of the
// fixtures and the corpus to it.
func TestOutputReadFromItsStartOnCorpus(t *testing.T) {
	paths := fixturesAndCorpus(t)
	n := 0
	for _, path := range paths {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		for _, line := range citedLines(t, path) {
			var l rawLine
			if !scanLine(&l, line.B) || l.Payload == nil {
				continue
			}
			for _, raw := range []json.RawMessage{l.Payload.Output, l.Payload.Tools} {
				if len(raw) > 0 && raw[0] == '"' {
					checkOutputHead(t, line, raw)
					n++
				}
			}
		}
	}
	t.Logf("%d outputs", n)
}

func FuzzOutputHead(f *testing.F) {
	for _, c := range outputHeadCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, text string) {
		raw, _ := json.Marshal(text)
		checkOutputHead(t, cite.Own(raw), raw)
		// The text as a literal of its own (escapes, invalid UTF-8)
		lit := json.RawMessage(`"` + text + `"`)
		checkOutputHead(t, cite.Own(lit), lit)
	})
}
