package redact

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/internal/cite"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/redact")

// TestShellGolden runs every command of testdata/redact/shell_commands.txt
// and compares verb, category, kind and VCS facet with the golden file.
func TestShellGolden(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "redact")
	f, err := os.Open(filepath.Join(dir, "shell_commands.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd := line
		if q, ok := strings.CutPrefix(line, "q "); ok {
			if cmd, err = strconv.Unquote(q); err != nil {
				t.Fatalf("bad quoted line %q: %v", line, err)
			}
		}
		s := ParseShell(cmd)
		checkVerb(t, cite.Own([]byte(cmd)), s.Verb)
		vcs := "-"
		if s.VCS != nil {
			vcs = fmt.Sprintf("%s:%s", s.VCS.Provider, s.VCS.Action)
			if s.VCS.Repo != "" {
				vcs += ":" + s.VCS.Repo
			}
			if s.VCS.Number != 0 {
				vcs += fmt.Sprintf("#%d", s.VCS.Number)
			}
		}
		verb := s.Verb
		if verb == "" {
			verb = "-"
		}
		fmt.Fprintf(&out, "%-28s %-8s %-6s %-24s %s\n", verb, s.Cat, s.Kind(), vcs, line)
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 150 {
		t.Errorf("only %d commands in the golden list", n)
	}
	golden := filepath.Join(dir, "shell_verbs.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
			}
		}
	}
}
