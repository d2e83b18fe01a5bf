package agents

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/cursor"
)

var updateVersions = flag.Bool("update", false, "record the parsers' versions and the digests of their events in testdata/parser-versions.tsv")

// parserVersionsFile records, for each agent, the version of its parsers
// and a digest of the events they make of the fixtures (testdata/<agent>,
// watchers/<agent>/testdata) and of the corpus (../shared/corpus/<agent>).
var parserVersionsFile = filepath.Join("..", "..", "testdata", "parser-versions.tsv")

// parserFileTime is the modification time given to the copies the events
// are made from: Cursor transcripts take their times from their file.
var parserFileTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type parserRecord struct {
	version          int
	fixtures, corpus string
}

// TestParserVersions fails when the events an agent's parsers make of the
// same logs change while its Version stays: a daemon would then keep, for
// every log an earlier build read, what that build made of it (see
// daemon/reread.go). Raise the agent's Version, then record it with
// -update; -update refuses to record other events under the same version.
func TestParserVersions(t *testing.T) {
	recorded := readParserVersions(t)
	corpusDir := filepath.Join("..", "..", "..", "shared", "corpus")
	_, err := os.Stat(corpusDir)
	haveCorpus := err == nil
	if !haveCorpus {
		t.Log("no corpus at ../shared/corpus: the fixtures' events alone are compared")
	}
	now := map[string]parserRecord{}
	for _, a := range All {
		rec := parserRecord{version: a.Version}
		rec.fixtures = eventsDigest(t, a, filepath.Join("..", "..", "testdata", a.Name), filepath.Join("..", a.Name, "testdata"))
		if haveCorpus {
			rec.corpus = eventsDigest(t, a, filepath.Join(corpusDir, a.Name))
		} else {
			rec.corpus = recorded[a.Name].corpus
		}
		now[a.Name] = rec
		was, ok := recorded[a.Name]
		switch {
		case !ok:
			if !*updateVersions {
				t.Errorf("%s: no version recorded in %s; record it with -update", a.Name, parserVersionsFile)
			}
		case was.version == a.Version && (was.fixtures != rec.fixtures || was.corpus != rec.corpus):
			t.Errorf("%s: its parsers make other events of the same logs under version %d: raise Version in watchers/agents/agents.go, so that daemons read again the logs an earlier build read, then record it with -update",
				a.Name, a.Version)
		case was.version != a.Version && !*updateVersions:
			t.Errorf("%s: version %d, %d recorded; record it with -update", a.Name, a.Version, was.version)
		}
	}
	if *updateVersions && !t.Failed() {
		writeParserVersions(t, now)
	}
}

// eventsDigest digests the events a makes of every log of its under the
// directories (their names and the events, as the state keeps them).
func eventsDigest(t *testing.T, a Agent, dirs ...string) string {
	t.Helper()
	h := sha256.New()
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		copyDir := fixedTimeTree(t, dir)
		err := filepath.WalkDir(copyDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if d != nil && d.IsDir() && d.Name() == "fuzz" {
					return filepath.SkipDir // fuzzing seeds, not logs
				}
				return err
			}
			events, ok := eventsOf(t, a, path)
			if !ok {
				return nil
			}
			rel, _ := filepath.Rel(copyDir, path)
			fmt.Fprintf(h, "%s\n", filepath.ToSlash(rel))
			h.Write(event.AppendJSON(nil, events))
			h.Write([]byte{'\n'})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// eventsOf is what the daemon makes of a file as a's: a database read
// whole, a whole-document log, or a line log of a's; ok is false for a
// file that is none of them (a golden file, a sidecar).
func eventsOf(t *testing.T, a Agent, path string) ([]event.Event, bool) {
	if a.IsDB != nil && a.IsDB(path) {
		convs, err := a.ReadDB(context.Background(), path)
		return conversationEvents(t, path, convs, err, func(c watchers.Conversation) []event.Event { return c.Events }), true
	}
	if a.Name == "cursor" {
		// Cursor's databases, read by the daemon's own readers.
		read := cursor.ReadVSCDB
		switch {
		case strings.HasSuffix(path, ".vscdb"):
		case cursor.IsStoreDB(path):
			read = cursor.ReadStoreDB
		default:
			read = nil
		}
		if read != nil {
			convs, err := read(context.Background(), path)
			return conversationEvents(t, path, convs, err, func(c cursor.Conversation) []event.Event { return c.Events }), true
		}
	}
	first, err := FirstLine(path)
	if err != nil {
		return nil, false
	}
	if a.Whole && LooksLikeWholeJSON(first) {
		events, src, err := ParseWhole(path)
		if err != nil || src.Agent != "" && src.Agent != a.Name {
			return nil, false
		}
		return events, true
	}
	if !a.LooksLike(first) {
		return nil, false
	}
	src, err := a.Identify(path, first)
	if err != nil {
		return nil, false
	}
	src.Agent = a.Name
	events, _, err := ParseFile(path, a, src, watchers.DefaultMaxLine)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return events, true
}

// conversationEvents is the events of a database's conversations, in the
// order read.
func conversationEvents[C any](t *testing.T, path string, convs []C, err error, events func(C) []event.Event) []event.Event {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []event.Event
	for _, c := range convs {
		out = append(out, events(c)...)
	}
	return out
}

// fixedTimeTree copies a directory into a temporary one, every file with
// parserFileTime as its times, so that the events of file-timed logs do
// not depend on the checkout.
func fixedTimeTree(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		to := filepath.Join(out, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if err := copyFile(path, to); err != nil {
			return err
		}
		return os.Chtimes(to, parserFileTime, parserFileTime)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func readParserVersions(t *testing.T) map[string]parserRecord {
	t.Helper()
	out := map[string]parserRecord{}
	f, err := os.Open(parserVersionsFile)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 4 {
			t.Fatalf("%s: %q is not agent, version, fixtures, corpus", parserVersionsFile, line)
		}
		v, err := strconv.Atoi(fields[1])
		if err != nil {
			t.Fatalf("%s: %q: %v", parserVersionsFile, line, err)
		}
		out[fields[0]] = parserRecord{version: v, fixtures: fields[2], corpus: fields[3]}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeParserVersions(t *testing.T, recs map[string]parserRecord) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# The version of each agent's parsers and a digest of the events they make of the\n")
	b.WriteString("# fixtures and of the corpus (watchers/agents TestParserVersions; recorded with -update).\n")
	b.WriteString("# agent\tversion\tfixtures\tcorpus\n")
	names := make([]string, 0, len(recs))
	for n := range recs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		r := recs[n]
		fmt.Fprintf(&b, "%s\t%d\t%s\t%s\n", n, r.version, r.fixtures, r.corpus)
	}
	if err := os.WriteFile(parserVersionsFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
