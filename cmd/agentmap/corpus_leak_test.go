package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/report"
	"github.com/agentmap/agentmap/state"
)

// minNeedles is the least number of needles an agent's corpus must yield
// for the audit to prove anything.
const minNeedles = 2000

// haystack is everything agentmap writes, each part named by where it is.
type haystack struct {
	buf   bytes.Buffer
	names []string
	ends  []int
}

// add appends one output; its JSON is read back to strings so that escapes
// cannot hide a needle.
func (h *haystack) add(name string, b []byte) {
	h.buf.Write(readable(b))
	h.buf.WriteString("\x00\x00")
	h.names = append(h.names, name)
	h.ends = append(h.ends, h.buf.Len())
}

func (h *haystack) where(off int) string {
	return h.names[sort.SearchInts(h.ends, off+1)]
}

// readable turns an output into searchable text: gzip and tar are
// unpacked, JSON documents and JSON lines become their strings (keys and
// values, JSON held in strings too), anything else stays as it is.
func readable(b []byte) []byte {
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err == nil {
			if raw, err := io.ReadAll(zr); err == nil {
				return readable(raw)
			}
		}
		return b
	}
	if len(b) > 262 && string(b[257:262]) == "ustar" {
		var out bytes.Buffer
		tr := tar.NewReader(bytes.NewReader(b))
		for {
			hdr, err := tr.Next()
			if err != nil {
				break
			}
			out.WriteString(hdr.Name)
			out.WriteByte(0)
			body, _ := io.ReadAll(tr)
			out.Write(readable(body))
			out.WriteByte(0)
		}
		return out.Bytes()
	}
	var out bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(b))
	n := 0
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			if n == 0 {
				return b
			}
			out.Write(b[dec.InputOffset():])
			break
		}
		n++
		jsonStrings(&out, v)
	}
	return out.Bytes()
}

func jsonStrings(out *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			out.WriteString(k)
			out.WriteByte(0)
			jsonStrings(out, c)
		}
	case []any:
		for _, c := range v {
			jsonStrings(out, c)
		}
	case string:
		if t := strings.TrimSpace(v); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
			var inner any
			if json.Unmarshal([]byte(t), &inner) == nil {
				jsonStrings(out, inner)
			}
		}
		out.WriteString(v)
		out.WriteByte(0)
	}
}

// TestCorpusLeaksNothing is the privacy audit of the whole corpus: the text
// of every log (see corpus_needles_test.go) must not occur in the maps
// `agentmap build` writes in the three path modes, in the state database,
// the maps and the log of a daemon that scanned the same logs, in an
// export of the daemon's store in each format, or in its report and usage
// tables.
func TestCorpusLeaksNothing(t *testing.T) {
	corpus := corpusDir(t)
	agents := []string{"claude", "codex", "cursor"}
	var hay haystack

	all := corpusNeedles(t, agents)

	// (1) The maps of `agentmap build`, in every path mode.
	built := 0
	for _, agent := range agents {
		var stderr bytes.Buffer
		sessions, _ := collect(context.Background(), corpusLogs(t, agent), "auto", &stderr)
		hay.add("build log ("+agent+")", stderr.Bytes())
		built += len(sessions)
		for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed} {
			opts := builder.Options{PathMode: mode, HashKey: []byte("0123456789abcdef0123456789abcdef"), Producer: "agentmap test"}
			for _, s := range sessions {
				m, err := buildMap(s, opts)
				if errors.Is(err, builder.ErrEmptySession) {
					continue // a session with no events has no map
				}
				if err != nil {
					t.Fatalf("%s %s: %v", agent, s.native, err)
				}
				gz, err := m.Gzip()
				if err != nil {
					t.Fatal(err)
				}
				hay.add(fmt.Sprintf("map of build (%s, %s, session %s)", agent, mode, s.native), gz)
			}
		}
	}

	// (2)-(3) A daemon's scan of the same logs laid out in a home.
	home := privateHome(t)
	roots := layoutCorpus(t, corpus, home, false)
	data := filepath.Join(t.TempDir(), "data")
	args := append([]string{"scan", "--data-dir", data, "--log-level", "debug"}, roots...)
	code, stdout, stderr := run(t, args...)
	if code != exitOK {
		t.Fatalf("scan: exit %d\n%s", code, stderr)
	}
	hay.add("daemon log", []byte(stdout+stderr))
	stored := 0
	filepath.WalkDir(daemon.MapsDir(data), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(data, p)
			hay.add("daemon map "+rel, b)
			stored++
		}
		return nil
	})
	// (5) The same logs with lines cut short or text in the wrong field: what the errors say, in the
	// logs of `agentmap build` and of a daemon, and what the daemon keeps.
	brokenHome := t.TempDir()
	brokenRoots := layoutCorpus(t, corpus, brokenHome, true)
	var brokenFiles []string
	filepath.WalkDir(brokenHome, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			brokenFiles = append(brokenFiles, p)
		}
		return nil
	})
	var buildErr bytes.Buffer
	collect(context.Background(), brokenFiles, "auto", &buildErr)
	hay.add("build log (cut lines)", buildErr.Bytes())
	brokenData := filepath.Join(t.TempDir(), "data")
	_, stdout, stderr = run(t, append([]string{"scan", "--data-dir", brokenData, "--log-level", "debug"}, brokenRoots...)...)
	hay.add("daemon log (cut lines)", []byte(stdout+stderr))
	if !strings.Contains(stderr, "line") {
		t.Errorf("the daemon reported no bad line of the cut logs")
	}
	t.Logf("cut logs: %d files, %d bytes of build errors, %d bytes of daemon log", len(brokenFiles), buildErr.Len(), len(stdout+stderr))
	filepath.WalkDir(daemon.MapsDir(brokenData), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			hay.add("daemon map (cut lines) "+filepath.Base(p), b)
		}
		return nil
	})
	for _, p := range readState(t, daemon.StatePath(brokenData)) {
		hay.add("state database (cut lines): "+p.where, p.data)
	}

	// The operator commands print what the store and the state hold.
	var ids []string
	for _, args := range [][]string{{"list"}, {"list", "--json"}, {"status"}, {"status", "--json"}} {
		code, stdout, stderr := run(t, append(args, "--data-dir", data)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		hay.add(strings.Join(args, " "), []byte(stdout+stderr))
		if len(args) == 2 && args[0] == "list" {
			var entries []struct{ Key string }
			if err := json.Unmarshal([]byte(stdout), &entries); err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				ids = append(ids, e.Key)
			}
		}
	}
	for _, id := range ids {
		for _, args := range [][]string{{"show", id}, {"show", "--json", id}, {"show", "--events", id}} {
			code, stdout, stderr := run(t, append(args, "--data-dir", data)...)
			if code != exitOK {
				t.Fatalf("%v: exit %d\n%s", args, code, stderr)
			}
			hay.add(args[0]+" "+args[len(args)-1], []byte(stdout+stderr))
		}
	}
	reportOutputs(t, data, ids[0], hay.add)
	if stored < built*9/10 {
		t.Fatalf("the daemon wrote %d maps of the %d sessions build finds: the layout misses logs", stored, built)
	}
	dbParts := readState(t, daemon.StatePath(data))
	events := 0
	for _, p := range dbParts {
		hay.add("state database: "+p.where, p.data)
		if strings.HasPrefix(p.where, "bucket events/") {
			events += bytes.Count(p.data, []byte("\x00k\x00")) // an event's kind, as readable writes its keys
		}
	}
	// Every stored event is searched as the text it is, not as the
	// compressed bytes it is kept in (where most would be references to
	// bytes before them).
	if events < stored*10 {
		t.Errorf("%d events read as text from the state database for %d sessions", events, stored)
	}

	// (4) Exports of the daemon's store, in every format, as stored and
	// re-rendered in the other path modes.
	for _, f := range export.Formats() {
		for _, mode := range []string{"", "dirs_only", "hashed"} {
			out := filepath.Join(t.TempDir(), "export"+f.Ext())
			args := []string{"export", "--format", string(f), "--data-dir", data, "--out", out}
			if mode != "" {
				args = append(args, "--path-mode", mode)
			}
			code, _, stderr := run(t, args...)
			if code != exitOK {
				t.Fatalf("export %s %s: exit %d\n%s", f, mode, code, stderr)
			}
			name := strings.TrimSpace("export " + string(f) + " " + mode)
			hay.add(name+" (log)", []byte(stderr))
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			hay.add(name, b)
		}
	}
	t.Logf("searched %d outputs (%d sessions built, %d maps from the daemon, %d parts of the state database), %d bytes of text",
		len(hay.names), built, stored, len(dbParts), hay.buf.Len())

	findLeaks(t, &hay, agents, all)
}

// checkNeedlesAreInTheirLogs proves the search can find what it looks for:
// a sample of the needles of the JSON and JSONL logs is looked up in the
// readable form of the log it came from, as outputs are read.
func checkNeedlesAreInTheirLogs(t *testing.T, agent string, needles map[string]origin) {
	t.Helper()
	byFile := map[string][]string{}
	i := 0
	for s, o := range needles {
		if i++; i%50 == 0 && !strings.HasSuffix(o.file, ".vscdb") && !strings.HasSuffix(o.file, ".db") {
			byFile[o.file] = append(byFile[o.file], s)
		}
	}
	checked, missed := 0, 0
	for file, sample := range byFile {
		raw, err := os.ReadFile(filepath.Join(corpusDir(t), agent, file))
		if err != nil {
			t.Fatal(err)
		}
		text := readable(raw)
		for _, s := range sample {
			checked++
			if !bytes.Contains(text, []byte(s)) {
				missed++
			}
		}
	}
	if checked < 20 || missed > 0 {
		t.Errorf("%s: %d of %d sampled needles not found in their own log: the search is blind", agent, missed, checked)
	}
}

// exporterWords is the text the exporters write whatever the maps say
// (titles and summaries made of fixed words and the map's names): the
// strings of an export, in every format, of maps built from our own
// fixtures. A needle that is one of their pieces proves nothing.
func exporterWords(t *testing.T) []byte {
	t.Helper()
	td := filepath.Join("..", "..", "testdata")
	dir := t.TempDir()
	args := []string{"build", "-o", dir,
		filepath.Join(td, "claude", "basic.jsonl"), filepath.Join(td, "claude", "canary.jsonl"),
		filepath.Join(td, "codex", "leak.jsonl"), filepath.Join(td, "cursor", "transcript.jsonl")}
	if code, _, stderr := run(t, args...); code != exitOK {
		t.Fatalf("build of the fixtures: exit %d\n%s", code, stderr)
	}
	maps, _ := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	var words bytes.Buffer
	for _, f := range export.Formats() {
		out := filepath.Join(dir, "export"+f.Ext())
		args := append([]string{"export", "--format", string(f), "--data-dir", dir, "--out", out}, maps...)
		if code, _, stderr := run(t, args...); code != exitOK {
			t.Fatalf("export %s of the fixtures: exit %d\n%s", f, code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		words.Write(readable(b))
		words.WriteByte(0)
	}
	for _, m := range maps {
		b, _ := os.ReadFile(m)
		words.Write(readable(b))
		words.WriteByte(0)
	}
	// The report's own page: its style sheet, script and fixed labels.
	page := filepath.Join(dir, "report.html")
	if code, _, stderr := run(t, "report", "--maps", dir, "-o", page); code != exitOK {
		t.Fatalf("report of the fixtures: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	words.Write(b)
	words.WriteByte(0)
	// And the heading of a page of one session of the local store, which
	// the fixtures' report, read from a directory, does not write.
	words.WriteString(describeScope(1, localStore, report.Filter{}))
	words.WriteByte(0)
	// The schemas name every key and enum value a map or an export may
	// hold.
	schemas, _ := filepath.Glob(filepath.Join(corpusDir(t), "..", "schemas", "*.json"))
	schemas = append(schemas, filepath.Join("..", "..", "builder", "schema", "agentplay-v1.schema.json"))
	for _, f := range schemas {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		words.Write(readable(b))
		words.WriteByte(0)
	}
	return words.Bytes()
}

// topField shortens a field path for the report.
func topField(f string) string {
	f = strings.TrimPrefix(f, ".")
	parts := strings.Split(f, ".")
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return strings.Join(parts, ".")
}

// layoutCorpus copies the corpus logs into the places each agent writes
// them under home (a temporary directory, never the repository), and
// returns the --root flags that point a daemon at them and at nothing else.
//
// broken lays out only the JSON and JSONL logs, with every third line cut
// in half, so that the parsers' error paths meet real text.
func layoutCorpus(t *testing.T, corpus, home string, broken bool) []string {
	t.Helper()
	put := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if broken {
			if strings.HasSuffix(from, ".vscdb") || strings.HasSuffix(from, ".db") {
				return
			}
			b = cutLines(b)
		}
		p := filepath.Join(home, filepath.FromSlash(to))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots := []string{"--root", "claude=" + filepath.Join(home, ".claude"),
		"--root", "codex=" + filepath.Join(home, ".codex"),
		"--root", "cursor=" + filepath.Join(home, ".cursor")}
	for i, f := range corpusLogs(t, "claude") {
		base := filepath.Base(f)
		if _, agentFile, ok := strings.Cut(base, "__subagents__"); ok {
			put(f, ".claude/projects/-w-app/"+firstSessionID(t, f)+"/subagents/"+agentFile)
			continue
		}
		// Claude names a log by its session id.
		to := ".claude/projects/-w-app/" + firstSessionID(t, f) + ".jsonl"
		if _, err := os.Stat(filepath.Join(home, to)); err == nil {
			to = fmt.Sprintf(".claude/projects/-w-app/f%02d.jsonl", i)
		}
		put(f, to)
	}
	for i, f := range corpusLogs(t, "codex") {
		name := filepath.Base(f)
		if _, after, ok := strings.Cut(name, "__"); ok && strings.HasPrefix(after, "rollout-") {
			name = after
		} else {
			name = fmt.Sprintf("rollout-2026-01-02T00-00-00-%08d-0000-4000-8000-000000000000.jsonl", i)
		}
		put(f, ".codex/sessions/2026/01/02/"+name)
	}
	for i, f := range corpusLogs(t, "cursor") {
		base := filepath.Base(f)
		switch {
		case strings.HasSuffix(base, ".jsonl"):
			u := fmt.Sprintf("%08d-1111-4111-8111-111111111111", i)
			put(f, ".cursor/projects/w-app/agent-transcripts/"+u+"/"+u+".jsonl")
		case strings.HasSuffix(base, "store.db"):
			put(f, fmt.Sprintf(".cursor/chats/0123abcd/%08d-0000-4000-8000-000000000000/store.db", i))
		case strings.Contains(base, "globalStorage"):
			app := fmt.Sprintf("cursor-app%02d", i)
			put(f, app+"/globalStorage/state.vscdb")
			roots = append(roots, "--root", "cursor-app="+filepath.Join(home, app))
		default:
			put(f, fmt.Sprintf("cursor-ws/workspaceStorage/ws%02d/state.vscdb", i))
		}
	}
	return append(roots, "--root", "cursor-app="+filepath.Join(home, "cursor-ws"))
}

// cutLines spoils a log for the parsers' error paths: of every three
// lines, one is cut in half, and one has the longest text it holds moved
// into its type and timestamp, which an error message might quote.
func cutLines(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		switch {
		case i%3 == 1 && len(l) > 2:
			lines[i] = append(l[:len(l)/2:len(l)/2], '\n')
		case i%3 == 2:
			var rec map[string]any
			if json.Unmarshal(l, &rec) != nil {
				continue
			}
			text := longestString(rec)
			for _, k := range []string{"type", "timestamp"} {
				if _, ok := rec[k]; ok {
					rec[k] = text
				}
			}
			if out, err := json.Marshal(rec); err == nil {
				lines[i] = append(out, '\n')
			}
		}
	}
	return bytes.Join(lines, nil)
}

func longestString(v any) string {
	best := ""
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			if s := longestString(c); len(s) > len(best) {
				best = s
			}
		}
	case []any:
		for _, c := range v {
			if s := longestString(c); len(s) > len(best) {
				best = s
			}
		}
	case string:
		best = v
	}
	return best
}

// firstSessionID reads the session id of a Claude subagent log, which
// names the folder it lives in.
func firstSessionID(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.SessionID != "" {
			return rec.SessionID
		}
	}
	t.Fatalf("%s: no session id", filepath.Base(path))
	return ""
}

type statePart struct {
	where string
	data  []byte
}

// readState reads every key and value of the state database, bucket by
// bucket. The parsers' carry-state keeps the absolute working directories
// and repository roots of a session (documented in the README); those
// strings are left out, the rest of it is searched like everything else.
func readState(t *testing.T, path string) []statePart {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var parts []statePart
	var walk func(name string, b *bolt.Bucket)
	walk = func(name string, b *bolt.Bucket) {
		var buf bytes.Buffer
		b.ForEach(func(k, v []byte) error {
			buf.Write(k)
			buf.WriteByte(0)
			if v == nil {
				walk(name+"/"+string(k), b.Bucket(k))
				return nil
			}
			// Without the state's seal (a checksum), and an event batch
			// decompressed: compressed, its text would not be searched.
			plain, ok := state.PlainValue(v)
			if !ok {
				t.Errorf("bucket %s: a compressed event batch does not decompress", bucketLabel(name))
			}
			v = plain
			if strings.HasPrefix(name, "carry") {
				v = withoutAbsolutePaths(v)
			}
			buf.Write(readable(v))
			buf.WriteByte(0)
			return nil
		})
		parts = append(parts, statePart{"bucket " + bucketLabel(name), buf.Bytes()})
	}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			walk(string(name), b)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return parts
}

// bucketLabel names a bucket for a message: nested buckets are keyed by
// session, which a message need not spell out.
func bucketLabel(name string) string {
	top, _, nested := strings.Cut(name, "/")
	if nested {
		return top + "/<session>"
	}
	return top
}

// withoutAbsolutePaths removes the absolute paths that a JSON carry-state
// keeps under "paths" (the path redactor's state: working directories and
// repository roots); everything else in it is searched.
func withoutAbsolutePaths(v []byte) []byte {
	var doc any
	if json.Unmarshal(v, &doc) != nil {
		return v
	}
	var strip func(x any, paths bool) any
	strip = func(x any, paths bool) any {
		switch x := x.(type) {
		case map[string]any:
			for k, c := range x {
				x[k] = strip(c, paths || k == "paths")
			}
		case []any:
			for i, c := range x {
				x[i] = strip(c, paths)
			}
		case string:
			if paths && (filepath.IsAbs(x) || strings.HasPrefix(x, "~") || (len(x) > 2 && x[1] == ':' && (x[2] == '\\' || x[2] == '/'))) {
				return ""
			}
		}
		return x
	}
	out, _ := json.Marshal(strip(doc, false))
	return out
}

// reportOutputs hands add what the report (the page, and the data it
// carries inflated: the overview and the page of session) and the usage
// tables of a store print, for a privacy audit to search.
func reportOutputs(t *testing.T, data, session string, add func(string, []byte)) {
	t.Helper()
	reportFile := filepath.Join(t.TempDir(), "report.html")
	if code, _, stderr := run(t, "report", "--data-dir", data, "-o", reportFile); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	add("report", page)
	docs, err := report.Unpack(page)
	if err != nil || len(docs) < 2 {
		t.Fatalf("report data: %d documents, %v", len(docs), err)
	}
	for i, d := range docs {
		add(fmt.Sprintf("report data %d", i), d)
	}
	for _, args := range [][]string{{"usage"}, {"usage", "session", "--breakdown"}, {"usage", "model", "--json"}, {"report", "-o", "-", "--session", session}} {
		code, stdout, stderr := run(t, append(args, "--data-dir", data)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		add(strings.Join(args, " "), []byte(stdout+stderr))
		if args[0] == "report" {
			docs, _ := report.Unpack([]byte(stdout))
			if len(docs) == 0 {
				t.Errorf("report --session %s carries no data", session)
			}
			for i, d := range docs {
				add(fmt.Sprintf("session report data %d", i), d)
			}
		}
	}
}
