package redact

import (
	"strings"

	"github.com/agentmap/agentmap/builder/event"
)

// word is one shell word as far as it is known without running anything.
// s is the literal text when lit; otherwise the literal prefix before the
// first expansion. text is the best-effort source of the word (quotes
// removed, expansions kept as written) for parsing an inline script.
type word struct {
	s, text string
	lit     bool
	tail    string // literal text after the last expansion ("${ROOT}/bin/x" -> "/bin/x")
}

func litWords(argv []string) []word {
	ws := make([]word, len(argv))
	for i, a := range argv {
		ws[i] = word{s: a, text: a, lit: true}
	}
	return ws
}

// cmdRes is what one simple command contributes.
type cmdRes struct {
	verb    string
	cat     string
	verify  bool
	trivial bool // cd, export, … (or an assignment): not the verb of a list
	nested  bool // inside $(…) or <(…)
	vcs     *event.VCS
	vcsRank int // gh/glab 3, git writes 2, other git 1
	// showsHead: git log, git show or git rev-parse of HEAD alone (no
	// other revision, no paths), whose first output line is HEAD's sha
	showsHead bool
}

const maxWrapperChain = 8

// progName reduces a program word to its basename: directories dropped
// (either slash), .exe/.cmd/.bat/.com dropped. It returns "" for anything
// that does not look like a program name.
func progName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	if n := len(s); n > 4 && s[n-4] == '.' {
		switch strings.ToLower(s[n-3:]) {
		case "exe", "cmd", "bat", "com":
			s = s[:n-4]
		}
	}
	if !isProgName(s) {
		return ""
	}
	return s
}

func isProgName(s string) bool {
	if s == "" || len(s) > 48 {
		return false
	}
	c0 := s[0]
	if !(isASCIILetter(c0) || isDigit(c0) || c0 == '_') {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isASCIILetter(c):
			letter = true
		case isDigit(c) || c == '.' || c == '_' || c == '+' || c == '-':
		default:
			return false
		}
	}
	return letter
}

// family folds program names that behave alike: python3.12 -> python,
// pip3 -> pip, gradlew -> gradle, mvnw -> mvn, gmake -> make, podman ->
// docker (same grammar).
func family(prog string) string {
	p := strings.ToLower(prog)
	switch {
	case p == "py" || strings.HasPrefix(p, "python") && strings.Trim(p[6:], "0123456789.") == "":
		return "python"
	case strings.HasPrefix(p, "pip") && strings.Trim(p[3:], "0123456789.") == "":
		return "pip"
	case p == "gradlew":
		return "gradle"
	case p == "mvnw":
		return "mvn"
	case p == "gmake":
		return "make"
	case p == "podman":
		return "docker"
	case p == "podman-compose":
		return "docker-compose"
	case p == "nodejs":
		return "node"
	}
	return p
}

// verbName is the program as it appears in a verb: known programs in lower
// case, others as written.
func verbName(prog string) string {
	l := strings.ToLower(prog)
	if _, ok := subcommands[family(l)]; ok || verifyPrograms[l] != "" || httpPrograms[l] ||
		cloudPrograms[l] || vcsPrograms[l] || trivialPrograms[l] || wrapperFlags[l].arg != nil {
		return l
	}
	return prog
}

// skipFlags skips options from args[i:]. Options listed in arg take the
// next word as their value; with strict, an option that is neither in arg
// nor in known stops the walk (ok false) because its value could be taken
// for a command. "--" ends the options.
func skipFlags(args []word, i int, arg, known map[string]bool, strict bool) (int, bool) {
	for i < len(args) {
		a := args[i]
		if !a.lit {
			return i, true
		}
		s := a.s
		if s == "--" {
			return i + 1, true
		}
		if len(s) < 2 || s[0] != '-' {
			return i, true
		}
		if strings.HasPrefix(s, "--") {
			name, _, eq := strings.Cut(s, "=")
			switch {
			case eq:
				i++
			case arg[name]:
				i += 2
			case strict && !known[name]:
				return i, false
			default:
				i++
			}
			continue
		}
		switch {
		case arg[s]:
			i += 2
		case len(s) > 2 && arg[s[:2]]:
			i++ // value attached: -n1, -I{}, -oL
		case strict && !known[s] && !knownCluster(s, known):
			return i, false
		default:
			i++
		}
	}
	return i, true
}

func knownCluster(s string, known map[string]bool) bool {
	if len(s) < 3 || s[1] == '-' {
		return false
	}
	for j := 1; j < len(s); j++ {
		if !known["-"+s[j:j+1]] {
			return false
		}
	}
	return true
}

// command analyses one simple command: wrappers and runners are peeled
// off, inline scripts recurse, and what remains is classified.
func (w *walker) command(args []word) {
	i := 0
	for range maxWrapperChain {
		// Leading assignments (env's NAME=value, or a runner's).
		for i < len(args) && isAssignment(args[i].s) {
			i++
		}
		if i >= len(args) {
			w.add(cmdRes{trivial: true})
			return
		}
		if !args[i].lit {
			// A variable as program gives no verb, unless a literal path
			// follows it: "${ROOT}/scripts/run.sh" runs run.sh.
			j := strings.LastIndexAny(args[i].tail, `/\`)
			if j < 0 || progName(args[i].tail[j+1:]) == "" {
				w.add(cmdRes{cat: "shell"})
				return
			}
			args[i] = word{s: args[i].tail[j+1:], text: args[i].tail[j+1:], lit: true}
		}
		prog := progName(args[i].s)
		if prog == "" {
			w.add(cmdRes{cat: "shell"})
			return
		}
		lower := strings.ToLower(prog)
		rest := args[i+1:]
		if wf, ok := wrapperFlags[lower]; ok {
			if lower == "command" && len(rest) > 0 && rest[0].lit && (rest[0].s == "-v" || rest[0].s == "-V") {
				w.add(cmdRes{verb: "command", cat: "shell"})
				return
			}
			from := i + 1
			if lower == "nice" && from < len(args) && args[from].lit && len(args[from].s) > 1 &&
				args[from].s[0] == '-' && isDigit(args[from].s[1]) {
				from++ // nice -10 cmd
			}
			j, ok := skipFlags(args, from, wf.arg, wf.known, true)
			if ok && (lower == "timeout" || lower == "gtimeout") {
				if j < len(args) && args[j].lit && isDuration(args[j].s) {
					j++
				} else {
					ok = false
				}
			}
			if !ok || j >= len(args) {
				// exec with no command only redirects the shell's own output.
				w.add(cmdRes{verb: lower, cat: "shell", trivial: lower == "exec" && ok})
				return
			}
			i = j
			continue
		}
		if shellPrograms[lower] {
			w.shell(lower, rest)
			return
		}
		if lower == "pwsh" || lower == "powershell" {
			w.powershell(lower, rest)
			return
		}
		if lower == "cmd" {
			w.cmdExe(rest)
			return
		}
		if runner := runnerOf(lower, rest); runner != "" {
			skip := strings.Count(runner, " ")
			j, ok := w.runner(runner, rest, skip)
			if !ok {
				return
			}
			i += 1 + j
			continue
		}
		if family(lower) == "python" {
			if mod, j := pythonModule(rest); mod != "" {
				res := w.moduleCommand(mod, rest[j:])
				w.add(res)
				return
			}
		}
		w.add(classify(prog, rest))
		return
	}
	w.add(cmdRes{cat: "shell"})
}

// isAssignment reports whether a word is NAME=value.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(isASCIILetter(c) || c == '_' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return true
}

func isDuration(s string) bool {
	s = strings.TrimRight(s, "smhd")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && s[i] != '.' {
			return false
		}
	}
	return true
}

// runnerOf names the runner a command is (npx, "uv run", "pnpm dlx", …),
// or "".
func runnerOf(lower string, rest []word) string {
	if _, ok := runnerFlags[lower]; ok {
		return lower
	}
	fam := family(lower)
	if len(rest) == 0 || !rest[0].lit {
		return ""
	}
	// The two words are joined in a buffer on the stack: most commands
	// are no runner, and a string made for each would be garbage.
	var buf [64]byte
	two := append(append(append(buf[:0], fam...), ' '), rest[0].s...)
	if _, ok := runnerFlags[string(two)]; ok {
		return string(two)
	}
	if len(rest) > 1 && rest[1].lit && rest[1].s == "run" {
		switch string(two) {
		case "uv tool":
			return "uv tool run"
		case "dotnet tool":
			return "dotnet tool run"
		}
	}
	return ""
}

// runner skips a runner's own words and options. It returns the offset in
// rest of the tool word, or false when the runner itself was recorded as
// the verb.
func (w *walker) runner(runner string, rest []word, skip int) (int, bool) {
	rf := runnerFlags[runner]
	// npx -c 'script' runs a script.
	for k := skip; k+1 < len(rest); k++ {
		if !rest[k].lit || rest[k].s == "--" || !strings.HasPrefix(rest[k].s, "-") {
			break
		}
		if (rest[k].s == "-c" || rest[k].s == "--call") && rf.arg["-c"] && rest[k+1].text != "" {
			w.script(rest[k+1].text)
			return 0, false
		}
	}
	j, ok := skipFlags(rest, skip, rf.arg, rf.known, true)
	if !ok || j >= len(rest) || !rest[j].lit {
		// The runner is the verb when its tool cannot be told for sure.
		w.add(cmdRes{verb: runner, cat: "shell"})
		return 0, false
	}
	tool := rest[j].s
	if strings.HasPrefix(tool, "@") { // @scope/pkg@1.2
		if k := strings.IndexByte(tool, '/'); k >= 0 {
			tool = tool[k+1:]
		}
	}
	if k := strings.IndexByte(tool, '@'); k > 0 {
		tool = tool[:k]
	}
	rest[j].s = tool
	return j, true
}

// pythonModule finds `python [opts] -m module` and returns the module and
// the offset of its arguments.
func pythonModule(rest []word) (string, int) {
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if !a.lit || !strings.HasPrefix(a.s, "-") {
			return "", 0
		}
		switch {
		case a.s == "-m" && k+1 < len(rest) && rest[k+1].lit:
			return rest[k+1].s, k + 2
		case strings.HasPrefix(a.s, "-m") && len(a.s) > 2:
			return a.s[2:], k + 1
		case a.s == "-c":
			return "", 0
		case argFlags["python"][a.s]:
			k++
		}
	}
	return "", 0
}

// moduleCommand classifies `python -m module args…`: known tool modules
// act as the tool itself; any other module leaves the verb "python".
func (w *walker) moduleCommand(mod string, args []word) cmdRes {
	if !pythonModules[mod] {
		return cmdRes{verb: "python", cat: "shell"}
	}
	if mod == "unittest" {
		return cmdRes{verb: "unittest", cat: vTest, verify: true}
	}
	if mod == "build" {
		return cmdRes{verb: "build", cat: vBuild, verify: true}
	}
	return classify(mod, args)
}

// shell handles bash/sh/zsh…: with -c the script is parsed in turn;
// otherwise the shell itself (running a script file or interactive) is the
// verb.
func (w *walker) shell(prog string, rest []word) {
	k := 0
	if prog == "busybox" {
		if len(rest) == 0 || !rest[0].lit || !shellPrograms[rest[0].s] {
			w.add(cmdRes{verb: prog, cat: "shell"})
			return
		}
		prog, k = rest[0].s, 1
	}
	for ; k < len(rest); k++ {
		a := rest[k]
		if !a.lit {
			break
		}
		s := a.s
		switch {
		case s == "-o" || s == "+o" || s == "-O" || s == "+O" || s == "--rcfile" || s == "--init-file":
			k++
		case len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.IndexByte(s, 'c') > 0:
			if k+1 < len(rest) && rest[k+1].text != "" {
				w.script(rest[k+1].text)
				return
			}
			w.add(cmdRes{verb: prog, cat: "shell"})
			return
		case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
		default:
			k = len(rest)
		}
	}
	w.add(cmdRes{verb: prog, cat: "shell"})
}

// powershell handles pwsh/powershell -Command …: the rest of the line is
// the script. PowerShell syntax often reads as shell words well enough; if
// not, the fallback keeps the first token only.
func (w *walker) powershell(prog string, rest []word) {
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if !a.lit || !strings.HasPrefix(a.s, "-") {
			break
		}
		switch strings.ToLower(a.s) {
		case "-command", "-c", "-com", "-comm":
			var parts []string
			for _, r := range rest[k+1:] {
				parts = append(parts, r.text)
			}
			if script := strings.Join(parts, " "); script != "" {
				w.script(script)
				return
			}
		case "-executionpolicy", "-ex", "-ep", "-windowstyle", "-w", "-outputformat", "-of",
			"-inputformat", "-if", "-workingdirectory", "-wd", "-configurationname", "-version", "-v",
			"-psconsolefile", "-settingsfile":
			k++
		case "-file", "-f", "-encodedcommand", "-e", "-ec":
			k = len(rest)
		}
	}
	w.add(cmdRes{verb: prog, cat: "shell"})
}

// cmdExe handles cmd /c "…".
func (w *walker) cmdExe(rest []word) {
	for k, a := range rest {
		if !a.lit {
			break
		}
		switch strings.ToLower(a.s) {
		case "/c", "/k":
			var parts []string
			for _, r := range rest[k+1:] {
				parts = append(parts, r.text)
			}
			w.script(strings.Join(parts, " "))
			return
		case "/s", "/q", "/d", "/a", "/u":
			continue
		}
		break
	}
	w.add(cmdRes{verb: "cmd", cat: "shell"})
}
