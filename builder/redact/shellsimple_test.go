package redact

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentmap/agentmap/internal/cite"
)

// parsedOnly runs f with the simple-line split off: every line goes to the
// shell parser.
func parsedOnly(f func()) {
	simpleFastPath = false
	defer func() { simpleFastPath = true }()
	f()
}

// sameAsParsed checks that a command line gives the same Shell with and
// without the simple-line split, and reports whether the split took it.
// in names the line that failed: the corpus's commands are not quoted.
func sameAsParsed(t *testing.T, in cite.Line) bool {
	t.Helper()
	src := string(in.B)
	got := ParseShell(src)
	var want Shell
	parsedOnly(func() { want = ParseShell(src) })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: the split and the parser %s", in, in.Diff(got, want))
	}
	cmds, simple := simpleCommands(src)
	if simple {
		// Stricter than the results: the words themselves are the
		// parser's, part for part.
		if parsed := parsedWords(t, src); !reflect.DeepEqual(cmds, parsed) {
			t.Errorf("%s: the split's words and the parser's %s", in, in.Diff(cmds, parsed))
		}
	}
	return simple
}

// countSameAsParsed checks every line with sameAsParsed and counts those
// the split took.
func countSameAsParsed(t *testing.T, lines []string) int {
	t.Helper()
	simple := 0
	for _, s := range lines {
		if sameAsParsed(t, cite.Own([]byte(s))) {
			simple++
		}
	}
	return simple
}

// parsedWords is what the walker reads of a line the parser takes: each
// call's words (toWord), in order.
func parsedWords(t *testing.T, src string) [][]word {
	t.Helper()
	f, ok := parse(src)
	if !ok {
		t.Errorf("%q: the split takes a line the parser refuses", src)
		return nil
	}
	var out [][]word
	syntax.Walk(f, func(n syntax.Node) bool {
		if x, ok := n.(*syntax.CallExpr); ok && len(x.Args) > 0 {
			var ws []word
			for _, a := range x.Args[:min(len(x.Args), maxArgs)] {
				ws = append(ws, toWord(a, src))
			}
			out = append(out, ws)
		}
		return true
	})
	return out
}

// TestSimpleLinesAgreeWithParserOnCorpus: every shell command of the corpus,
// as a string and inside argv vectors, gives the same result either way;
// most of them take the split.
func TestSimpleLinesAgreeWithParserOnCorpus(t *testing.T) {
	scripts, argvs := corpusCommands(t)
	simple := 0
	for i, s := range scripts {
		if sameAsParsed(t, cite.Named(fmt.Sprintf("corpus command %d", i), []byte(s))) {
			simple++
		}
	}
	for i, argv := range argvs {
		got := ParseArgv(argv)
		var want Shell
		parsedOnly(func() { want = ParseArgv(argv) })
		if !reflect.DeepEqual(got, want) {
			t.Errorf("corpus argv %d of %d words: the split and the parser %s", i, len(argv), cite.Diff(got, want))
		}
	}
	t.Logf("%d of %d command strings are simple lines", simple, len(scripts))
	if simple == 0 {
		t.Error("no command of the corpus is a simple line")
	}
}

// TestSimpleLinesAgreeWithParser covers what the corpus may lack: keywords,
// assignments, separators in every place, bytes next to the allowed ones,
// and nested bash -c.
func TestSimpleLinesAgreeWithParser(t *testing.T) {
	fixed := []string{
		"git status", "cd app && go test ./...", "ls -la src | head -20", "a || b; c", "a;", ";a", "a &&", "&& a",
		"a & b", "a |& b", "a ;; b", "time go test", "export A=1", "A=1 go test", "go test -run=TestX",
		"local x", "let x=1", "if true", "then x", "in a", "coproc x", "bash -c ls", "bash -lc pytest",
		"sudo -u root make", "npx jest --watch", "git commit -m x", "gh pr create", "a\tb", "-x=1 y",
		"C:/tools/rg.exe foo", "python3 -m pytest -q", "git -C repo log", "env FOO=1 go test", "x=1",
		"a | b | c && d || e ; f", "npm run lint && npm test", "uv run pytest tests", ": noop", ". env.sh",
		`git commit -m "fix: the thing"`, `rg -n 'a|b' src`, `"git" status`, `bash -c "go test ./..."`,
		`bash -lc 'cd app && npm test'`, `echo "x" > out`, `cat ~/.bashrc`, `A="x y" go test`,
	}
	if simple := countSameAsParsed(t, fixed); simple < len(fixed)/2 {
		t.Errorf("only %d of %d plain lines took the split", simple, len(fixed))
	}
	words := []string{"git", "go", "test", "npm", "run", "cd", "ls", "-la", "./...", "make", "pytest", "bash", "-c",
		"-lc", "sudo", "env", "A=1", "x=y", "time", "if", "do", "export", "let", "gh", "pr", "create", "commit",
		"push", "-m", "msg", "npx", "jest", "python", "-m", "uv", "cargo", "build", "src/a.go", "@scope/pkg", "100%",
		"a+b", "k:v", "1,2", "-", "--", "docker", "compose", "up", "kubectl", "apply", "~", "~/src", "a~b",
		`"x y"`, `'x y'`, `-m"a b"`, `'$HOME'`, `"$HOME"`, `""`, `''`, `"a'b"`, `'a"b'`, `"it!"`, `"a\b"`, `'unclosed`,
		`"un closed`, `"if"`, `'git'`, "'\x01'", `"é"`, `'a;b'`, `"a && b"`, `x"`, `"a` + "`" + `b"`, `'a\nb'`}
	seps := []string{" ", " ", " ", "  ", "\t", " && ", " || ", " | ", "; ", ";", "&&", "|", " & ", " |& ", ";;", "\n", " #", "'", "$x", "é"}
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		sameAsParsed(t, cite.Own([]byte(generatedLine(r, words, seps, 10, nil))))
	}
}

// generatedLine joins one to eight of words with seps, calls extra (if
// any) after each word, and ends with a separator one time in tail.
func generatedLine(r *rand.Rand, words, seps []string, tail int, extra func(*strings.Builder)) string {
	var b strings.Builder
	for k := range 1 + r.IntN(8) {
		if k > 0 {
			b.WriteString(seps[r.IntN(len(seps))])
		}
		b.WriteString(words[r.IntN(len(words))])
		if extra != nil {
			extra(&b)
		}
	}
	if r.IntN(tail) == 0 {
		b.WriteString(seps[r.IntN(len(seps))])
	}
	return b.String()
}

// inside reports whether s's bytes lie in within's memory.
func inside(s, within string) bool {
	if s == "" || within == "" {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(within)))
	return p >= lo && p < lo+uintptr(len(within))
}

// What a parsed line keeps does not point into the line: a verb sliced
// from a hand-split command would keep its arguments alive with it.
func TestShellResultDoesNotHoldTheLine(t *testing.T) {
	long := strings.Repeat("x", 1000)
	for _, cmd := range []string{
		"pytest -x tests/" + long,
		"make build " + long,
		"ls -la " + long,
		"gh pr create --repo owner/name --title " + long,
		"git -C repo push origin " + long,
	} {
		cmd = strings.Clone(cmd)
		sh := ParseShell(cmd)
		if sh.Verb == "" {
			t.Fatalf("%.20q…: no verb", cmd)
		}
		if inside(sh.Verb, cmd) {
			t.Errorf("%.20q…: the verb %q points into the command line", cmd, sh.Verb)
		}
		if v := sh.VCS; v != nil && (inside(v.Provider, cmd) || inside(v.Action, cmd) || inside(v.Repo, cmd)) {
			t.Errorf("%.20q…: the VCS facet points into the command line: %+v", cmd, *v)
		}
	}
}

// Parameters in a simple line ($NAME and ${NAME}, bare, inside words, in
// double quotes, first or later) agree with the parser, and so does every
// form next to them that the split must leave to it (special and
// positional parameters, operators inside the braces, unclosed braces,
// parameters in single quotes, assignments). The corpus's commands run
// plugin scripts by a parameter: "${ROOT}/hooks/x.sh".
func TestParametersAgreeWithParser(t *testing.T) {
	params := []string{"$HOME", "${HOME}", "${HOME}/bin/x.sh", `"$HOME"/.cfg/a.json`, `"a$B c"`, "$A-b", "$A_1x",
		"${A}${B}", "$A$B", "x$A", "x${A}y", `"${A}"`, `"$A$B"`, `"$A/b c"`, `$A"b"`, `"b"$A`, `-m"$A"`, "$_", "${_x}",
		"${A}=b", "$A=1", "A=$B", "A=${B}", "-DX=$Y", "--out=${D}/o", "$1", "$0", "$?", "$$", "$#", "$@", "$*", "$!",
		"$-", "${1}", "${A:-x}", "${A-x}", "${#A}", "${!A}", "${A[0]}", "${A", "${}", "$", `"$"`, "'$A'", `'${A}'`,
		"$é", `"$(ls)"`, "$(ls)", "$((1+2))", "${A}x${B}y", "$A.b", "$A:b", "$A/b", "$A@b", "$A%b", "$A+b", "$A~",
		`"$A"'$B'`, `"x${A}y${B}z"`, "${A}}", "${{A}}", "$A}", "${ A}", "${A }", `"$A\"`, `"$A!"`, "$IFS", "${IFS}x",
		"${ROOT}/git", "$GIT", `"$X"`, "$if", "${if}", "$then/x"}
	rest := []string{"status", "push origin", "-la src", "run test", "x.json", "&& git status", "| head -5", "; ls"}
	var lines []string
	for _, p := range params {
		lines = append(lines, p, p+" "+rest[len(lines)%len(rest)], "cat "+p, "git -C "+p+" log", "bash -lc "+p,
			"ls && "+p+" x", p+" | "+p, "sudo "+p)
	}
	if simple := countSameAsParsed(t, lines); simple < len(lines)/3 {
		t.Errorf("only %d of %d lines with parameters took the split", simple, len(lines))
	}
	r := rand.New(rand.NewPCG(9, 10))
	seps := []string{" ", " ", "", " && ", " | ", "; ", "=", "/", "-", `"`, "'"}
	for range 20000 {
		var b strings.Builder
		for k := range 1 + r.IntN(6) {
			if k > 0 {
				b.WriteString(seps[r.IntN(len(seps))])
			}
			if r.IntN(2) == 0 {
				b.WriteString(params[r.IntN(len(params))])
			} else {
				b.WriteString(rest[r.IntN(len(rest))])
			}
		}
		sameAsParsed(t, cite.Own([]byte(b.String())))
	}
}

// FuzzSimpleLines holds the split to the parser on any line: whatever it
// takes, it reads as the parser does.
func FuzzSimpleLines(f *testing.F) {
	for _, s := range []string{"git status", "${A}/b/c.sh x", `"$HOME"/.x/y.json`, "cd ${D} && npm test", `a "$B" 'c$D'`,
		"x$A-y ${B}z", "$1 $? ${A:-b}", `git commit -m "$MSG"`, "go test ./... 2>&1 | tail -20", "ls 2>/dev/null > o",
		"cat <in >>out", "a 2>&1>x", "cd a\n# c\ngo test ./... # c", "a &&\n\tb |\n c;\n", "cat <<'EOF' > f.py\nx = 1\nEOF\nls",
		"cat <<-\"A\" <<'B'\n\ta\n\tA\nb\nB\n", "cat <<'EOF'\nEOF\x00\nls\nEOF", "ls # c\\\ngit status", "x \"$A\\\nB\"", "python -c \"\nimport os\nprint('é')\n\" && ls", `git commit -m "a \"b\" \\ \$c \d"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 4096 {
			return
		}
		sameAsParsed(t, cite.Own([]byte(cmd)))
	})
}

// Redirections after a command's name are skipped as the parser's tree
// leaves them out of the call's words: descriptors (2>&1, 2>/dev/null),
// appends, targets quoted or with parameters, operators glued to words;
// what the split must leave to the parser (a redirection first, no target,
// here-documents and here-strings, <> <& >| &>, process substitutions,
// descriptors that are not digits) agrees too.
func TestRedirectionsAgreeWithParser(t *testing.T) {
	redirs := []string{"2>&1", "2>/dev/null", "> out.txt", ">out", ">> log", ">>log", "< in.txt", "<in", "1>&2", ">&2",
		">& 2", "2> err", "2>>err", ">&-", "2>&-", `> "a b"`, "> 'x'", "> $OUT", "> ${D}/o.log", `> "$D/o"`, "12>x",
		"a2>x", `"2">x`, "'2'>x", "$N>x", ">", "2>", ">>", "> && x", ">|x", "<>x", "<&0", "<<EOF", "<<<x", "&>x",
		"&>>x", ">(cat)", "<(ls)", "> >x", "2>&1>x", ">x>y", "> x 2>&1", "2>&1 | tail -5", "> x; ls", ">x&&y",
		"<x|y", "{fd}>x", ">a<b", "2>&1 >/dev/null"}
	cmds := []string{"go test ./...", "ls -la", "x", "git status", "${ROOT}/run.sh", "npm test", "cat a.txt", "echo"}
	var lines []string
	for i, r := range redirs {
		c := cmds[i%len(cmds)]
		lines = append(lines, c+" "+r, c+r, r+" "+c, c+" "+r+" && git log", "cd d && "+c+" "+r, c+" "+r+" | head")
	}
	if simple := countSameAsParsed(t, lines); simple < len(lines)/3 {
		t.Errorf("only %d of %d lines with redirections took the split", simple, len(lines))
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 20000 {
		var b strings.Builder
		for k := range 1 + r.IntN(6) {
			if k > 0 && r.IntN(3) == 0 {
				b.WriteString(" ")
			}
			if r.IntN(2) == 0 {
				b.WriteString(redirs[r.IntN(len(redirs))])
			} else {
				b.WriteString(cmds[r.IntN(len(cmds))])
			}
		}
		sameAsParsed(t, cite.Own([]byte(b.String())))
	}
}

// TestScriptsAgreeWithParser: scripts of several lines, with comments and
// here-documents, split as the parser reads them; and what the split must
// leave to it (unquoted or unclosed delimiters, here-strings, a
// here-document before the program, a line ended by an operator at the
// end) agrees too.
func TestScriptsAgreeWithParser(t *testing.T) {
	fixed := []string{
		"cd app\ngo test ./...", "cd app\n\n  go test ./...\n", "a &&\nb", "a |\n  b", "a ||\n\n b", "a &&\n", "a |\n",
		"a\n&& b", "a;\nb", "a;\n;b", "\nls", "ls\n", "ls;", "ls;\n", "# only a comment", "# c\nls -la", "ls # c", "ls #c\ngit status",
		"ls#c", "a && # c\nb", "a;#c\nb", "# c1\n# c2\ngo build ./... # c3\n",
		"cat <<'EOF' > f.py\nimport os\nprint(1)\nEOF", "cat <<'EOF' > f.py\nx\nEOF\n", "cat <<'EOF' > f.py\nx\nEOF\ngo test",
		"python - <<'PY'\nimport re\ns = open('a').read()\nPY\necho done", "cat > out <<\"EOF\"\n$(rm -rf x)\n`id`\nEOF",
		"cat <<'EOF'\nunclosed\n", "cat <<'EOF'", "cat <<EOF\n$(id)\nEOF", "cat <<\\EOF\nx\nEOF", "cat << 'EOF'\nx\nEOF",
		"cat <<-'EOF'\n\tx\n\tEOF", "cat <<'EOF'\n\tx\n\tEOF\nEOF", "cat <<'EOF' \nx\nEOF ", "cat <<'EOF' \nx\nEOF \nEOF",
		"cat <<'A' <<'B'\na\nA\nb\nB\nls", "cat <<'A' && cat <<'B'\na\nA\nb\nB", "cat <<'EOF' | wc -l\nx\nEOF",
		"<<'EOF' cat\nx\nEOF", "cat <<<'x'", "cat <<'E F'\nx\nE F", "cat <<'EOF'x\nEOF", "cat <<''\n\n",
		"cat <<'EOF'\r\nx\r\nEOF\r\n", "cat <<'EOF'\nx\nEOF\r\nEOF", "cat <<'EOF'\nd\xffx\nEOF", "cat <<'EOF'\nnul\x00\nEOF",
		"cat <<'EOF' >f\nif then fi ${x:-y} \\\nEOF", "git commit -F - <<'MSG'\nfix: a thing\n\nbody\nMSG\ngit push",
		"cat <<'EOF'>f\nx\nEOF", "cat <<'EOF';\nx\nEOF", "a <<'EOF' && b\nx\nEOF\nc\nd", "cat <<-'EOF'\n  EOF\nEOF",
		"cat <<'EOF'\nEOF\x00\nls\nEOF", "cd a <<'EOF'\nEOF\x00\ncd b <<'X'\nEOF\nsecret\nX", "ls # c\\\ngit status",
		"cd x # c\\\nsecret arg", "cd a <<'X' # c\\\nX\nsecret\nX", "ls # c\\\\\ngit status", "x \"$A\\\nB\"", "x \"$A\\\n\"",
		"\"$ROOT\\\n/hooks/x.sh\" y", "x \"${A}\\\nB\"", "x \"a\\\nb\"",
	}
	countSameAsParsed(t, fixed)
	// Lines the split leaves to the parser: it would read them otherwise
	// (a comment the parser carries on, NUL bytes it drops, a name it
	// continues), or they are not plain.
	for _, s := range []string{"<<'EOF' cat\nx\nEOF", "cat <<EOF\nx\nEOF", "cat <<'EOF'x\nEOF", "cat <<'EOF'>f\nx\nEOF",
		"cat <<'EOF'\nx", "cat <<<'x'", "ls # c\\\ngit status", "cat <<'EOF'\nEOF\x00\nls\nEOF", "x \"$A\\\nB\"", "a &&\n",
		"cat <<'EOF'\r\nx\r\nEOF"} {
		if _, simple := simpleCommands(s); simple {
			t.Errorf("%q took the split", s)
		}
	}
	taken := []string{"cd app\ngo test ./...", "a &&\nb", "# c\nls -la", "ls # c", "cat <<'EOF' > f.py\nimport os\nEOF\ngo test",
		"cat <<-'EOF'\n\tx\n\tEOF", "python -c \"\nimport os\nprint('é')\n\"", "cat <<'EOF' >f\nx\nEOF\ngo vet\ngo test",
		"x \"${A}\\\nB\"", `gh pr create --title "fix \"x\" in \$PATH"`}
	if simple := countSameAsParsed(t, taken); simple != len(taken) {
		t.Errorf("%d of these %d scripts took the split, not all", simple, len(taken))
	}
	// Generated: lines of words and separators, with comments and
	// here-documents between them.
	words := []string{"git", "status", "cd", "app", "go", "test", "./...", "ls", "-la", "python", "-", "cat", "echo", "x",
		"'a b'", `"$HOME"`, "if", "A=1", "EOF", "PY", "'x\ny'", "\"import os\nprint(1)\n\"", "'é ü'", `"日本 $X"`, "'\t'",
		"\"a\r\nb\"", "'\x7f'", "\"\x01\"", "é", "'d\xffx'", `"a \"b\" c"`, `"x\\y"`, `"\$HOME"`, "\"a\\`b\"", `"a\nb"`,
		"\"line\\\ncont\"", `"\!"`, `"\`, `"a\"`, `'a\'`, `"\\"`, `"q\'"`, `"\$(id)"`, `"$(id)"`}
	seps := []string{" ", " ", " ", "\n", "\n\n", " && ", " &&\n", " | ", " |\n", "; ", ";\n", " # c\n", "\n# c\n", "\t", "\n\t"}
	docs := []string{" <<'EOF'", " <<\"PY\"", " <<-'EOF'", " << 'EOF'", " <<EOF", " <<'EOF' > out", " <<<x", " <<'EOF' | wc"}
	bodies := []string{"\nx\nEOF", "\nEOF", "\n\tEOF", "\nimport os\nPY", "\n$(rm x)\nEOF", "\nEOF \n", "\nno end", "\nx\nEOF\n", "\n\tx\n\tEOF\n"}
	r := rand.New(rand.NewPCG(13, 14))
	simple := 0
	hereDoc := func(b *strings.Builder) { // a here-document after a word, its body on the next line
		if r.IntN(4) != 0 {
			return
		}
		b.WriteString(docs[r.IntN(len(docs))])
		if r.IntN(3) > 0 {
			b.WriteString(seps[r.IntN(len(seps))])
			b.WriteString(words[r.IntN(len(words))])
		}
		b.WriteString(bodies[r.IntN(len(bodies))])
	}
	for range 20000 {
		if sameAsParsed(t, cite.Own([]byte(generatedLine(r, words, seps, 5, hereDoc)))) {
			simple++
		}
	}
	t.Logf("%d of 20000 generated scripts took the split", simple)
	if simple < 3000 {
		t.Errorf("only %d of 20000 generated scripts took the split", simple)
	}
}
