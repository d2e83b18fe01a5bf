package agents

import (
	"bytes"
	"strings"
	"testing"
)

// A first line as long as the cap or longer routes by its head, the same
// half written as whole: the recogniser finds its agent, and the head
// says nothing of what the line holds past its leading keys.
func TestLongFirstLineGivesItsHead(t *testing.T) {
	lead := `{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s1","type":"user","message":{"role":"user","content":"`
	text := strings.Repeat("A", FirstLineCap)
	whole := lead + text + `"},"uuid":"u1"}` + "\n" + `{"type":"user"}` + "\n"
	const want = `{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s1","type":"user"}`
	for _, n := range []int{FirstLineCap, FirstLineCap + 10, len(lead) + len(text) + 3, len(whole)} {
		head, ended, err := ReadFirstLine(strings.NewReader(whole[:n]))
		if err != nil || !ended || string(head) != want {
			t.Fatalf("%d bytes: %.200q, ended %v, %v; want %q, ended", n, head, ended, err, want)
		}
	}
	if a, ok := Detect([]byte(want)); !ok || a.Name != "claude" {
		t.Errorf("the head is not recognised as Claude Code's: %v %v", a.Name, ok)
	}
	// Shorter than the cap and unfinished: a line still being written.
	if _, ended, err := ReadFirstLine(strings.NewReader(whole[:FirstLineCap-1])); ended || err != nil {
		t.Errorf("a line short of the cap without its newline is final: ended %v, %v", ended, err)
	}
	// A line that reaches the cap on the \r of its CRLF (or on one of
	// several \r) is final too, half written and whole: the read stops
	// there, and taken off, the \r left it one byte short of the cap for
	// good, a log never routed.
	for _, end := range []string{"\r\n", "\r\r\n"} {
		for _, body := range []int{FirstLineCap - 1, FirstLineCap - 2} {
			if body+len(end) <= FirstLineCap {
				continue
			}
			line := lead + strings.Repeat("A", body-len(lead)-len(`"},"uuid":"u1"}`)) + `"},"uuid":"u1"}`
			var first string
			for _, n := range []int{FirstLineCap, len(line) + len(end)} {
				in := (line + end + `{"type":"user"}` + "\n")[:n]
				head, ended, err := ReadFirstLine(strings.NewReader(in))
				if first == "" {
					first = string(head)
				}
				if a, ok := Detect(head); err != nil || !ended || !ok || a.Name != "claude" || string(head) != first {
					t.Errorf("a %d-byte line ending %q, %d bytes read: %.120q, ended %v, %v; want a Claude Code head, ended, the same at every length", body, end, n, head, ended, err)
				}
			}
		}
	}
	// Past the cap, no object: the bytes within it, recognised by none.
	raw := bytes.Repeat([]byte("x"), FirstLineCap+5)
	if got, ended, _ := ReadFirstLine(bytes.NewReader(raw)); !ended || len(got) != FirstLineCap {
		t.Errorf("garbage past the cap: %d bytes, ended %v", len(got), ended)
	}
}
