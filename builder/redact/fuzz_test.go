package redact

import (
	"strings"
	"testing"
)

func FuzzParseShell(f *testing.F) {
	for _, s := range []string{
		"git status", "cd x && npm test", "bash -lc 'go test ./...'", "FOO=1 sudo -u a make",
		"cat <<EOF\nx\nEOF", "echo $(git log)", `git commit -m "x`, "gh pr view 1", "npx -y jest",
		"pwsh -Command \"Get-Item x\"", "cmd /c dir", "${A}/b/c.sh", "python -m pip install x",
		"docker compose up", "a | b || c && d; e &", "((x++))", "[[ -f x ]] && ls", "f() { go build; }; f",
		"time (make -j4 test)", "coproc cat", "select x in a b; do echo $x; done", "case $x in a) ls;; esac",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		s := ParseShell(cmd)
		fuzzCheckVerb(t, s.Verb)
		if s.Cat == "" {
			t.Errorf("empty category for %q", cmd)
		}
		a := ParseArgv(strings.Fields(cmd))
		fuzzCheckVerb(t, a.Verb)
	})
}

// fuzzCheckVerb asserts the shape of a verb: at most three words, the
// first a program name, the others from the vocabulary.
func fuzzCheckVerb(t *testing.T, verb string) {
	t.Helper()
	if verb == "" {
		return
	}
	if strings.ContainsAny(verb, "/\\='\"`$\t\n") {
		t.Fatalf("verb %q has a forbidden character", verb)
	}
	words := strings.Split(verb, " ")
	if len(words) > 3 {
		t.Fatalf("verb %q has %d words", verb, len(words))
	}
	if !isProgName(words[0]) {
		t.Fatalf("verb %q does not start with a program name", verb)
	}
	for _, w := range words[1:] {
		if !vocabulary(w) {
			t.Fatalf("verb %q has %q, which is not in the vocabulary", verb, w)
		}
	}
}

func FuzzTarget(f *testing.F) {
	for _, s := range []string{"/Users/a/p", "src/a.go", `C:\x\y`, `\\s\sh\x`, "~/Desktop/a", "file:///c%3A/x", "../../..", "/tmp/x"} {
		f.Add("/Users/zz-agentmap-test/proj", s)
	}
	f.Fuzz(func(t *testing.T, cwd, path string) {
		p := NewPaths()
		p.SetCWD(cwd)
		got := p.Target(path, "read", "")
		if (got.Repo == "") == (got.Label == "") {
			t.Fatalf("Target(%q) = %+v: want exactly one of repo and label", path, got)
		}
		if got.Repo != "" && (got.Path == "" || strings.HasPrefix(got.Path, "/") || strings.HasPrefix(got.Path, "../") || got.Path == "..") {
			t.Fatalf("Target(%q) = %+v: not repo-relative", path, got)
		}
		for _, r := range p.NewRepos() {
			if strings.Contains(r.Key, "/") || len(r.Key) != 12 {
				t.Fatalf("bad key %q", r.Key)
			}
		}
		state, err := p.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := RestorePaths(state); err != nil {
			t.Fatalf("restore own state: %v", err)
		}
	})
}
