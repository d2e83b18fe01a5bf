package codex

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/internal/cite"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

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
	var fast rawLine
	if !scanLine(&fast, line) {
		return false
	}
	var slow rawLine
	if err := json.Unmarshal(line, &slow); err != nil && !isTypeError(err) {
		t.Fatalf("the walk accepted a line encoding/json refuses (%v): %s", err, in)
	}
	// The lengths the walk measured, which encoding/json does not fill,
	// are StringLen's.
	for _, it := range []*item{&fast.item, fast.Payload, fast.Session} {
		if it == nil {
			continue
		}
		for _, m := range []struct {
			name string
			raw  json.RawMessage
			n    *jsonscan.Len
		}{{"output", it.Output, &it.outputLen}, {"aggregated_output", it.Aggregated, &it.aggregatedLen}} {
			nb, nr, _ := jsonscan.StringLen(m.raw)
			if gb, gr := m.n.Of(m.raw); gb != nb || gr != nr {
				t.Fatalf("%s of %s measured %d bytes %d runes, StringLen %d %d", m.name, in, gb, gr, nb, nr)
			}
			*m.n = jsonscan.Len{}
		}
		// A patch's changes, left raw, decode as encoding/json decodes
		// them in the line.
		it.Changes, it.changes = it.changesOf(), nil
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("the walk and encoding/json disagree on %s: %s", in, in.Diff(fast, slow))
	}
	for _, it := range []*item{&fast.item, fast.Payload} {
		if it != nil && len(it.Arguments) > 0 {
			checkArgs(t, in, it.Arguments)
		}
		if it != nil && len(it.Content) > 0 && it.Content[0] == '[' {
			var want []contentPart
			_ = json.Unmarshal(it.Content, &want)
			if got := contentParts(it.Content); !reflect.DeepEqual(got, want) {
				t.Fatalf("content parts of %s: the walk and encoding/json %s", in, in.Diff(got, want))
			}
		}
	}
	return true
}

// checkArgs holds the walk of a call's arguments (of the line in) to
// encoding/json.
func checkArgs(t testing.TB, in cite.Line, raw json.RawMessage) {
	t.Helper()
	s := string(raw)
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return
		}
	}
	s = strings.TrimSpace(s)
	if s == "" || s[0] != '{' {
		return
	}
	var walked, decoded args
	if argFields.Fill(&walked, []byte(s)) {
		if err := json.Unmarshal([]byte(s), &decoded); err != nil && !isTypeError(err) {
			t.Fatalf("the walk accepted arguments encoding/json refuses: %s of %s", in.Part([]byte(s)), in)
		}
		if !reflect.DeepEqual(walked, decoded) {
			t.Fatalf("arguments %s of %s: the walk and encoding/json %s", in.Part([]byte(s)), in, in.Diff(walked, decoded))
		}
	}
}

func TestScanMatchesDecodeOnCorpus(t *testing.T) {
	paths := fixturesAndCorpus(t)
	lines, fast := 0, 0
	for _, path := range paths {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		for _, line := range citedLines(t, path) {
			lines++
			if checkScan(t, line) {
				fast++
			}
		}
	}
	t.Logf("%d of %d lines walked, the rest decoded by encoding/json", fast, lines)
	if lines == 0 || fast < lines*9/10 {
		t.Errorf("only %d of %d lines took the walk", fast, lines)
	}
}

// TestScanFieldsAreAllTheStructs holds the walk's member lists to the
// structs: a field added to item or rawLine without a setter would be
// silently left empty by the walk.
func TestScanFieldsAreAllTheStructs(t *testing.T) {
	if got, want := itemFields.Names(), jsonNames(reflect.TypeFor[item]()); !sameSet(got, want) {
		t.Errorf("item walk names %v, struct has %v", got, want)
	}
	if got, want := lineFields.Names(), jsonNames(reflect.TypeFor[rawLine]()); !sameSet(got, want) {
		t.Errorf("line walk names %v, struct has %v", got, want)
	}
	if got, want := infoFields.Names(), jsonNames(reflect.TypeFor[tokenInfo]()); !sameSet(got, want) {
		t.Errorf("info walk names %v, struct has %v", got, want)
	}
	if got, want := usageFields.Names(), jsonNames(reflect.TypeFor[tokenUsage]()); !sameSet(got, want) {
		t.Errorf("usage walk names %v, struct has %v", got, want)
	}
	if got, want := argFields.Names(), jsonNames(reflect.TypeFor[args]()); !sameSet(got, want) {
		t.Errorf("arguments walk names %v, struct has %v", got, want)
	}
	if got, want := partFields.Names(), jsonNames(reflect.TypeFor[contentPart]()); !sameSet(got, want) {
		t.Errorf("content part walk names %v, struct has %v", got, want)
	}
	for _, c := range []struct {
		got  []string
		typ  reflect.Type
		what string
	}{
		{collabFields.Names(), reflect.TypeFor[collabMode](), "collaboration mode"},
		{attributionFields.Names(), reflect.TypeFor[turnAttribution](), "turn attribution"},
		{turnItemFields.Names(), reflect.TypeFor[turnItem](), "thread item"},
		{mcpResultFields.Names(), reflect.TypeFor[mcpResult](), "MCP result"},
		{walkedOutputFields.Names(), reflect.TypeFor[jsonOutput](), "JSON output header"},
		{outputMetaFields.Names(), reflect.TypeFor[outputMeta](), "JSON output metadata"},
	} {
		if want := jsonNames(c.typ); !sameSet(c.got, want) {
			t.Errorf("%s walk names %v, struct has %v", c.what, c.got, want)
		}
	}
}

// jsonNames lists the member names encoding/json matches in a struct,
// those of embedded structs included.
func jsonNames(typ reflect.Type) []string {
	var names []string
	for f := range typ.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "":
			names = append(names, jsonNames(f.Type)...)
		case !f.IsExported():
		case tag != "":
			names = append(names, tag)
		default:
			names = append(names, f.Name)
		}
	}
	return names
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestScanGivesUpOnWhatItDoesNotMirror(t *testing.T) {
	for _, line := range []string{
		`{"type":"event_msg","type":"response_item"}`,
		`{"TYPE":"event_msg"}`,
		`{"type":"event_msg","payload":{"Call_ID":"c"}}`,
		`{"type":"event_msg","payload":"text"}`,
		`{"typ\u0065":"event_msg"}`,
		// A count that is not an integer stops encoding/json's decoding of
		// the line there (tokenUsage.UnmarshalJSON fails): the rest stays
		// empty, which only encoding/json itself mirrors.
		`{"type":"event_msg","payload":{"info":{"total_token_usage":{"input_tokens":1.5}},"type":"token_count"}}`,
		`{"type":"event_msg","payload":{"type":"exec_command_end","exit_code":"1"}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"output_tokens":"2"},"model_context_window":1e5}}}`,
		`{"type":"event_msg","payload":{"type":"x"}`,
		`{"type":"event_msg"}]`,
	} {
		var l rawLine
		if scanLine(&l, []byte(line)) {
			t.Errorf("walk took %q", line)
		}
	}
	for _, line := range []string{
		`{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"{\"output\":\"x\"}"}}`,
		`{"type":"event_msg","payload":{"type":"exec_command_end","exit_code":1,"success":null,"parsed_cmd":[{"type":"read","path":"a"}],"changes":{"a":{"type":"add"}}}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-1,"output_tokens":2,"cached_input_tokens":null},"last_token_usage":{"input_tokens":1099511627777},"model_context_window":-0}}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":null}}`,
		`{"type":"session_meta","payload":{"id":"x","git":null,"cwd":"caf\u00e9","cli_version":7,"turn_attribution":{"turn_id":"t"}}}`,
		`{"id":"x","timestamp":"2025-01-01T00:00:00Z","instructions":null}`,
		`{"session":{"id":"s"},"items":[{"type":"message"},null]}`,
		`{"record_type":"state","payload":null}`,
		`{"type":"response_item","payload":{"type":"message","content":[{"type":"input_text","text":"a\nb"},null,{"type":"input_image","image_url":"data:"}]}}`,
		`{"type":"response_item","payload":{"type":"message","content":[5,{"TEXT":"x"}]}}`,
	} {
		if !checkScan(t, cite.Own([]byte(line))) {
			t.Errorf("walk gave up on %q", line)
		}
	}
}

// FuzzScan holds the walk to encoding/json on arbitrary lines.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c"}}`))
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"exec_command_end","exit_code":1,"aggregated_output":"a\nb","duration":{"secs":1,"nanos":5}}}`))
	for _, path := range fixtures(f) {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		for i, line := range readLines(f, path) {
			if i < 30 && len(line) < 4096 {
				f.Add(line)
			}
		}
	}
	f.Add([]byte(`{"type":"event_msg","payload":{"info":{"total_token_usage":{"input_tokens":1.5}},"type":"token_count"},"timestamp":"x"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if checkScan(t, cite.Own(line)) && !json.Valid(bytes.TrimSpace(line)) {
			t.Fatalf("walk took invalid JSON %q", line)
		}
	})
}
