package redact

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Host returns the host name of a URL, lower-cased, without port or
// credentials, or "" if there is none. Only absolute URLs with a scheme
// (or a scheme-relative "//host") count.
func Host(rawURL string) string {
	s := strings.TrimSpace(rawURL)
	if !strings.Contains(s, "//") {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	if u.Scheme == "" && !strings.HasPrefix(s, "//") {
		return ""
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if !isHostName(h) {
		return ""
	}
	return h
}

// isHostName accepts DNS names (letters, digits, '-', '_', '.'; any
// script) and IP literals.
func isHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if strings.Contains(h, ":") { // IPv6 literal
		for i := 0; i < len(h); i++ {
			c := h[i]
			if !(c == ':' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for _, r := range h {
		if !(r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// CountURLs counts http(s) URLs in a text without keeping any of them: each
// "http://" or "https://" (any case) followed by a host character counts.
func CountURLs(text string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(text[i:], "://")
		if j < 0 {
			return n
		}
		at := i + j
		i = at + 3
		if !schemeBefore(text, at) || i >= len(text) {
			continue
		}
		r, _ := utf8.DecodeRuneInString(text[i:])
		if r == '[' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
}

// schemeBefore reports whether text[:at] ends with "http" or "https" (any
// case) that does not continue a longer word.
func schemeBefore(text string, at int) bool {
	for _, s := range [...]string{"https", "http"} {
		k := at - len(s)
		if k < 0 || !strings.EqualFold(text[k:at], s) {
			continue
		}
		if k > 0 {
			c := text[k-1]
			if isASCIILetter(c) || c >= '0' && c <= '9' {
				return false
			}
		}
		return true
	}
	return false
}
