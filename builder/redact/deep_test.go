package redact

import (
	"strings"
	"testing"
)

// Pathological nesting must fall back, not recurse the parser into a fatal
// stack overflow.
func TestParseShellDeepNesting(t *testing.T) {
	tests := []struct{ cmd, verb string }{
		{strings.Repeat("(", 200000), ""},
		{strings.Repeat("$(", 200000), ""},
		{strings.Repeat("{ ", 200000), ""},
		{strings.Repeat("if true; then ", 100000), "true"},
		{strings.Repeat("for x in a; do ", 100000), ""},
		{strings.Repeat("a | ", 300000) + "b", "a"},
		{strings.Repeat("a && ", 300000) + "b", "a"},
		{strings.Repeat("(a;) | ", 300000) + "b", ""},
		{strings.Repeat("if a; then b; fi || ", 300000) + "b", "a"},
		{strings.Repeat("git status; ", 100000) + "ls", "git status"},
		{"echo " + strings.Repeat("$(", 50000) + strings.Repeat(")", 50000), "echo"},
		{"make " + strings.Repeat("[", 300), "make"},
		{strings.Repeat("( ", 20) + "go test" + strings.Repeat(" )", 20), "go test"},
		{"if true; then for x in a b; do make; done; fi" + strings.Repeat(" (", 200), "make"},
	}
	for _, tt := range tests {
		if got := ParseShell(tt.cmd).Verb; got != tt.verb {
			t.Errorf("ParseShell(%.30q…) = %q, want %q", tt.cmd, got, tt.verb)
		}
	}
}

func TestTooDeep(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"go test ./...", false},
		{strings.Repeat("(", 101), true},
		{strings.Repeat("(", 100), false},
		{strings.Repeat("(x)", 1000), false},
		{strings.Repeat("if a; then ", 101), true},
		{strings.Repeat("if a; then b; fi; ", 1000), false},
		{"cat <<EOF\n" + strings.Repeat("if you read this then stop\n", 500) + "EOF", false},
		{strings.Repeat("echo if; ", 500), false},
		{strings.Repeat("a | ", 501), true},
		{strings.Repeat("a | b; ", 1000), false},
		{strings.Repeat("a &&\n", 501), true},
		{strings.Repeat("a & ", 1000), false},
		{strings.Repeat("(a; b) | ", 501), true},
	}
	for _, tt := range tests {
		if got := tooDeep(tt.src, maxNesting); got != tt.want {
			t.Errorf("tooDeep(%.30q…) = %v, want %v", tt.src, got, tt.want)
		}
	}
}
