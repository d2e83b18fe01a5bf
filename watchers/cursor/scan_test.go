package cursor

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/agentmap/agentmap/internal/cite"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// checkScan asserts that the walk of a transcript line either gives up or
// reads exactly what encoding/json reads (decodeLine, and decodeInput for
// each tool input), and never takes a line encoding/json refuses. It
// reports whether the walk took the line. Failures name in, never quote
// it (unless it is the test's own).
func checkScan(t testing.TB, in cite.Line) bool {
	t.Helper()
	raw := trimSpace(in.B)
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var fast scannedLine
	blocks, ok := scanLine(raw, &fast, nil)
	if !ok {
		return false
	}
	slow, slowBlocks, err := decodeLine(raw)
	if err != nil {
		t.Fatalf("the walk took a line encoding/json refuses (%v): %s", err, in)
	}
	fast.Message, fast.Content = nil, nil
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("the walk and encoding/json disagree on %s: %s", in, in.Diff(fast, slow))
	}
	if len(blocks) != len(slowBlocks) {
		t.Fatalf("%s: the walk has %d blocks, encoding/json %d", in, len(blocks), len(slowBlocks))
	}
	for i := range blocks {
		b := blocks[i]
		if b.text() != slowBlocks[i].Text || b.runes() != slowBlocks[i].runes() {
			t.Fatalf("%s: block %d text differs", in, i)
		}
		b.rawText, b.Text = nil, slowBlocks[i].Text
		if !reflect.DeepEqual(b, slowBlocks[i]) {
			t.Fatalf("%s: block %d: the walk and encoding/json %s", in, i, in.Diff(b, slowBlocks[i]))
		}
		for _, raw := range []json.RawMessage{b.Input, b.Args} {
			checkInput(t, in, raw)
		}
	}
	return true
}

// checkInput holds keptInput to decodeInput and the text toolUseSpec reads
// (raw is an input of the line in).
func checkInput(t testing.TB, in cite.Line, raw []byte) {
	t.Helper()
	kept, txt, isText, ok := keptInput(raw)
	if !ok {
		return
	}
	want := decodeInput(raw)
	if want != nil {
		want = want.reduce()
	}
	if isText != (want == nil && len(trimSpace(raw)) > 0 && trimSpace(raw)[0] == '"') {
		t.Fatalf("input %s of %s: read as text %v, decodeInput gives nil %v", in.Part(raw), in, isText, want == nil)
	}
	if isText {
		var s string
		if json.Unmarshal(raw, &s) != nil || s != txt {
			t.Fatalf("input %s of %s: text differs", in.Part(raw), in)
		}
		return
	}
	if (kept == nil) != (want == nil) || !reflect.DeepEqual(normalize(kept), normalize(want)) {
		t.Fatalf("input %s of %s: the walk and decodeInput %s", in.Part(raw), in, in.Diff(normalize(kept), normalize(want)))
	}
}

// normalize turns an input's values into strings, for comparison.
func normalize(in input) map[string]string {
	m := map[string]string{}
	for k, v := range in {
		m[k] = string(v)
	}
	return m
}

func TestScanMatchesDecodeOnCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(moduleRoot(t), "testdata", "cursor", "*.jsonl"))
	if d := corpusPathIfAny(t); d != "" {
		more, _ := filepath.Glob(filepath.Join(d, "*.jsonl"))
		files = append(files, more...)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	lines, fast := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range cite.Split(f, data) {
			if len(trimSpace(l.B)) == 0 {
				continue
			}
			lines++
			if checkScan(t, l) {
				fast++
			}
		}
	}
	t.Logf("%d of %d lines walked, the rest decoded by encoding/json", fast, lines)
	if fast < lines*9/10 {
		t.Errorf("only %d of %d lines took the walk", fast, lines)
	}
}

func TestScanGivesUpOnWhatItDoesNotMirror(t *testing.T) {
	for _, line := range []string{
		`{"role":"user","role":"assistant"}`,                         // repeated key
		`{"Role":"user"}`,                                            // matched only up to case
		`{"role":"user","message":{"content":[{"TEXT":"x"}]}}`,       // the same, nested
		`{"rol\u0065":"user"}`,                                       // escaped key
		`{"role":5,"message":{"content":"text"}}`,                    // a type error before the content
		`{"role":"user","message":"text"}`,                           // message of another type
		`{"role":"user","message":{"content":7}}`,                    // content of another type
		`{"role":"user","message":{"content":["a"]}}`,                // block of another type
		`{"role":"user","message":{"content":"x"},"content":5}`,      // what the second read of a string content refuses
		`{"role":"assistant","message":{"content":[{"text":5}]}}`,    // text of another type
		`{"role":"assistant","message":{"content":[{"isError":1}]}}`, // flag of another type
		`{"role":"user"`,                                             // invalid JSON
		`{"role":"user","x":"a` + "\x01" + `"}`,                      // control byte in a string
		`{"role":"user"} x`,                                          // trailing data
	} {
		var l scannedLine
		if _, ok := scanLine([]byte(line), &l, nil); ok {
			t.Errorf("walk took %q", line)
		}
	}
	for _, line := range []string{
		`{"role":"assistant","message":{"content":[]}}`,
		`{"role":"assistant","message":{"content":null}}`,
		`{"role":"user","message":null,"x":[1,-2.5e+3,true,false,null,{"a":{}}]}`,
		`{"role":"user","message":{"content":"hi \u00e9\ud83d\ude00 <user_query>q</user_query>"},"content":null}`,
		`{"role":"assistant","message":{"content":[null,{"type":"text","text":null,"isError":true,"is_error":null}]}}`,
		`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"path":"/a","path":"/b","x":{"y":[1]}}}]}}`,
		`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":"{\"path\":\"/a\"}"}]}}`,
		`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"ApplyPatch","input":"*** Add File: a"}]}}`,
		`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"ApplyPatch","input":"null"}]}}`,
		`{"role":"assistant","message":{"content":[{"type":"tool-call","toolName":"Shell","args":{"command":"ls"},"input":" "}]}}`,
		"{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}}",
		`{"type":"turn_ended","status":"error"}`,
	} {
		if !checkScan(t, cite.Own([]byte(line))) {
			t.Errorf("walk gave up on %q", line)
		}
	}
}

// FuzzScan holds the walk to encoding/json on arbitrary lines.
func FuzzScan(f *testing.F) {
	for _, l := range bytes.Split(readFixture(f, "transcript.jsonl"), []byte("\n")) {
		f.Add(l)
	}
	f.Add([]byte(`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":"{\"path\":\"/a\",\"path\":1}"}]}}`))
	f.Add([]byte(`{"role":"user","message":{"content":"a\"b"},"content":"c"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if checkScan(t, cite.Own(line)) && !json.Valid(trimSpace(line)) {
			t.Fatalf("walk took invalid JSON %q", line)
		}
	})
}

// TestScanKeysAreAllTheStructs holds the walk's key lists to the structs
// encoding/json decodes: a field added to a struct without its key would
// be silently left empty by the walk.
func TestScanKeysAreAllTheStructs(t *testing.T) {
	for _, c := range []struct {
		names []string
		typ   reflect.Type
		extra []string
	}{
		{lineFields.Names(), reflect.TypeFor[line](), []string{"content"}},
		{blockFields.Names(), reflect.TypeFor[block](), nil},
	} {
		got, want := c.names, append(jsonscan.MemberNames(c.typ), c.extra...)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v: walk reads %v, struct has %v", c.typ, got, want)
		}
	}
}
