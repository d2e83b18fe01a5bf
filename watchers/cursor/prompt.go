package cursor

import (
	"strings"
	"unicode/utf8"

	"github.com/agentmap/agentmap/builder/redact"
)

// promptShape measures a user message. Cursor wraps what the user typed in
// <user_query>…</user_query> and puts context it attached itself around it
// (<external_links>, <attached_files>, <manually_attached_skills>, …); only
// the typed part is the prompt, so when the wrapper is present chars and
// urls come from inside it alone. The text is read here and dropped.
func promptShape(text string) (chars, urls int) {
	const open, closing = "<user_query>", "</user_query>"
	if strings.Contains(text, open) {
		rest := text
		for {
			i := strings.Index(rest, open)
			if i < 0 {
				break
			}
			rest = rest[i+len(open):]
			body := rest
			if j := strings.Index(rest, closing); j >= 0 {
				body, rest = rest[:j], rest[j+len(closing):]
			} else {
				rest = ""
			}
			body = strings.TrimSpace(body)
			chars += utf8.RuneCountInString(body)
			urls += redact.CountURLs(body)
		}
		return chars, urls
	}
	text = strings.TrimSpace(text)
	if onlyTagged(text) {
		// Context Cursor injected by itself (<user_info>, <rules>, …)
		// with no typed query: not a prompt.
		return 0, 0
	}
	return utf8.RuneCountInString(text), redact.CountURLs(text)
}

// onlyTagged reports whether text is nothing but a sequence of
// <name>…</name> blocks.
func onlyTagged(text string) bool {
	if !strings.HasPrefix(text, "<") {
		return false
	}
	for text != "" {
		if text[0] != '<' {
			return false
		}
		end := strings.IndexByte(text, '>')
		if end < 2 {
			return false
		}
		name := text[1:end]
		if strings.ContainsAny(name, " /\t\n\"'=") {
			return false
		}
		closing := "</" + name + ">"
		j := strings.Index(text, closing)
		if j < 0 {
			return false
		}
		text = strings.TrimSpace(text[j+len(closing):])
	}
	return true
}
