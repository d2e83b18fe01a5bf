package validate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/validate"
)

// TestCanonicalMatchesBuilder compares the validator's canonical encoder
// and content hash with the builder's: two implementations written apart
// must agree byte for byte on every fixture map and on awkward values.
func TestCanonicalMatchesBuilder(t *testing.T) {
	inputs := []string{
		`[0.1, 1.0, 1e-05, 0.0001, 1e16, 1e15, 123456789012345678, 1.5e300, -0.0, 2.5E-7, 100, -0, 1E2]`,
		`["a\"b\\c\n\t\r\b\f\u0001\u001f\u007f", "ü€😀", "\u2028", "</script>&"]`,
		`{"é":1,"z":{"b":[],"a":{}},"Z":null,"a":[true,false]}`,
	}
	names, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "validate", "*.json"))
	if len(names) == 0 {
		t.Fatal("no fixtures")
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(data))
	}
	for i, in := range inputs {
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		ours, err := validate.Canonical(v)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := builder.CanonicalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("input %d: canonical JSON differs:\n validate %.300s\n builder  %.300s", i, ours, theirs)
		}
		doc, ok := v.(map[string]any)
		if !ok {
			continue
		}
		h1, err1 := validate.ContentHash(doc)
		h2, err2 := builder.ContentHash(doc)
		if err1 != nil || err2 != nil || h1 != h2 {
			t.Errorf("input %d: content hash %s (%v) vs builder %s (%v)", i, h1, err1, h2, err2)
		}
	}
}
