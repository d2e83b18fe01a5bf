package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/internal/cite"
	"github.com/agentmap/agentmap/watchers"
)

// corpusDir is ../shared/corpus/claude beside the module root, where the
// real-world logs live; tests skip when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir := corpusDirIfPresent()
	if dir == "" {
		t.Skip("corpus not present")
	}
	return dir
}

func corpusDirIfPresent() string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(root, "..", "shared", "corpus", "claude")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

func corpusFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(corpusDir(t), "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatal("no corpus transcripts")
	}
	sort.Strings(files)
	return files
}

// eachLine calls fn with every line of a file, streaming.
func eachLine(t testing.TB, path string, fn func(line []byte)) {
	t.Helper()
	eachCited(t, path, func(l cite.Line) { fn(l.B) })
}

// eachCited is eachLine with where each line is, for failure messages
// that name a line without quoting it.
func eachCited(t testing.TB, path string, fn func(line cite.Line)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var off int64
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			fn(cite.At(path, n, off, line))
		}
		off += int64(len(line))
		if err != nil {
			return
		}
	}
}

func firstLine(t testing.TB, path string) []byte {
	var first []byte
	eachLine(t, path, func(line []byte) {
		if first == nil {
			first = append([]byte(nil), line...)
		}
	})
	return first
}

// parseFile parses a whole file with one parser.
func parseFile(t testing.TB, path string) (watchers.Source, []event.Event, int) {
	t.Helper()
	src, err := Identify(path, firstLine(t, path))
	if err != nil {
		t.Fatalf("%s: identify: %v", filepath.Base(path), err)
	}
	p := NewParser(src)
	var out []event.Event
	errs := 0
	eachLine(t, path, func(line []byte) {
		var err error
		out, err = p.Line(line, out)
		if err != nil {
			errs++
		}
	})
	return src, out, errs
}

func TestCorpusParses(t *testing.T) {
	unknown := map[string]int{}
	for _, path := range corpusFiles(t) {
		name := filepath.Base(path)
		src, events, errs := parseFile(t, path)
		kinds := map[event.Kind]int{}
		for i, e := range events {
			kinds[e.Kind]++
			if !inFileLane(events, i, src) {
				t.Errorf("%s: event in lane %q, file routed to %q", name, e.Agent, src.Lane)
			}
		}
		t.Logf("%s: session %s lane %q: %d events %v, %d bad lines", name, src.Session, src.Lane, len(events), kinds, errs)
		if errs > 0 {
			t.Errorf("%s: %d lines failed to parse", name, errs)
		}
		eachLine(t, path, func(line []byte) {
			var head struct {
				Type       string `json:"type"`
				Subtype    string `json:"subtype"`
				Attachment struct {
					Type string `json:"type"`
				} `json:"attachment"`
				Data struct {
					Type string `json:"type"`
				} `json:"data"`
			}
			if json.Unmarshal(line, &head) != nil {
				return
			}
			known := knownType(head.Type)
			switch head.Type {
			case "system":
				_, known = systemSubtypes[head.Subtype]
			case "attachment":
				_, known = attachmentTypes[head.Attachment.Type]
			case "progress":
				_, known = progressTypes[head.Data.Type]
			}
			if !known {
				unknown[head.Type+"/"+head.Subtype+head.Attachment.Type+head.Data.Type]++
			}
		})
		if strings.Contains(name, "acompact") {
			// Only the billed request that wrote the summary, as a
			// side request of the main lane.
			for _, e := range events {
				if e.Kind != event.KindLLM || e.LLM.Side != "compaction" || e.Agent != "" || e.LLM.Usage() == 0 {
					t.Errorf("%s: compaction transcript yielded a %s event (lane %q)", name, e.Kind, e.Agent)
				}
			}
			if len(events) == 0 {
				t.Errorf("%s: no compaction request", name)
			}
		}
	}
	if len(unknown) > 0 {
		t.Errorf("record types without a decision: %v", unknown)
	}
}

// TestCorpusLooksLike: every Claude transcript is recognised from its first
// line, and no Codex or Cursor log, nor Claude's session registry record.
func TestCorpusLooksLike(t *testing.T) {
	dir := corpusDir(t)
	for _, path := range corpusFiles(t) {
		if !LooksLike(firstLine(t, path)) {
			t.Errorf("%s: not recognised", filepath.Base(path))
		}
	}
	others, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, agent := range []string{"codex", "cursor"} {
		more, _ := filepath.Glob(filepath.Join(dir, "..", agent, "*.jsonl"))
		others = append(others, more...)
	}
	if len(others) == 0 {
		t.Skip("no other logs to tell apart")
	}
	for _, path := range others {
		if LooksLike(firstLine(t, path)) {
			t.Errorf("%s: taken for a Claude transcript", filepath.Base(path))
		}
	}
	t.Logf("%d other logs told apart", len(others))
}
