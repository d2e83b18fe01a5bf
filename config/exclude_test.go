package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExcluded(t *testing.T) {
	home, _ := os.UserHomeDir()
	tests := []struct {
		pattern string
		dir     string
		want    bool
	}{
		{"/work/secret", "/work/secret", true},
		{"/work/secret", "/work/secret/sub/dir", true},
		{"/work/secret", "/work/secretive", false},
		{"/work/secret", "/work", false},
		{"/work/*", "/work/a", true},
		{"/work/*", "/work/a/b", true},
		{"/work/*", "/work", false},
		{"/work/*/api", "/work/acme/api", true},
		{"/work/*/api", "/work/acme/web", false},
		{"/work/**/api", "/work/api", true},
		{"/work/**/api", "/work/x/y/api/src", true},
		{"/work/**/api", "/other/x/api", false},
		{"/**", "/anything", true},
		{"client-*", "/home/u/src/client-acme/repo", true},
		{"client-*", "/home/u/src/clients", false},
		{"**/vault", "/a/b/vault", true},
		{"/work/[ab]*", "/work/beta", true},
		{"/work/[ab]*", "/work/gamma", false},
		{"/work/secret/", "/work/secret", true},
		{"/work/secret", "/work/../work/secret", true},
		{"~/private", filepath.Join(home, "private", "x"), home != ""},
		{"/work/secret", "", false},
	}
	for _, tt := range tests {
		c := &Config{Privacy: Privacy{Exclude: []string{tt.pattern}}}
		if got := c.Excluded(tt.dir); got != tt.want {
			t.Errorf("pattern %q, dir %q: excluded = %v, want %v", tt.pattern, tt.dir, got, tt.want)
		}
	}
	c := &Config{Privacy: Privacy{Exclude: []string{"/a", "/b/**/c"}}}
	if !c.Excluded("/b/x/c") || c.Excluded("/d") {
		t.Error("a list of patterns is not matched entry by entry")
	}
	if (&Config{}).Excluded("/a") {
		t.Error("no patterns must exclude nothing")
	}
}

func TestExcludedWindows(t *testing.T) {
	p := platform{goos: "windows", home: `C:\Users\u`}
	for _, tt := range []struct {
		pattern, dir string
		want         bool
	}{
		{`C:\Work\Secret`, `c:\work\secret\x`, true},
		{`C:/Work/*`, `C:\Work\A`, true},
		{`~\private`, `C:\Users\u\Private\repo`, true},
		{`C:\Work\Secret`, `D:\Work\Secret`, false},
	} {
		got := matchSegments(patternSegments(p, tt.pattern), segments(p, tt.dir))
		if got != tt.want {
			t.Errorf("pattern %q, dir %q: %v, want %v", tt.pattern, tt.dir, got, tt.want)
		}
		if err := checkPattern(p, tt.pattern); err != nil {
			t.Errorf("pattern %q rejected: %v", tt.pattern, err)
		}
	}
}

func BenchmarkExcluded(b *testing.B) {
	c := &Config{Privacy: Privacy{Exclude: []string{"~/clients/**", "secret-*", "/srv/**/private/**", "/work/*/vault"}}}
	for b.Loop() {
		c.Excluded("/home/u/src/github.com/acme/platform/services/api")
	}
}

// The key of the patterns names none of them, does not depend on their
// order, and changes with them.
func TestExcludeKey(t *testing.T) {
	c := Default()
	if c.ExcludeKey() != "" {
		t.Fatal("a key for no patterns")
	}
	c.Privacy.Exclude = []string{"~/clients/acme/**", "secret-*"}
	k := c.ExcludeKey()
	if k == "" || strings.Contains(k, "acme") || strings.Contains(k, "secret") {
		t.Fatalf("key %q", k)
	}
	c.Privacy.Exclude = []string{"secret-*", "~/clients/acme/**"}
	if c.ExcludeKey() != k {
		t.Fatal("the key depends on the patterns' order")
	}
	c.Privacy.Exclude = []string{"secret-*"}
	if c.ExcludeKey() == k {
		t.Fatal("the key did not change with the patterns")
	}
}
