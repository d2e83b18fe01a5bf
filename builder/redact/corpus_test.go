package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/internal/cite"
)

// corpusDir is ../shared/corpus relative to the module root.
func corpusDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("corpus not present")
	}
	return dir
}

// corpusCommands collects every shell command of the JSONL logs of the
// corpus: strings under "command"/"cmd" keys (also inside JSON-encoded
// tool arguments) and argv arrays under "command".
func corpusCommands(t testing.TB) (scripts []string, argvs [][]string) {
	dir := corpusDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReaderSize(f, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var v any
				if json.Unmarshal(line, &v) == nil {
					collect(v, &scripts, &argvs, 0)
				}
			}
			if err != nil {
				break
			}
		}
		f.Close()
	}
	return scripts, argvs
}

func collect(v any, scripts *[]string, argvs *[][]string, depth int) {
	if depth > 12 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch s := val.(type) {
			case string:
				if k == "command" || k == "cmd" {
					*scripts = append(*scripts, s)
				} else if k == "arguments" && strings.HasPrefix(strings.TrimSpace(s), "{") {
					var inner any
					if json.Unmarshal([]byte(s), &inner) == nil {
						collect(inner, scripts, argvs, depth+1)
					}
				}
			case []any:
				if k == "command" {
					var argv []string
					for _, a := range s {
						if as, ok := a.(string); ok {
							argv = append(argv, as)
						}
					}
					if len(argv) == len(s) && len(argv) > 0 {
						*argvs = append(*argvs, argv)
						continue
					}
				}
			}
			collect(val, scripts, argvs, depth+1)
		}
	case []any:
		for _, e := range x {
			collect(e, scripts, argvs, depth+1)
		}
	}
}

// vocabulary reports whether a word after the program comes from the
// verb tables.
func vocabulary(w string) bool {
	if thirdWords[w] {
		return true
	}
	for _, subs := range subcommands {
		if subs[w] {
			return true
		}
	}
	for r := range runnerFlags {
		if strings.Contains(" "+r+" ", " "+w+" ") {
			return true
		}
	}
	return false
}

func TestCorpusShellVerbs(t *testing.T) {
	scripts, argvs := corpusCommands(t)
	if len(scripts)+len(argvs) < 100 {
		t.Fatalf("only %d commands found in the corpus", len(scripts)+len(argvs))
	}
	counts := map[string]int{}
	empty, verify := 0, 0
	check := func(in cite.Line, s Shell) {
		checkVerb(t, in, s.Verb)
		words := strings.Fields(s.Verb)
		for _, w := range words[min(1, len(words)):] {
			if !vocabulary(w) {
				t.Errorf("the verb of %s has a word outside the vocabulary (%s)", in, cite.Bytes(w))
			}
		}
		if s.Verb == "" {
			empty++
		}
		if s.Verify {
			verify++
		}
		counts[s.Verb]++
	}
	for i, c := range scripts {
		check(cite.Named(fmt.Sprintf("corpus command %d", i), []byte(c)), ParseShell(c))
	}
	for i, a := range argvs {
		check(cite.Named(fmt.Sprintf("corpus argv %d", i), []byte(strings.Join(a, " "))), ParseArgv(a))
	}
	type kv struct {
		k string
		n int
	}
	var top []kv
	for k, n := range counts {
		top = append(top, kv{k, n})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].n > top[j].n || top[i].n == top[j].n && top[i].k < top[j].k })
	if len(top) > 25 {
		top = top[:25]
	}
	t.Logf("%d commands, %d distinct verbs, %d without verb, %d verify; top: %v",
		len(scripts)+len(argvs), len(counts), empty, verify, top)
	if empty*5 > len(scripts)+len(argvs) {
		t.Errorf("%d of %d corpus commands got no verb", empty, len(scripts)+len(argvs))
	}
}

// BenchmarkParseShellCorpus runs every command string of the corpus, with
// the simple-line split and with every line through the shell parser.
func BenchmarkParseShellCorpus(b *testing.B) {
	scripts, _ := corpusCommands(b)
	if len(scripts) == 0 {
		b.Skip("no commands")
	}
	for _, split := range []bool{true, false} {
		name := "split"
		if !split {
			name = "parser"
		}
		b.Run(name, func(b *testing.B) {
			simpleFastPath = split
			defer func() { simpleFastPath = true }()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ParseShell(scripts[i%len(scripts)])
			}
		})
	}
}
