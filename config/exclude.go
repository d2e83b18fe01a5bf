package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path"
	"slices"
	"strings"
)

// Excluded reports whether a session whose cwd or repo root is dir is kept
// out of agentmap by privacy.exclude. A pattern excludes dir when it matches
// dir or any directory above it, so "~/clients/*" covers everything under
// each client. Patterns are path.Match globs on "/"-separated segments, plus
// "**" for any number of segments; a pattern without "/" matches a directory
// name at any depth ("secret-*" is "**/secret-*").
func (c *Config) Excluded(dir string) bool {
	if len(c.Privacy.Exclude) == 0 || dir == "" {
		return false
	}
	p := currentPlatform()
	target := segments(p, dir)
	for _, pat := range c.Privacy.Exclude {
		if matchSegments(patternSegments(p, pat), target) {
			return true
		}
	}
	return false
}

func segments(p platform, dir string) []string {
	if p.goos == "windows" {
		dir = strings.ToLower(strings.ReplaceAll(dir, `\`, "/"))
	}
	dir = path.Clean(dir)
	var out []string
	for _, s := range strings.Split(dir, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func patternSegments(p platform, pat string) []string {
	pat = p.expand(pat)
	if !strings.ContainsAny(pat, `/\`) {
		pat = "**/" + pat
	}
	if p.goos == "windows" {
		// path.Match's escape character is "\", which Windows patterns use
		// as a separator instead.
		pat = strings.ReplaceAll(pat, `\`, "/")
	}
	return segments(p, pat)
}

// matchSegments reports whether the pattern matches path or one of its
// ancestors: an exhausted pattern has matched a prefix of the path.
func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return true
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], segs[0]); !ok {
		return false
	}
	return matchSegments(pat[1:], segs[1:])
}

// maxPatternStars bounds the "**" in one pattern, which cost a factor of the
// path depth each.
const maxPatternStars = 4

func checkPattern(p platform, pat string) error {
	if strings.TrimSpace(pat) == "" {
		return errors.New("empty pattern")
	}
	full := p.expand(pat)
	if strings.ContainsAny(full, `/\`) && !p.isAbs(full) && !strings.HasPrefix(full, "**") {
		return errors.New("must be absolute, start with ~/ or **/, or be a single directory name")
	}
	stars := 0
	for _, s := range patternSegments(p, pat) {
		if s == "**" {
			stars++
			continue
		}
		if strings.Contains(s, "**") {
			return errors.New(`"**" must be a whole path segment`)
		}
		if _, err := path.Match(s, ""); err != nil {
			return errors.New("malformed glob")
		}
	}
	if stars > maxPatternStars {
		return errors.New(`too many "**" segments`)
	}
	return nil
}

// excludeKeyVersion is part of ExcludeKey: raise it when what the patterns
// match changes (v1: the cwd of line logs and of Codex compressed copies).
const excludeKeyVersion = "v1"

// ExcludeKey identifies the privacy.exclude patterns, "" for none: a hash
// of them in any order, so that the daemon can tell, from one run to the
// next, that they changed without keeping their text (which may name
// clients or projects).
func (c *Config) ExcludeKey() string {
	if len(c.Privacy.Exclude) == 0 {
		return ""
	}
	pats := slices.Clone(c.Privacy.Exclude)
	slices.Sort(pats)
	// The version names how patterns are matched: a change to that is a
	// change of the key, so that a daemon applies them again.
	sum := sha256.Sum256([]byte(excludeKeyVersion + "\x00" + strings.Join(pats, "\x00")))
	return hex.EncodeToString(sum[:16])
}
