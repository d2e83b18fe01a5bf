package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func canonicalOf(t *testing.T, js string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// canonicalCases hold JSON inputs and what Python's json.dumps(json.loads(in),
// sort_keys=True, separators=(",", ":"), ensure_ascii=False) prints for them.
var canonicalCases = []struct{ in, want string }{
	{`{"b":1,"a":[true,false,null]}`, `{"a":[true,false,null],"b":1}`},
	{`{"é":1,"z":2,"Z":3,"a":4}`, `{"Z":3,"a":4,"z":2,"é":1}`},
	{`[0.1, 1.0, 1e-05, 0.0001, 1e16, 1e15, 123456789012345678, 1.5e300, -0.0, 2.5E-7]`,
		`[0.1,1.0,1e-05,0.0001,1e+16,1000000000000000.0,123456789012345678,1.5e+300,-0.0,2.5e-07]`},
	{`[100, -0, 1E2, 0.30000000000000004, 1.7976931348623157e308, 5e-324]`,
		`[100,0,100.0,0.30000000000000004,1.7976931348623157e+308,5e-324]`},
	{`["a\"b\\c\n\t\r\b\f\u0001\u001f\u007f", "ü€😀", "\u2028", "</script>&"]`,
		"[\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\u007f\",\"ü€😀\",\"\u2028\",\"</script>&\"]"},
	{`{}`, `{}`},
	{`[]`, `[]`},
	{`{"a":{"c":[],"b":{}}}`, `{"a":{"b":{},"c":[]}}`},
	{`[12345678901234567890123]`, `[12345678901234567890123]`},
	{`[1e22, 1.23e-4, 0.000123, 9999999999999998.0]`, `[1e+22,0.000123,0.000123,9999999999999998.0]`},
}

func TestCanonical(t *testing.T) {
	for _, tc := range canonicalCases {
		if got := canonicalOf(t, tc.in); got != tc.want {
			t.Errorf("Canonical(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// TestCanonicalAgainstPython runs the same inputs and the fixture maps
// through python3, when it is installed, and compares the bytes.
func TestCanonicalAgainstPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	inputs := []string{}
	for _, tc := range canonicalCases {
		inputs = append(inputs, tc.in)
	}
	for _, name := range fixtureNames(t) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(data))
	}
	const script = `import json, sys
for line in sys.stdin:
    v = json.loads(json.loads(line))
    sys.stdout.buffer.write(json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
`
	var in bytes.Buffer
	for _, s := range inputs {
		line, _ := json.Marshal(s) // one input per line, as a JSON string
		in.Write(line)
		in.WriteByte('\n')
	}
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("python3 gave %d lines for %d inputs", len(lines), len(inputs))
	}
	for i, s := range inputs {
		if got := canonicalOf(t, s); got != lines[i] {
			t.Errorf("input %d differs from python3:\n  go %s\n  py %s", i, clip(got), clip(lines[i]))
		}
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// TestContentHashIgnoresCLIVersion checks the two exclusions of the hash.
func TestContentHashIgnoresCLIVersion(t *testing.T) {
	doc := loadFull(t)
	h1, err := ContentHash(doc)
	if err != nil {
		t.Fatal(err)
	}
	doc["session"].(map[string]any)["cliVersion"] = "other 9.9"
	doc["contentHash"] = "0000"
	h2, _ := ContentHash(doc)
	if h1 != h2 {
		t.Error("cliVersion or contentHash changes the hash")
	}
	doc["session"].(map[string]any)["durationMs"] = json.Number("1")
	if h3, _ := ContentHash(doc); h3 == h1 {
		t.Error("a change of content keeps the hash")
	}
	if doc["session"].(map[string]any)["cliVersion"] != "other 9.9" {
		t.Error("ContentHash modified its input")
	}
}

func FuzzMap(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join(fixtures, "*.json"))
	for _, n := range names {
		if data, err := os.ReadFile(n); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"events":[{"seq":"x","t":-1,"verb":5,"targets":[{"file":"a"}]}],"agents":[{"launchSeq":-3}]}`))
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range Map(data) {
			if p.Rule == "" || p.Message == "" {
				t.Fatalf("empty problem %+v", p)
			}
		}
	})
}

func BenchmarkMap(b *testing.B) {
	data := bigMap(b, 20000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if ps := Map(data); len(ps) != 0 {
			b.Fatal(ps[0])
		}
	}
}

// bigMap repeats the full fixture's tool events up to n events, the
// producer's event cap.
func bigMap(b *testing.B, n int) []byte {
	doc := loadFull(b)
	src := doc["events"].([]any)
	events := make([]any, 0, n)
	for len(events) < n {
		for _, e := range src[2:9] {
			m := map[string]any{}
			for k, v := range e.(map[string]any) {
				m[k] = v
			}
			delete(m, "retryOf")
			delete(m, "attempt")
			m["seq"] = json.Number(strconv.Itoa(len(events)))
			m["t"] = json.Number(strconv.Itoa(60000 + len(events)))
			m["task"] = json.Number("2")
			m["err"] = false
			delete(m, "errClass")
			delete(m, "exitCode")
			events = append(events, m)
		}
	}
	doc["events"] = events[:n]
	doc["totals"] = map[string]any{"calls": json.Number(strconv.Itoa(n))}
	doc["tasks"].([]any)[1].(map[string]any)["endSeq"] = json.Number(strconv.Itoa(n - 1))
	delete(doc, "prs")
	doc["agents"] = doc["agents"].([]any)[:1]
	doc["session"].(map[string]any)["durationMs"] = json.Number(strconv.Itoa(60000 + n))
	return encodeDoc(b, doc)
}

// FuzzEventField sets one field of one event of the full fixture to a
// fuzzed value, so that the checks beyond JSON decoding are exercised, and
// checks that no problem repeats a string value (verbs aside: a verb of
// plain words is printed on purpose).
func FuzzEventField(f *testing.F) {
	f.Add(uint8(4), "verb", []byte(`"git push origin"`))
	f.Add(uint8(2), "targets", []byte(`[{"file":7,"touch":"read"}]`))
	f.Add(uint8(17), "ref", []byte(`-3`))
	f.Add(uint8(0), "prompt", []byte(`"a secret prompt text"`))
	f.Add(uint8(15), "host", []byte(`"Example.COM:8080"`))
	f.Add(uint8(9), "ms", []byte(`1e300`))
	data, err := os.ReadFile(filepath.Join(fixtures, "full.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, i uint8, field string, raw []byte) {
		doc := decodeDoc(t, data)
		events := doc["events"].([]any)
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			v = string(raw)
		}
		events[int(i)%len(events)].(map[string]any)[field] = v
		out, err := json.Marshal(doc)
		if err != nil {
			return // invalid UTF-8 in the field name, say
		}
		s, isString := v.(string)
		for _, p := range Map(out) {
			if p.Rule == "" || p.Message == "" {
				t.Fatalf("empty problem %+v", p)
			}
			if isString && field != "verb" && len(s) >= 8 && strings.Contains(p.String(), s) {
				t.Fatalf("problem repeats the value: %s", p)
			}
		}
	})
}
