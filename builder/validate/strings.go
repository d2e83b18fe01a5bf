package validate

import (
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

const (
	// maxString bounds every string of a map: identifiers, paths and labels
	// are short, so a long string is text.
	maxString = 200
	// maxURL bounds the URLs a map may keep (PRs, artifacts).
	maxURL = 2048
)

// bucketLabels are the only strings that may name a place outside a repo.
var bucketLabels = map[string]bool{
	"/tmp (scratch)": true, "~/Documents": true, "~/Downloads": true,
	"~/Desktop": true, "~ (home)": true, "~": true, "outside-repo": true,
}

// claudeArea is ~/.claude/<area>, or ~/.claude itself.
var claudeArea = regexp.MustCompile(`^~/\.claude(/[A-Za-z0-9._-]+)?$`)

// IsBucketLabel reports whether s is one of the format page's labels for a
// place outside any repository.
func IsBucketLabel(s string) bool { return bucketLabels[s] || claudeArea.MatchString(s) }

var (
	windowsDrive = regexp.MustCompile(`(^|[^A-Za-z0-9])[A-Za-z]:[\\/]`)
	// An absolute path embedded after a space, quote or '=' (the way it
	// appears in a command line). Inside a repo-relative path, "/home/" is
	// just a directory called home.
	embeddedAbs = regexp.MustCompile(`(^|[\s"'=:,;(])(/(home|Users|root|tmp|var|etc|opt|usr|mnt|private|Volumes)(/|$)|~[/\\]|[A-Za-z]:[\\/])`)
)

// absolutePath says why s looks like an absolute or home path, or "".
func absolutePath(s string) string {
	if !strings.ContainsAny(s, `/\~:`) || IsBucketLabel(s) {
		return "" // the common case: a name, a kind, a hash
	}
	switch {
	case strings.HasPrefix(s, "/"):
		return "starts with /"
	case strings.HasPrefix(s, `\\`):
		return "is a network path"
	case strings.HasPrefix(s, "~/"), strings.HasPrefix(s, `~\`):
		return "names a home path"
	case strings.Contains(s, "file:/"):
		return "is a file URL"
	case (strings.Contains(s, `:\`) || strings.Contains(s, ":/")) && windowsDrive.MatchString(s):
		return "has a drive path"
	case strings.ContainsAny(s, " \t\"'=:,;(") && embeddedAbs.MatchString(s):
		return "has an absolute path in it"
	}
	return ""
}

// urlField reports whether the string at this place is a URL the format
// keeps: prs[].url and the url of pr and artifact events.
func urlField(path []any, top map[string]any, events []any) bool {
	if len(path) != 3 || path[2] != "url" {
		return false
	}
	switch path[0] {
	case "prs":
		return true
	case "events":
		i, _ := path[1].(int)
		if i < 0 || i >= len(events) {
			return false
		}
		switch object(events[i])["kind"] {
		case "artifact", "pr_merge", "pr_close", "pr_comment":
			return true
		}
	}
	return false
}

// strings checks every string of the map, wherever it is, including under
// fields no check knows: an absolute or home path, a control character or
// an over-long string is a leak whatever field holds it.
func (c *checker) strings(top map[string]any) {
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		switch v := v.(type) {
		case map[string]any:
			// Map order: Map sorts the problems by path at the end.
			for k, e := range v {
				walk(e, append(path, k))
			}
		case []any:
			for i, e := range v {
				walk(e, append(path, i))
			}
		case string:
			c.checkString(v, path, top)
		}
	}
	walk(top, nil)
}

func (c *checker) checkString(s string, path []any, top map[string]any) {
	if !utf8.ValidString(s) {
		c.add(ptr(path...), RuleStringLength, "is not valid UTF-8")
		return
	}
	if urlField(path, top, c.events) {
		c.checkURL(ptr(path...), s)
		return
	}
	if n := utf8.RuneCountInString(s); n > maxString {
		c.add(ptr(path...), RuleStringLength, "%s is longer than %d characters", describe(s), maxString)
	}
	if strings.ContainsFunc(s, isControl) {
		c.add(ptr(path...), RuleStringLength, "%s has control characters, as text has", describe(s))
	}
	if why := absolutePath(s); why != "" {
		c.add(ptr(path...), RuleAbsolutePath, "%s %s", describe(s), why)
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func (c *checker) checkURL(p, s string) {
	if len(s) > maxURL {
		c.add(p, RuleStringLength, "a URL of %d bytes is longer than %d", len(s), maxURL)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		c.add(p, RuleURL, "%s is not an http(s) URL", describe(s))
		return
	}
	if u.User != nil {
		c.add(p, RuleURL, "the URL carries credentials")
	}
	if strings.ContainsFunc(s, isControl) || strings.ContainsAny(s, " \t") {
		c.add(p, RuleURL, "the URL has spaces or control characters")
	}
}
