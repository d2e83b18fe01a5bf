package cite

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const canary = "CANARY-7f3a"

type inner struct {
	Text  string
	Count int
}

type record struct {
	Type    string
	Raw     json.RawMessage
	Inner   *inner
	Parts   []inner
	Tags    map[string]bool
	Fixed   [4]byte
	private string
}

func TestNothingOfTheLineIsQuoted(t *testing.T) {
	line := []byte(`{"type":"user","text":"` + canary + `"}`)
	l := At("/corpus/claude/s.jsonl", 12, 3456, line)
	a := record{Type: "user", Raw: json.RawMessage(canary), Inner: &inner{Text: canary, Count: 1},
		Parts: []inner{{Text: canary}}, Tags: map[string]bool{canary: true}, Fixed: [4]byte{'C', 'A'}, private: canary}
	b := record{Type: "user", Raw: json.RawMessage(canary + "x"), Inner: &inner{Text: canary + "x", Count: 2},
		Parts: []inner{{Text: canary + "x"}, {}}, Tags: map[string]bool{canary + "x": true}, private: canary + "x"}
	n := Named("command 3", line)
	for _, s := range []string{l.String(), l.Part(line[10:]), l.Diff(a, b), Diff(&a, &b), Bytes(canary), n.String(), n.Diff(a, b), Input(line).Diff(a, b)} {
		if strings.Contains(s, canary) || strings.Contains(s, "CA") {
			t.Errorf("quotes the line: %s", s)
		}
	}
	if got, want := l.String(), "claude/s.jsonl line 12 (offset 3456, "+Bytes(line)+")"; got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
	d := Diff(a, b)
	for _, path := range []string{"Raw: ", "Inner.Text: ", "Inner.Count: 1 vs 2", "Parts: 1 vs 2 elements", "Parts[0].Text: ", "Tags[key ", "Fixed: ", "private: "} {
		if !strings.Contains(d, path) {
			t.Errorf("Diff lacks %q: %s", path, d)
		}
	}
	if got, want := Input(line).String(), "a line of "+Bytes(line); got != want {
		t.Errorf("Input: %s, want %s", got, want)
	}
	if got, want := Named("command 3", line).String(), "command 3 ("+Bytes(line)+")"; got != want {
		t.Errorf("Named: %s, want %s", got, want)
	}
	if got, want := At("x.jsonl", 1, 0, append(line, '\n')).String(), "x.jsonl line 1 (offset 0, "+Bytes(line)+")"; got != want {
		t.Errorf("a line with its newline: %s, want %s", got, want)
	}
	if d := Diff(a, a); d != "no field differs" {
		t.Errorf("Diff of equal values: %s", d)
	}
	if d := Diff(record{}, record{Inner: &inner{}}); !strings.Contains(d, "Inner: nil vs set") {
		t.Errorf("Diff of nil and set: %s", d)
	}
}

func TestOwnInputIsQuoted(t *testing.T) {
	l := Own([]byte(`{"a":1}`))
	if got := l.String(); got != `"{\"a\":1}"` {
		t.Errorf("String = %s", got)
	}
	if got := l.Diff(inner{Text: "x"}, inner{Text: "y"}); got != "got {Text:x Count:0}, want {Text:y Count:0}" {
		t.Errorf("Diff = %s", got)
	}
}

func TestDiffListsAFew(t *testing.T) {
	a, b := make([]int, 20), make([]int, 20)
	for i := range b {
		b[i] = i + 1
	}
	if d := Diff(a, b); strings.Count(d, ";") != maxPaths || !strings.HasSuffix(d, "and 12 more") {
		t.Errorf("Diff = %s", d)
	}
}

func TestSplit(t *testing.T) {
	lines := Split("a/b.jsonl", []byte("one\n\nthree\nfour"))
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%d@%d=%s", l.N, l.Off, l.B))
	}
	if want := "1@0=one 2@4= 3@5=three 4@11=four"; strings.Join(got, " ") != want {
		t.Errorf("Split: %s, want %s", strings.Join(got, " "), want)
	}
}

type node struct {
	Name string
	Next *node
}

func TestDiffStopsOnACycle(t *testing.T) {
	a, b := &node{Name: "a"}, &node{Name: "a"}
	a.Next, b.Next = a, b
	if d := Diff(a, b); !strings.Contains(d, "not compared") {
		t.Errorf("Diff of a cycle: %s", d)
	}
}
