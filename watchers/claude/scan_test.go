package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/agentmap/agentmap/internal/cite"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// slowEnvelope is what Line read before the walk: the whole line decoded
// with encoding/json, then a string content decoded again.
func slowEnvelope(line []byte) (envelope, error) {
	var env envelope
	if err := decode(line, &env); err != nil {
		return env, err
	}
	if env.Message != nil && env.Message.Blocks == nil {
		env.Message.Text = textContent(line)
	}
	return env, nil
}

// sharedBuffers are reused by every checkScan, as a parser reuses its own.
var sharedBuffers lineBuffers

// unbuffered is env as a walk without buffers fills it: the same values,
// without the pointers to the buffers.
func unbuffered(env envelope) envelope {
	env.bufs = nil
	if env.Message != nil {
		m := *env.Message
		m.bufs = nil
		m.Usage = unbufferedUsage(m.Usage)
		env.Message = &m
	}
	if env.Data != nil {
		d := *env.Data
		d.bufs = nil
		if d.Message != nil {
			l := *d.Message
			l.bufs = nil
			if l.Message != nil {
				m := *l.Message
				m.bufs = nil
				m.Usage = unbufferedUsage(m.Usage)
				l.Message = &m
			}
			d.Message = &l
		}
		env.Data = &d
	}
	return env
}

func unbufferedUsage(in *usage) *usage {
	if in == nil {
		return nil
	}
	u := *in
	u.split = nil
	if u.Split != nil {
		split := *u.Split
		u.Split = &split
	}
	return &u
}

// unmeasured is env without the lengths the walk measured (which
// encoding/json does not fill), once each is held to StringLen. env is
// the walk of the line in.
func unmeasured(t testing.TB, in cite.Line, env envelope) envelope {
	t.Helper()
	if env.Message == nil || env.Message.Blocks == nil {
		return env
	}
	m := *env.Message
	m.Blocks = append([]block{}, m.Blocks...)
	check := func(raw json.RawMessage, n jsonscan.Len) {
		t.Helper()
		nb, nr, _ := jsonscan.StringLen(raw)
		if gb, gr := n.Of(raw); gb != nb || gr != nr {
			t.Fatalf("%s of %s measured %d bytes %d runes, StringLen %d %d", in.Part(raw), in, gb, gr, nb, nr)
		}
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		check(b.Text, b.textLen)
		check(b.Content, b.contentLen)
		b.textLen, b.contentLen = jsonscan.Len{}, jsonscan.Len{}
		if b.Source != nil {
			src := *b.Source
			check(src.Data, src.dataLen)
			src.dataLen = jsonscan.Len{}
			b.Source = &src
		}
	}
	env.Message = &m
	return env
}

// checkScan asserts that the walk either gives up or fills exactly what
// encoding/json fills, and never accepts a line encoding/json refuses. It
// reports whether the walk took the line. Failures name in, never quote
// it (unless it is the test's own).
func checkScan(t testing.TB, in cite.Line) bool {
	t.Helper()
	line := bytes.TrimSpace(in.B)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	var fast envelope
	if !fast.scan(line) {
		return false
	}
	// Read into buffers reused from line to line, as Line does, the walk
	// fills the same.
	buffered := envelope{bufs: &sharedBuffers}
	defer sharedBuffers.reset()
	if !buffered.scan(line) || !reflect.DeepEqual(unbuffered(buffered), fast) {
		t.Fatalf("the walk into reused buffers differs on %s: %s", in, in.Diff(unbuffered(buffered), fast))
	}
	slow, err := slowEnvelope(line)
	if err != nil {
		t.Fatalf("the walk accepted a line encoding/json refuses (%v): %s", err, in)
	}
	if fast = unmeasured(t, in, fast); !reflect.DeepEqual(fast, slow) {
		t.Fatalf("the walk and encoding/json disagree on %s: %s", in, in.Diff(fast, slow))
	}
	if fast.Message != nil {
		for _, b := range fast.Message.Blocks {
			var walked, decoded toolInput
			if isObject(b.Input) && toolInputFields.FillValid(&walked, b.Input) {
				_ = decode(b.Input, &decoded)
				if !reflect.DeepEqual(walked, decoded) {
					t.Fatalf("tool input of %s: the walk and encoding/json %s", in, in.Diff(walked, decoded))
				}
			}
		}
	}
	return true
}

func TestScanMatchesDecodeOnCorpus(t *testing.T) {
	var files []string
	if dir := corpusDirIfPresent(); dir != "" {
		files, _ = filepath.Glob(filepath.Join(dir, "*.jsonl"))
	}
	fixtures, _ := filepath.Glob(filepath.Join("testdata", "*", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	files = append(append(files, fixtures...), more...)
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	lines, fast := 0, 0
	for _, path := range files {
		first := true
		eachCited(t, path, func(line cite.Line) {
			lines++
			if first { // what Identify and LooksLike read
				checkHeads(t, line)
				first = false
			}
			if checkScan(t, line) {
				fast++
			}
		})
	}
	t.Logf("%d of %d lines walked, the rest decoded by encoding/json", fast, lines)
	for _, line := range []string{`{"type":"user"}`, `{"type":5}`, `{"type":null,"sessionId":"s"}`, `{"type":"us\u0065r"}`,
		`{"type":"user","payload":null}`, `{"type":"user"} x`, `{"Type":"user"}`, `{"sessionId":7,"isSidechain":true,"agentId":"a1"}`, ``, `[]`} {
		checkHeads(t, cite.Own([]byte(line)))
	}
	if fast < lines*9/10 {
		t.Errorf("only %d of %d lines took the walk", fast, lines)
	}
}

func TestScanGivesUpOnWhatItDoesNotMirror(t *testing.T) {
	for _, line := range []string{
		`{"type":"user","type":"assistant"}`,                   // repeated key: encoding/json keeps the last
		`{"Type":"user"}`,                                      // matched only up to case
		`{"type":"user","message":{"content":[{"TEXT":"x"}]}}`, // the same, nested
		`{"typ\u0065":"user"}`,                                 // escaped key
		`{"type":"user","message":"text"}`,                     // message of another type
		`{"type":"user","message":{"content":["a"]}}`,          // block of another type
		`{"type":"progress","data":"text"}`,                    // progress data of another type
		`{"type":"progress","data":{"message":[]}}`,            // a relayed line of another type
		`{"type":"user","toolUseResult":{"durationMs":1,"DurationMs":2}}`,
		`{"type":"user"`,                        // invalid JSON
		`{"type":"user","x":"a` + "\x01" + `"}`, // control byte in a string
		`{"type":"user"} x`,                     // trailing data
	} {
		var env envelope
		if env.scan([]byte(line)) {
			t.Errorf("walk took %q", line)
		}
	}
	for _, line := range []string{
		`{"type":"user","message":{"content":[]}}`,
		`{"type":"user","message":{"content":"hi \u00e9\ud83d\ude00"},"toolUseResult":"Error: x"}`,
		`{"type":"user","message":null,"x":[1,-2.5e+3,true,false,null,{"a":{}}]}`,
		`{"type":"assistant","message":{"content":[null,{"type":"image","source":{"data":"AAAA"}}],"usage":{"input_tokens":"7"}}}`,
		`{"type":5,"uuid":null,"toolUseResult":{"gitOperation":{"commit":{"sha":"abcdef1"}},"durationMs":"3"}}`,
		"{\"type\":\"user\",\"bad\":\"\xff\xfe\"}",
		`{"type":"progress","data":null}`,
		`{"type":"progress","data":{"type":"hook_progress","hookName":"h","command":"x"}}`,
		// A relayed response and the line's own message: each usage keeps
		// its own cache split.
		`{"type":"progress","parentToolUseID":"toolu_1","data":{"type":"agent_progress","agentId":"a1","prompt":"p","normalizedMessages":[{"a":1}],` +
			`"message":{"type":"assistant","timestamp":"2026-01-01T00:00:00.000Z","requestId":"r","uuid":"u","message":{"id":"m","model":"x","role":"assistant",` +
			`"content":[{"type":"text","text":"y"}],"usage":{"input_tokens":1,"cache_creation":{"ephemeral_1h_input_tokens":2}}}}},` +
			`"message":{"usage":{"cache_creation":{"ephemeral_5m_input_tokens":3}}}}`,
	} {
		if !checkScan(t, cite.Own([]byte(line))) {
			t.Errorf("walk gave up on %q", line)
		}
	}
}

// FuzzScan holds the walk to encoding/json on arbitrary lines.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"a\"b"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":3}}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}],"is_error":true}]},"toolUseResult":{"interrupted":false}}`))
	if dir := corpusDirIfPresent(); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, path := range files[:min(3, len(files))] {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			for i, line := range bytes.Split(data, []byte("\n")) {
				if i < 20 && len(line) < 4096 {
					f.Add(line)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		// The seeds include corpus lines: an input is named, not quoted.
		in := cite.Input(line)
		if checkScan(t, in) && !json.Valid(bytes.TrimSpace(line)) {
			t.Fatalf("walk took invalid JSON: %s", in)
		}
		checkHeads(t, in)
	})
}

// checkHeads holds what Identify and LooksLike read of a first line to
// what encoding/json reads of it.
func checkHeads(t testing.TB, in cite.Line) {
	t.Helper()
	line := in.B
	var head, want headLine
	if headFields.Fill(&head, line) {
		err := json.Unmarshal(line, &want)
		var te *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &te) || !reflect.DeepEqual(head, want) {
			t.Fatalf("first line %s (encoding/json: %v): the walk and encoding/json %s", in, err, in.Diff(head, want))
		}
	}
	var rec struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	looks := json.Unmarshal(line, &rec) == nil && rec.Payload == nil && knownType(rec.Type)
	if LooksLike(line) != looks {
		t.Fatalf("LooksLike(%s) = %v, encoding/json reads %v", in, !looks, looks)
	}
}

// TestScanKeysAreAllTheStructs holds the walk's key lists to the structs:
// a field added to a struct without its key would be silently left empty
// by the walk.
func TestScanKeysAreAllTheStructs(t *testing.T) {
	for _, c := range []struct {
		names []string
		typ   reflect.Type
	}{
		{envelopeFields.Names(), reflect.TypeFor[envelope]()},
		{messageFields.Names(), reflect.TypeFor[message]()},
		{blockFields.Names(), reflect.TypeFor[block]()},
		{turFields.Names(), reflect.TypeFor[toolUseResult]()},
		{sourceFields.Names(), reflect.TypeFor[imageSource]()},
		{toolInputFields.Names(), reflect.TypeFor[toolInput]()},
		{usageFields.Names(), reflect.TypeFor[usage]()},
		{splitFields.Names(), reflect.TypeFor[cacheSplit]()},
		{attachmentFields.Names(), reflect.TypeFor[attachment]()},
		{progressFields.Names(), reflect.TypeFor[progressData]()},
		{relayedLineFields.Names(), reflect.TypeFor[relayedLine]()},
		{relayedMessageFields.Names(), reflect.TypeFor[relayedMessage]()},
		{originFields.Names(), reflect.TypeFor[origin]()},
		{headFields.Names(), reflect.TypeFor[headLine]()},
		{recordHeadFields.Names(), reflect.TypeFor[recordHead]()},
	} {
		got, want := c.names, jsonscan.MemberNames(c.typ)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v: walk reads %v, struct has %v", c.typ, got, want)
		}
	}
}
