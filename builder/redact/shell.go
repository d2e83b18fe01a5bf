package redact

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentmap/agentmap/builder/event"
)

// Shell is what a shell command may contribute to a map.
type Shell struct {
	Verb   string     // program basename plus subcommand for multi-verb tools
	Cat    string     // vcs, test, build, package, http, cloud, fs, shell
	Verify bool       // a test, build, lint or type check
	VCS    *event.VCS // git/gh/glab operation, if any
	// Commits is set when any command of the line is a git commit, even
	// one whose VCS facet lost to another write (git restore && git
	// commit) or to a forge command (git commit && gh pr create): its
	// output may then confirm a commit.
	Commits bool
	// ShowsHead is set when a command of the line prints the sha of the
	// latest commit first (git log, git show, git rev-parse HEAD, with no
	// other revision and no paths): it confirms a quiet git commit made
	// just before it.
	ShowsHead bool
}

// Kind is the map event kind of the command: verify or exec.
func (s Shell) Kind() string {
	if s.Verify {
		return "verify"
	}
	return "exec"
}

const (
	maxScriptDepth = 4       // bash -c 'bash -c …' nesting followed
	maxScriptBytes = 4 << 20 // longer scripts are only looked at by the fallback
	maxArgs        = 32      // words of one command looked at
	fallbackBytes  = 4096
	maxNesting     = 100 // deeper scripts would recurse the parser without bound
	maxChain       = 500 // commands joined by && || | in one list
)

var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// ParseShell extracts the verb of a shell command string with a real shell
// parser (mvdan.cc/sh). It never returns any argument beyond the
// subcommand.
//
// The verb is the program's basename plus, for multi-verb tools, a
// subcommand from a fixed vocabulary (git log, npm run, cargo test, go
// test, docker compose up, gh pr create); gh and glab give
// "<noun> <verb>", docker management commands "<group> <command>". Words
// that are the project's own names (make targets, npm script names,
// gradle tasks) never reach the verb: `make test` is "make", `npm run
// lint` is "npm run", and `pnpm lint` is "pnpm run".
//
// Wrappers are peeled off: assignments, sudo, doas, env, time, nohup,
// exec, command, xargs, timeout (and its duration), nice, ionice, stdbuf.
// Runners give the tool they run: npx/bunx/pnpx/uvx, npm exec, pnpm
// dlx/exec, yarn dlx, bun x, uv run, uv tool run, poetry run, pipx run,
// bundle exec, conda run; `python -m pytest` is pytest. A runner or
// wrapper with an option it does not know is itself the verb (the option's
// value could otherwise pass for the program). Inline scripts (bash/sh/zsh
// -c, pwsh -Command, cmd /c) are parsed in turn.
//
// In a list or pipeline the verb is that of the first verify command if
// any command is a test, build, lint or type check (Verify is then set);
// otherwise that of the first command that is not cd, export, source, set,
// an assignment or the like, preferring commands that run at the top level
// over those inside $(…). The VCS facet is that of the first gh/glab
// command, else the first git command that writes (commit, push, merge,
// …), else the first git command.
//
// Input the parser rejects (PowerShell, broken quoting) falls back to the
// words before the first quote or expansion, split at && ; |, analysed the
// same way; a program that is a variable gives "".
func ParseShell(cmd string) Shell {
	var w walker
	w.script(cmd)
	return w.result()
}

// ParseArgv extracts the verb of an argv vector (Codex's shell tool:
// ["bash","-lc","script"] parses the script).
func ParseArgv(argv []string) Shell {
	var w walker
	if len(argv) > maxArgs {
		argv = argv[:maxArgs]
	}
	w.command(litWords(argv))
	return w.result()
}

// walker collects the commands of one command line in order.
type walker struct {
	cmds   []cmdRes
	depth  int
	nested int
	// few holds the commands of most lines, one or two: the walker is
	// allocated anyway, and cmds grown from nothing would be one or two
	// more allocations.
	few [2]cmdRes
}

func (w *walker) add(r cmdRes) {
	r.nested = r.nested || w.nested > 0
	// The words of a plain line split by hand are substrings of the whole
	// command: a verb kept as one would hold its arguments in memory for
	// as long as the event lives.
	r.verb = strings.Clone(r.verb)
	if r.vcs != nil {
		v := *r.vcs
		v.Provider, v.Action, v.Repo = strings.Clone(v.Provider), strings.Clone(v.Action), strings.Clone(v.Repo)
		r.vcs = &v
	}
	if w.cmds == nil {
		w.cmds = w.few[:0]
	}
	w.cmds = append(w.cmds, r)
}

// script parses one shell script and walks its commands.
func (w *walker) script(src string) {
	if w.depth >= maxScriptDepth || strings.TrimSpace(src) == "" {
		return
	}
	if len(src) > maxScriptBytes || tooDeep(src, maxNesting) {
		w.fallback(src)
		return
	}
	w.depth++
	defer func() { w.depth-- }()
	if simpleFastPath {
		if cmds, ok := simpleCommands(src); ok {
			for _, args := range cmds {
				w.command(args)
			}
			return
		}
	}
	f, ok := parse(src)
	if !ok {
		w.fallback(src)
		return
	}
	var stack []bool
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			if stack[len(stack)-1] {
				w.nested--
			}
			stack = stack[:len(stack)-1]
			return true
		}
		inc := false
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			inc = true
		case *syntax.CallExpr:
			w.callExpr(x, src)
		case *syntax.DeclClause:
			w.add(cmdRes{verb: x.Variant.Value, cat: "shell", trivial: true})
		}
		stack = append(stack, inc)
		if inc {
			w.nested++
		}
		return true
	})
}

// parse runs the shell parser; a panic in it counts as a parse error.
func parse(src string) (f *syntax.File, ok bool) {
	p := parsers.Get().(*syntax.Parser)
	defer func() {
		if recover() != nil {
			f, ok = nil, false
			return // the parser may be in a bad state: drop it
		}
		parsers.Put(p)
	}()
	f, err := p.Parse(strings.NewReader(src), "")
	return f, err == nil
}

func (w *walker) callExpr(x *syntax.CallExpr, src string) {
	if len(x.Args) == 0 {
		w.add(cmdRes{trivial: true}) // assignments only
		return
	}
	n := min(len(x.Args), maxArgs)
	args := make([]word, n)
	for i := range n {
		args[i] = toWord(x.Args[i], src)
	}
	// A Windows program path written unquoted (C:\tools\rg.exe) loses its
	// backslashes to shell escaping; its raw form names the program.
	if p0 := x.Args[0]; len(p0.Parts) == 1 {
		if l, ok := p0.Parts[0].(*syntax.Lit); ok && (isDrivePath(l.Value) || strings.HasPrefix(l.Value, `.\`)) {
			args[0] = word{s: l.Value, text: l.Value, lit: true}
		}
	}
	w.command(args)
}

// toWord reads a parsed word. Literal parts are unescaped; expansions make
// the word non-literal and are kept, as written, only in text.
func toWord(wd *syntax.Word, src string) word {
	if len(wd.Parts) == 1 {
		if l, ok := wd.Parts[0].(*syntax.Lit); ok && strings.IndexByte(l.Value, '\\') < 0 {
			return word{s: l.Value, text: l.Value, lit: true}
		}
	}
	var lit, text strings.Builder
	isLit := true
	tail := 0 // start in text of the literal run after the last expansion
	for _, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescape(p.Value, false)
			text.WriteString(v)
			if isLit {
				lit.WriteString(v)
			}
		case *syntax.SglQuoted:
			text.WriteString(p.Value)
			if isLit {
				lit.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, in := range p.Parts {
				if l, ok := in.(*syntax.Lit); ok {
					v := unescape(l.Value, true)
					text.WriteString(v)
					if isLit {
						lit.WriteString(v)
					}
					continue
				}
				isLit = false
				text.WriteString(source(src, in))
				tail = text.Len()
			}
		default:
			isLit = false
			text.WriteString(source(src, part))
			tail = text.Len()
		}
	}
	t := text.String()
	return word{s: lit.String(), text: t, lit: isLit, tail: t[tail:]}
}

func source(src string, n syntax.Node) string {
	a, b := int(n.Pos().Offset()), int(n.End().Offset())
	if a < 0 || b > len(src) || a > b {
		return ""
	}
	return src[a:b]
}

// unescape removes shell backslash escapes: all of them outside quotes,
// only those before $ ` " \ and newline inside double quotes.
func unescape(s string, dbl bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		if dbl && !strings.ContainsRune("$`\"\\\n", rune(next)) {
			b.WriteByte(c)
			continue
		}
		i++
		if next != '\n' {
			b.WriteByte(next)
		}
	}
	return b.String()
}

// fallback reads a command line the parser rejected: only the words before
// the first quote, expansion or other shell syntax are trusted, split into
// commands at && || ; | and &.
func (w *walker) fallback(src string) {
	if len(src) > fallbackBytes {
		src = src[:fallbackBytes]
		// Do not read a word cut in two as a whole one.
		src = src[:strings.LastIndexAny(src, " \t\n")+1]
	}
	if i := strings.IndexAny(src, "\r\n"); i >= 0 {
		src = src[:i]
	}
	var seg []word
	skip := false
	flush := func() {
		if len(seg) > 0 {
			w.command(seg)
			seg = nil
		}
	}
	fields := strings.Fields(src)
	for k, tok := range fields {
		switch tok {
		case "&&", "||", ";", "|", "&":
			flush()
			skip = false
			continue
		}
		end := false
		if strings.HasSuffix(tok, ";") {
			tok, end = strings.TrimRight(tok, ";"), true
		}
		if strings.ContainsAny(tok, "'\"`$\\(){}<>*?[]!#~") {
			if len(seg) == 0 && k == 0 {
				// The program itself, quoted: strip the quotes.
				if p := strings.Trim(tok, "'\"`"); isProgName(progName(p)) && !strings.ContainsAny(p, "'\"`$(){}<>*?[]!#") {
					seg = append(seg, word{s: p, text: p, lit: true})
					break
				}
			}
			seg = append(seg, word{})
			break
		}
		if skip {
			skip = !end
			continue
		}
		if len(seg) == 0 && reserved[tok] {
			// if, then, do, …: the command follows; after for, case and
			// select come names and values up to the next separator.
			skip = !end && (tok == "for" || tok == "case" || tok == "select")
			continue
		}
		seg = append(seg, word{s: tok, text: tok, lit: true})
		if end {
			flush()
		}
		if k == len(fields)-1 {
			flush()
		}
	}
	flush()
}

// reserved are the shell's reserved words, never a program.
var reserved = set(`if then else elif fi for while until do done case esac select in function time ! { } [[ ]]`)

// result reduces the commands of a line to one Shell.
func (w *walker) result() Shell {
	pick := -1
	for i, c := range w.cmds {
		if c.verify {
			pick = i
			break
		}
	}
	if pick < 0 {
		pick = firstOf(w.cmds, func(c cmdRes) bool { return !c.trivial && !c.nested && c.verb != "" })
	}
	if pick < 0 {
		pick = firstOf(w.cmds, func(c cmdRes) bool { return !c.trivial && c.verb != "" })
	}
	if pick < 0 {
		pick = firstOf(w.cmds, func(c cmdRes) bool { return c.verb != "" })
	}
	s := Shell{Cat: "shell"}
	if pick >= 0 {
		c := w.cmds[pick]
		s.Verb, s.Verify = c.verb, c.verify
		if c.cat != "" {
			s.Cat = c.cat
		}
	}
	rank := 0
	for _, c := range w.cmds {
		if c.vcs != nil && c.vcsRank > rank {
			s.VCS, rank = c.vcs, c.vcsRank
		}
		if c.vcs != nil && c.vcs.Provider == "git" && c.vcs.Action == "commit" {
			s.Commits = true
		}
		if c.showsHead && !c.nested {
			s.ShowsHead = true
		}
	}
	return s
}

func firstOf(cmds []cmdRes, ok func(cmdRes) bool) int {
	for i, c := range cmds {
		if ok(c) {
			return i
		}
	}
	return -1
}

// tooDeep reports whether a script nests brackets or compound commands more
// than limit levels deep, or joins more than maxChain commands with && || |. The parser and the tree walk recurse once per
// level, and a runaway recursion is a fatal error in Go, not a panic that
// could be recovered; so a pathological line is left to the fallback.
// Quotes are not tracked: a string of unbalanced brackets can only make the
// count larger, which costs a fallback, never a crash.
func tooDeep(src string, limit int) bool {
	depth, chain := 0, 0
	cmdPos := true // at the start of a command, where keywords count
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '(', '{', '[':
			depth++
			if depth > limit {
				return true
			}
			cmdPos = true
			continue
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
			continue
		case '<':
			if end, ok := heredocEnd(src, i); ok {
				i = end - 1 // a heredoc body is data, not commands
				cmdPos = true
				continue
			}
			cmdPos = false
			continue
		case '|', '&':
			// Each && || | joins one more command into a binary tree that
			// the parser builds by recursion.
			if i+1 < len(src) && src[i+1] == c {
				i++
			} else if c == '&' {
				if depth == 0 {
					chain = 0
				}
				cmdPos = true
				continue
			}
			chain++
			if chain > maxChain {
				return true
			}
			cmdPos = true
			continue
		case '\n', ';':
			if depth == 0 && !continued(src, i) {
				chain = 0
			}
			cmdPos = true
			continue
		case ' ', '\t':
			continue
		}
		j := i
		for j < len(src) && src[j] >= 'a' && src[j] <= 'z' {
			j++
		}
		if cmdPos && j > i && (j == len(src) || !isWordByte(src[j])) {
			switch src[i:j] {
			case "if", "case", "for", "while", "until", "select":
				depth++
				if depth > limit {
					return true
				}
			case "fi", "esac", "done":
				if depth > 0 {
					depth--
				}
			case "then", "do", "else", "elif", "in":
				i = j - 1
				continue // a command follows
			}
		}
		cmdPos = false
		if j > i {
			i = j - 1
		}
	}
	return false
}

// continued reports whether the line break or ';' at i follows an operator
// that carries the command on (a | or && at the end of a line).
func continued(src string, i int) bool {
	for k := i - 1; k >= 0; k-- {
		switch src[k] {
		case ' ', '\t', '\r':
			continue
		case '|', '&', '\\':
			return true
		}
		return false
	}
	return false
}

// heredocEnd finds the end of the heredoc that starts with "<<" at i: the
// offset after its closing delimiter line, or after the text when it is
// never closed.
func heredocEnd(src string, i int) (int, bool) {
	if !strings.HasPrefix(src[i:], "<<") || strings.HasPrefix(src[i:], "<<<") {
		return 0, false
	}
	k := i + 2
	if k < len(src) && src[k] == '-' {
		k++
	}
	for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	if k < len(src) && (src[k] == '\'' || src[k] == '"') {
		k++
	}
	start := k
	for k < len(src) && (isASCIILetter(src[k]) || isDigit(src[k]) || src[k] == '_') {
		k++
	}
	delim := src[start:k]
	if delim == "" {
		return 0, false
	}
	nl := strings.IndexByte(src[k:], '\n')
	if nl < 0 {
		return len(src), true
	}
	for pos := k + nl + 1; pos < len(src); {
		line, _, _ := strings.Cut(src[pos:], "\n")
		next := pos + len(line) + 1
		if strings.TrimSpace(line) == delim {
			return min(next, len(src)), true
		}
		pos = next
	}
	return len(src), true
}

func isWordByte(c byte) bool {
	return isASCIILetter(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '/'
}
