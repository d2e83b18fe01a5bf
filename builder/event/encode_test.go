package event

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/internal/jsondec/jsondectest"
)

// randomBatch is min to min+3 events with their fields filled at random.
func randomBatch(rng *rand.Rand, min int) []Event {
	evs := make([]Event, min+rng.IntN(4))
	for i := range evs {
		jsondectest.Fill(reflect.ValueOf(&evs[i]).Elem(), rng, 0)
	}
	return evs
}

func TestAppendJSONIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		evs := randomBatch(rng, 0)
		want, err := json.Marshal(evs)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSON(nil, evs); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
	if got := AppendJSON([]byte("x"), nil); string(got) != "xnull" {
		t.Errorf("nil events: %s", got)
	}
}

// Strings are read eight bytes at a time up to the first that needs care:
// each such byte or rune, at every place in strings about that long, is
// escaped as encoding/json escapes it.
func TestAppendJSONStringAnyPlace(t *testing.T) {
	for _, odd := range []string{"\"", "\\", "<", ">", "&", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "~", " "} {
		for n := range 20 {
			for at := 0; at <= n; at++ {
				s := strings.Repeat("a", at) + odd + strings.Repeat("b", n-at)
				want, _ := json.Marshal(s)
				if got := appendString(nil, s); !bytes.Equal(got, want) {
					t.Fatalf("%q: got %s, want %s", s, got, want)
				}
			}
		}
	}
}

// Every field of every record is written: a record with all its fields
// set encodes as encoding/json encodes it (a field added to a record and
// not to AppendJSON is missing from its output).
func TestAppendJSONWritesEveryField(t *testing.T) {
	var e Event
	jsondectest.Full(reflect.ValueOf(&e).Elem())
	want, _ := json.Marshal([]Event{e})
	if got := AppendJSON(nil, []Event{e}); !bytes.Equal(got, want) {
		t.Fatalf("a record with every field set:\n got %s\nwant %s", got, want)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsondectest.Awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		evs := []Event{{Kind: Kind(s), Agent: s, Call: &Call{Tool: s, Targets: []Target{{Path: s}}}}}
		want, _ := json.Marshal(evs)
		if got := AppendJSON(nil, evs); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	evs := make([]Event, 200)
	for i := range evs {
		jsondectest.Fill(reflect.ValueOf(&evs[i]).Elem(), rng, 0)
	}
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendJSON(buf[:0], evs)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(evs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
