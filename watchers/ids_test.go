package watchers

import (
	"strings"
	"testing"
)

// TestIdentKeepsOnlyIdentifiers holds the table of identifier bytes to
// the rule on runes it stands for: letters, digits and _ - . : @ / only,
// every other rune (non-ASCII ones included) refused wherever it stands.
func TestIdentKeepsOnlyIdentifiers(t *testing.T) {
	allowed := func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r == ':' || r == '@' || r == '/' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	for _, r := range []rune{0, ' ', '\t', '"', '\\', '~', 0x7f, 0x80, 'é', 'ß', 'Ａ', '日', 0xfffd, '😀', 'a', 'Z', '5', '_', '/'} {
		for _, s := range []string{string(r), "id" + string(r), string(r) + "-x", "a" + string(r) + "b"} {
			want := ""
			if !strings.ContainsFunc(s, func(c rune) bool { return !allowed(c) }) {
				want = s
			}
			if got := Ident(s); got != want {
				t.Errorf("Ident(%q) = %q, want %q", s, got, want)
			}
		}
	}
	for _, s := range []string{"\xff", "a\xc3", strings.Repeat("a", 129)} {
		if Ident(s) != "" {
			t.Errorf("Ident(%q) kept it", s)
		}
	}
	if s := strings.Repeat("a", 128); Ident(s) != s {
		t.Error("a name of 128 bytes was refused")
	}
}
