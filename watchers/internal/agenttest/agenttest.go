// Package agenttest is what the tests of the agent packages share.
//
// Spoil puts a canary into every string of a log record that is not on a
// short list of keys, so that a privacy test proves that no text reaches a
// parser's events, carry-state or errors whatever field the client puts it
// in, fields the parser never heard of included. The list is default-deny:
// only the keys a test names are kept (ids that pair records, enums the
// parser branches on, paths, model, tool and agent names: what a map may
// show by design); everything else is spoiled.
//
// CallKinds counts a parse's calls by tool and kind, the figure the tool
// tests compare.
package agenttest

import (
	"bytes"
	"encoding/json"

	"github.com/agentmap/agentmap/builder/event"
)

// Mark is what Spoil appends to a string: the canary as a word of its
// own and inside a URL, so that a prompt's URL count still sees a URL and
// a host check sees the canary's.
func Mark(canary string) string {
	return " " + canary + " https://" + canary + ".example/" + canary
}

// Spoil appends Mark(canary) to every string in v (decoded JSON) whose
// key is not in keep; a string inside an array counts under the array's
// key. Object keys are left alone. It returns v, changed in place.
func Spoil(v any, keep map[string]bool, canary string) any {
	return spoil(v, "", keep, Mark(canary))
}

func spoil(v any, key string, keep map[string]bool, mark string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = spoil(val, k, keep, mark)
		}
	case []any:
		for i := range x {
			x[i] = spoil(x[i], key, keep, mark)
		}
	case string:
		if !keep[key] {
			return x + mark
		}
	}
	return v
}

// SpoilJSON is Spoil over one JSON text; a text that is not JSON comes
// back with the canary appended, as a broken line would.
func SpoilJSON(b []byte, keep map[string]bool, canary string) []byte {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return append(append([]byte(nil), b...), Mark(canary)...)
	}
	out, _ := json.Marshal(Spoil(v, keep, canary))
	return out
}

// Holds reports whether b holds the canary (case-insensitively, as a
// lowercased copy of a map would).
func Holds(b []byte, canary string) bool {
	return bytes.Contains(bytes.ToLower(b), bytes.ToLower([]byte(canary)))
}

// CallKinds counts the calls of events by "tool:kind" and lists the exit
// codes of the failed calls that have one, in order.
func CallKinds(evs []event.Event) (map[string]int, []int) {
	kinds := map[string]int{}
	var exits []int
	for _, e := range evs {
		if e.Kind == event.KindCall {
			kinds[e.Call.Tool+":"+e.Call.Kind]++
		}
		if e.Kind == event.KindResult && e.Result.Err && e.Result.ExitCode != nil {
			exits = append(exits, *e.Result.ExitCode)
		}
	}
	return kinds, exits
}
