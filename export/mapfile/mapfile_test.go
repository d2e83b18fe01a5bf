package mapfile

import (
	"bytes"
	"compress/gzip"
	"slices"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/redact"
)

const sample = `{"schema":"agentplay/v1","contentHash":"x","session":{"id":"local:codex:abc-1","agentTool":"codex","pathMode":"relative","startedAt":"2026-01-02T03:04:05.006Z"},` +
	`"files":[{"id":0,"repo":"r0","path":"src/SECRETNAME.go"},{"id":1,"repo":"r0","path":"."}],"events":[{"seq":0,"t":0,"kind":"read","targets":[{"file":0,"touch":"read"}]}]}`

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestRead(t *testing.T) {
	for name, in := range map[string][]byte{"plain": []byte(sample), "gzip": gz([]byte(sample))} {
		d, err := Read(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Name != "abc-1.json.gz" || d.Map.Session.NativeID() != "abc-1" {
			t.Errorf("%s: name %s native %s", name, d.Name, d.Map.Session.NativeID())
		}
		if p, ok := d.Map.FilePath(0); !ok || p != "src/SECRETNAME.go" {
			t.Errorf("%s: file 0 = %q", name, p)
		}
		if start, ok := d.Map.Start(); !ok || start.Nanosecond() != 6e6 {
			t.Errorf("%s: start %v", name, start)
		}
	}
}

// Errors name the problem and the offset, never the input.
func TestReadErrors(t *testing.T) {
	tests := map[string][]byte{
		"not json":       []byte(`{"schema": SECRETTEXT}`),
		"truncated":      []byte(`{"schema":"agentplay/v1","session":{"id":"SECRETTEXT`),
		"other schema":   []byte(`{"schema":"SECRETTEXT"}`),
		"no session id":  []byte(`{"schema":"agentplay/v1","session":{"agentTool":"SECRETTEXT"}}`),
		"wrong type":     []byte(`{"schema":"agentplay/v1","session":{"id":"x"},"events":[{"seq":"SECRETTEXT"}]}`),
		"bad gzip":       append([]byte{0x1f, 0x8b}, []byte("SECRETTEXT")...),
		"gzip truncated": gz([]byte(sample))[:30],
	}
	for name, in := range tests {
		_, err := Read(bytes.NewReader(in))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error quotes the input: %v", name, err)
		}
	}
}

func TestRerender(t *testing.T) {
	d, err := Read(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mode redact.Mode
		key  []byte
		want string
	}{
		{redact.ModeDirsOnly, nil, "dirs_only"},
		{redact.ModeHashed, []byte("k"), "hashed"},
		{redact.ModeHashed, nil, "dirs_only"}, // no key: the builder's fallback
	} {
		r, err := Rerender(d, tt.mode, tt.key)
		if err != nil {
			t.Fatal(err)
		}
		if r.Map.Session.PathMode != tt.want {
			t.Errorf("%s: pathMode %s", tt.mode, r.Map.Session.PathMode)
		}
		if bytes.Contains(r.Canonical, []byte("SECRETNAME")) {
			t.Errorf("%s: file name survived", tt.mode)
		}
		if p, _ := r.Map.FilePath(1); p != "." {
			t.Errorf("%s: repo root became %q", tt.mode, p)
		}
		if r.Map.ContentHash == d.Map.ContentHash || len(r.Map.ContentHash) != 64 {
			t.Errorf("%s: content hash not recomputed", tt.mode)
		}
		if !bytes.Contains(d.Canonical, []byte("SECRETNAME")) {
			t.Fatal("the original map was modified")
		}
		other := redact.ModeHashed
		if tt.want == "hashed" {
			other = redact.ModeDirsOnly
		}
		if _, err := Rerender(r, other, []byte("k")); err == nil {
			t.Errorf("%s: a non-relative map was re-rendered", tt.mode)
		}
		if same, err := Rerender(r, redact.Mode(tt.want), []byte("k")); err != nil || same != r {
			t.Errorf("%s: a map already in the mode was not passed through: %v", tt.mode, err)
		}
	}
}

// A model the config priced is not unpriced for a request of its too small
// to carry a cost; one no request of which carries a cost, and which the
// table does not know, is.
func TestUnpricedModels(t *testing.T) {
	m := &Map{Events: []Event{
		{Kind: "llm", Agent: "main", Model: "local-model", In: 1000, Cost: 0.25},
		{Kind: "llm", Agent: "main", Model: "local-model", CR: 1},
		{Kind: "llm", Agent: "main", Model: "nobody-prices-this", In: 10},
		{Kind: "llm", Agent: "a1", Model: "other-unpriced", Out: 5},
		{Kind: "llm", Agent: "main", Model: "claude-opus-4-8", CR: 1},
		// Priced by this table, yet no cost on 20,000 tokens: the map was
		// written when the model had no price (an older table).
		{Kind: "llm", Agent: "main", Model: "claude-sonnet-4-5", In: 20000, Out: 500},
	}}
	if got := m.UnpricedModels(""); !slices.Equal(got, []string{"nobody-prices-this", "other-unpriced", "claude-sonnet-4-5"}) {
		t.Errorf("session: %q", got)
	}
	if got := m.UnpricedModels("main"); !slices.Equal(got, []string{"nobody-prices-this", "claude-sonnet-4-5"}) {
		t.Errorf("main lane: %q", got)
	}
}
