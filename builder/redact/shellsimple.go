package redact

import (
	"strings"
	"unicode/utf8"
)

// Most command lines an agent runs are plain words joined by && || | and ;
// (`cd app && go test ./...`, `git status`, `ls -la src`, a plugin's
// `"${ROOT}/hooks/check.sh"`, `go test ./... 2>&1 | tail`): for those the
// shell parser's tree is known in advance, one call per command whose
// arguments are the words as written, and building it costs more than the
// rest of a log line's parsing. simpleCommands recognises exactly such
// lines and splits them the way the parser would. Scripts of several lines
// are simple too when each line is: a line break ends a command as ; does
// (or continues a line ended by && || |), a comment is skipped to the end
// of its line, and a here-document whose delimiter is quoted (`cat <<'EOF'
// > f.py`, `python - <<'PY'`: what agents use to write files and run
// inline code) is skipped whole, as its body is text the shell never reads
// as commands. Anything else (command substitutions, parameters with
// operators or special names, globs, keywords, assignments in front of a
// program, redirections before it, non-ASCII outside quotes, a backslash
// outside double quotes, a comment ending in one, a carriage return or a
// NUL) goes to the parser. The tests check the two agree, word for word,
// on every command of the corpus, on generated lines and scripts and under
// a fuzz target.

// simpleFastPath is switched off by the tests to compare with the parser.
var simpleFastPath = true

// maxSimpleCommands bounds the commands of a line split here, far below
// the chains that tooDeep sends to the fallback.
const maxSimpleCommands = 64

// simpleWordsCap bounds the words a split allocates room for at first: a
// script's blanks are mostly in its here-documents and quoted code.
const simpleWordsCap = 16

// simpleByte marks the bytes a word of a simple line may hold: none is
// special to the shell parser anywhere in a word (= only is, at places
// checked apart; a word with # in it goes to the parser).
var simpleByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-_./:,@+%=~" {
		t[c] = true
	}
	return t
}()

// commandKeywords are the words that make the parser build something other
// than a plain call when they start a command (reserved words, and the
// declaration and arithmetic builtins of bash).
var commandKeywords = func() map[string]bool {
	m := set(`declare local export readonly typeset nameref let coproc`)
	for k := range reserved {
		m[k] = true
	}
	return m
}()

// simpleCommands splits a simple line into its commands' words, or reports
// false when the line is not simple.
func simpleCommands(src string) ([][]word, bool) {
	if !plainText(src) {
		return nil, false
	}
	var cmds [][]word
	// The words of all the commands share one array, sized at the first
	// word from the line's blanks: grown one command at a time from
	// nothing, the words cost more allocations than the rest of the
	// split. Each command is a full slice of it, so that nothing appended
	// later writes into one. first is where the words of the command
	// being read start.
	var words []word
	first := 0
	pending := func() int { return len(words) - first }
	var hdocs []hereDoc  // the here-documents whose bodies follow the line
	open := false        // the last separator was && || or |: a command must follow
	end := func() bool { // a separator: the command before it must exist
		if pending() == 0 || len(cmds) == maxSimpleCommands {
			return false
		}
		if cmds == nil {
			cmds = make([][]word, 0, 4) // most lines join a few commands
		}
		cmds = append(cmds, words[first:len(words):len(words)])
		first = len(words)
		return true
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '\n':
			// A line break ends the command before it; after && || | or
			// ; (no command pending) it is only a blank.
			if pending() > 0 && !end() {
				return nil, false
			}
			i++
			for _, h := range hdocs {
				j, ok := h.skipBody(src, i)
				if !ok {
					return nil, false
				}
				i = j
			}
			hdocs = hdocs[:0]
		case c == '#':
			// A comment, as a word starts here: to the end of its line.
			// The parser takes a backslash at its end for a line
			// continuation, carrying the comment's command onto the next
			// line (bash does not): such a line is left to it.
			j := len(src)
			if k := strings.IndexByte(src[i:], '\n'); k >= 0 {
				j = i + k
			}
			if src[j-1] == '\\' {
				return nil, false
			}
			i = j
		case c == '<' && i+1 < len(src) && src[i+1] == '<':
			h, j, ok := readHereDoc(src, i)
			if !ok || pending() == 0 {
				return nil, false
			}
			hdocs = append(hdocs, h)
			i = j
		case c == '&':
			if i+1 >= len(src) || src[i+1] != '&' || !end() {
				return nil, false // & alone puts a command in the background
			}
			i += 2
			open = true
		case c == '|':
			if i+1 < len(src) && src[i+1] == '&' {
				return nil, false // |& pipes stderr too
			}
			if !end() {
				return nil, false
			}
			if i+1 < len(src) && src[i+1] == '|' {
				i++
			}
			i++
			open = true
		case c == ';':
			if i+1 < len(src) && src[i+1] == ';' || !end() {
				return nil, false
			}
			i++
		case c == '<' || c == '>':
			// A redirection after the command's name: the walker reads
			// no part of it, so it is skipped whole (operator and target).
			j, ok := simpleRedirect(src, i)
			if !ok || pending() == 0 {
				return nil, false
			}
			i = j
		case simpleByte[c] || c == '\'' || c == '"' || c == '$':
			wd, j, quoted, ok := simpleWord(src, i)
			if !ok {
				return nil, false
			}
			if j < len(src) && (src[j] == '<' || src[j] == '>') && wd.lit && !quoted && allDigits(wd.s) {
				// The digits before an operator are the descriptor it
				// redirects (2>&1), not a word.
				if pending() == 0 {
					return nil, false
				}
				i = j
				continue
			}
			if pending() == 0 {
				// The first word: neither a keyword nor an assignment
				// (whose name is its literal prefix), even quoted, where
				// the parser takes it for neither.
				if commandKeywords[wd.s] || containsByte(wd.s, '=') {
					return nil, false
				}
			}
			if pending() < maxArgs {
				if words == nil {
					words = make([]word, 0, min(1+strings.Count(src, " "), simpleWordsCap))
				}
				words = append(words, wd)
			}
			open = false
			i = j
		default:
			return nil, false
		}
	}
	if len(hdocs) > 0 {
		return nil, false // a here-document with no body
	}
	// A line ends with a command, or with ; or a line break after one
	// (`a &&` is an error).
	if pending() == 0 {
		if len(cmds) == 0 || open {
			return nil, false
		}
		return cmds, true
	}
	if !end() {
		return nil, false
	}
	return cmds, true
}

// hereDoc is a here-document met on a line: its delimiter, and whether
// leading tabs are stripped from its lines (<<-).
type hereDoc struct {
	delim string
	tabs  bool
}

// readHereDoc reads the here-document operator at src[i] (`<<`): << or <<-,
// blanks, and a delimiter of simple bytes in single or double quotes (a
// quoted delimiter makes the body plain text: nothing in it is expanded or
// run). It returns the offset after the delimiter, which a blank, a line
// break or the end must follow. A here-string (<<<) or an unquoted
// delimiter, whose body may run commands ($(…)), is not simple.
func readHereDoc(src string, i int) (hereDoc, int, bool) {
	j := i + 2
	var h hereDoc
	if j < len(src) && src[j] == '-' {
		h.tabs = true
		j++
	}
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if j == len(src) || src[j] != '\'' && src[j] != '"' {
		return hereDoc{}, 0, false
	}
	q := src[j]
	k := j + 1
	for k < len(src) && simpleByte[src[k]] {
		k++
	}
	if k == j+1 || k == len(src) || src[k] != q {
		return hereDoc{}, 0, false
	}
	h.delim = src[j+1 : k]
	k++
	if k < len(src) && src[k] != ' ' && src[k] != '\t' && src[k] != '\n' {
		return hereDoc{}, 0, false
	}
	return h, k, true
}

// skipBody steps over the body of h that starts at src[i]: its lines up to
// and with the one that is its delimiter (after leading tabs, with <<-).
// It returns the offset after that line, or false when no line closes it.
func (h hereDoc) skipBody(src string, i int) (int, bool) {
	for i < len(src) {
		line, next := src[i:], len(src)
		if k := strings.IndexByte(line, '\n'); k >= 0 {
			line, next = line[:k], i+k+1
		}
		if h.tabs {
			line = strings.TrimLeft(line, "\t")
		}
		if line == h.delim {
			return next, true
		}
		i = next
	}
	return 0, false
}

// simpleWord reads the word at src[i:]: runs of simple bytes, quoted
// strings that hold nothing the parser would expand but a parameter ('…'
// any text but the quote; "…" no ` or !, and a backslash escaping $ ` " \
// or a line break unescaped as the parser's word is, before any other byte
// kept), and plain
// parameters ($NAME and ${NAME}, outside quotes or in double quotes),
// as the parser's word would give it (see toWord: a word of one unquoted
// literal has no tail; any other one keeps in s its literal text before
// the first parameter, in text its whole text with the quotes removed and
// the parameters as written, and in tail what follows the last
// parameter). A parameter stands for itself: its value is not known, so
// nothing of it is read. It returns the offset after the word and whether
// the word was quoted.
func simpleWord(src string, i int) (word, int, bool, bool) {
	start, quoted := i, false
	var b []byte                       // the word's text, once a quote or a parameter is met
	lit, tail := -1, 0                 // in b: the end of the literal prefix (-1: no parameter yet), the start of the tail
	plain := true                      // nothing but simple bytes so far
	nameEnd := -1                      // the end of the last $NAME (unbraced)
	param := func(j int) (int, bool) { // a parameter at src[j] ('$'): its end
		if plain {
			b = append(b, src[start:j]...)
			plain = false
		}
		end, ok := paramEnd(src, j)
		if !ok {
			return 0, false
		}
		if lit < 0 {
			lit = len(b)
		}
		b = append(b, src[j:end]...)
		tail = len(b)
		if src[j+1] != '{' {
			nameEnd = end
		}
		return end, true
	}
	for i < len(src) {
		c := src[i]
		switch {
		case simpleByte[c]:
			j := i
			for j < len(src) && simpleByte[src[j]] {
				j++
			}
			if !plain {
				b = append(b, src[i:j]...)
			}
			i = j
		case c == '$':
			j, ok := param(i)
			if !ok {
				return word{}, 0, false, false
			}
			i = j
		case c == '\'' || c == '"':
			if plain {
				b = append(b, src[start:i]...)
				plain = false
			}
			quoted = true
			j := i + 1
			for j < len(src) && src[j] != c {
				if c == '"' && src[j] == '$' {
					end, ok := param(j)
					if !ok {
						return word{}, 0, false, false
					}
					j = end
					continue
				}
				if c == '"' && src[j] == '\\' && j+1 < len(src) {
					// In double quotes a backslash escapes only $ ` " \
					// and a line break (which it removes); before any
					// other byte it stands for itself.
					switch n := src[j+1]; n {
					case '$', '`', '"', '\\':
						b = append(b, n)
						j += 2
					case '\n':
						if j == nameEnd {
							// The parser goes on with the name
							// after the line break ("$A\⏎B" is $AB).
							return word{}, 0, false, false
						}
						j += 2
					default:
						b = append(b, '\\')
						j++
					}
					continue
				}
				if !quotable(src[j], c == '"') {
					return word{}, 0, false, false
				}
				b = append(b, src[j])
				j++
			}
			if j == len(src) {
				return word{}, 0, false, false // unclosed
			}
			i = j + 1
		case c == ' ' || c == '\t' || c == '\n' || c == '&' || c == '|' || c == ';' || c == '<' || c == '>':
			return makeSimpleWord(src[start:i], b, plain, lit, tail), i, quoted, true
		default:
			return word{}, 0, false, false
		}
	}
	return makeSimpleWord(src[start:], b, plain, lit, tail), i, quoted, true
}

func makeSimpleWord(raw string, b []byte, plain bool, lit, tail int) word {
	if plain {
		return word{s: raw, text: raw, lit: true}
	}
	text := string(b)
	if lit < 0 {
		return word{s: text, text: text, lit: true, tail: text}
	}
	return word{s: text[:lit], text: text, tail: text[tail:]}
}

// paramEnd returns the end of the plain parameter at src[j] ('$'): $NAME
// (the longest run of name bytes) or ${NAME}; anything else ($1, $?, $(,
// ${X:-y}, ${#X}) is not one.
func paramEnd(src string, j int) (int, bool) {
	k := j + 1
	braced := k < len(src) && src[k] == '{'
	if braced {
		k++
	}
	if k == len(src) || !nameStart(src[k]) {
		return 0, false
	}
	for k < len(src) && (nameStart(src[k]) || src[k] >= '0' && src[k] <= '9') {
		k++
	}
	if braced {
		if k == len(src) || src[k] != '}' {
			return 0, false
		}
		k++
	}
	return k, true
}

// simpleRedirect reads the redirection at src[i] ('<' or '>'): one of
// < > >> >& and its target, a simple word followed by a blank, a
// separator or the end. It returns the offset after it. Here-strings,
// <> <& >| and process substitutions are not simple (here-documents are
// read by readHereDoc before this).
func simpleRedirect(src string, i int) (int, bool) {
	j := i + 1
	if src[i] == '>' && j < len(src) && (src[j] == '>' || src[j] == '&') {
		j++
	}
	if j < len(src) && strings.IndexByte("<>&|(", src[j]) >= 0 {
		return 0, false
	}
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if j == len(src) || !(simpleByte[src[j]] || src[j] == '\'' || src[j] == '"' || src[j] == '$') {
		return 0, false // no target
	}
	_, end, _, ok := simpleWord(src, j)
	if !ok || end < len(src) && (src[end] == '<' || src[end] == '>') {
		return 0, false
	}
	return end, true
}

// plainText reports whether the split may read a line at all: the parser
// refuses invalid UTF-8 (in a comment or a here-document too), reads \r\n
// as a line break and a lone \r as a blank, and drops NUL bytes wherever
// they are (a here-document's line `EOF\x00` closes it there).
func plainText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, '\r') < 0 && strings.IndexByte(s, 0) < 0
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func nameStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// quotable reports whether c stands for itself inside quotes: printable
// ASCII, a tab, a line break (an inline script's lines: python -c "…"),
// the bytes of UTF-8 text (the line is known to be valid), and in double
// quotes none of the bytes that expand or escape.
func quotable(c byte, double bool) bool {
	if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
		return false
	}
	if double {
		switch c {
		case '$', '`', '\\', '!':
			return false
		}
	}
	return true
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}
