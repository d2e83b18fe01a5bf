package export_test

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/redact"
	. "github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/exportcheck"
	"github.com/agentmap/agentmap/export/mapfile"
)

var update = flag.Bool("update", false, "rewrite the golden exports in testdata/export")

const testDevice = "0190f3a2-7b4c-7d10-9e2f-3a4b5c6d7e8f"

var testNow = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

func testOptions(mode redact.Mode) Options {
	return Options{PathMode: mode, HashKey: []byte("another-key"), DeviceID: testDevice, FirstSeq: 1,
		Producer: "agentmap test", Now: testNow}
}

func schemas(t *testing.T) *exportcheck.Schemas {
	t.Helper()
	s, err := exportcheck.LoadSchemas(filepath.Join("..", "..", "shared", "schemas"))
	if os.IsNotExist(err) {
		t.Skip("published schemas not available: skipping")
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func exportDocs(t *testing.T, f Format, o Options, docs ...*mapfile.Doc) ([]byte, Result) {
	t.Helper()
	var buf bytes.Buffer
	x, err := New(f, &buf, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := x.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	res, err := x.Close()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), res
}

// TestLeak exports the canary fixture in every format and path mode: no
// canary, home path or absolute path may appear, and every export passes
// its schema and its tool's rules.
func TestLeak(t *testing.T) {
	s := schemas(t)
	for _, f := range Formats() {
		for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed} {
			t.Run(string(f)+"/"+string(mode), func(t *testing.T) {
				out, res := exportDocs(t, f, testOptions(mode), fixtureDoc(t, redact.ModeRelative))
				if res.Sessions != 1 {
					t.Fatalf("%d sessions", res.Sessions)
				}
				forbidden := canaries
				if f == Bundle || f == JSONL {
					// Whole maps keep srcUuid, the format page's opaque
					// record id; the other formats drop it.
					forbidden = mapCanaries
				}
				if probs := s.Check(f, out, forbidden); len(probs) > 0 {
					t.Fatal(strings.Join(probs, "\n"))
				}
				if f == AttemptDB && bytes.Contains(out, []byte("home/Users")) {
					t.Error("a path through home/Users reached AttemptDB attrs")
				}
			})
		}
	}
}

// TestCheckCatchesLeaks makes sure the leak test can fail: a canary, a
// home path and an absolute path planted in exports are all reported.
func TestCheckCatchesLeaks(t *testing.T) {
	s := schemas(t)
	out, _ := exportDocs(t, AgentScope, testOptions(""), fixtureDoc(t, redact.ModeRelative))
	for _, plant := range []string{"CANARY_MSGID9", "/home/alice/shop", "C:\\Users\\alice", "~/secret/plan.md"} {
		bad := bytes.Replace(out, []byte(`"branch":"unknown"`), []byte(`"branch":`+quote(plant)), 1)
		if probs := s.Check(AgentScope, bad, []string{"CANARY_MSGID9"}); len(probs) == 0 {
			t.Errorf("planted %q not reported", plant)
		}
	}
}

// The AttemptDB checks refuse another namespace's attrs and a home path in
// any string, not only in attrs.
func TestCheckCatchesAttemptDBLeaks(t *testing.T) {
	s := schemas(t)
	out, _ := exportDocs(t, AttemptDB, testOptions(""), fixtureDoc(t, redact.ModeRelative))
	for _, plant := range [][2]string{
		{`"x_agentmap_kind":`, `"x_codex_kind":`},
		{`"provider_session_id":"fixture-1"`, `"provider_session_id":"fixture-1","x_agentmap_cwd":"/home/alice/shop"`},
		{`"root":"shop"`, `"root":"/Users/alice/shop"`},
	} {
		bad := bytes.Replace(out, []byte(plant[0]), []byte(plant[1]), 1)
		if bytes.Equal(bad, out) {
			t.Fatalf("plant %q did not apply", plant[1])
		}
		if probs := s.Check(AttemptDB, bad, nil); len(probs) == 0 {
			t.Errorf("planted %q not reported", plant[1])
		}
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// TestGolden pins each format's output for the fixture.
func TestGolden(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			out, _ := exportDocs(t, f, testOptions(""), fixtureDoc(t, redact.ModeRelative))
			if f == Bundle {
				out = bundleListing(t, out)
			}
			path := filepath.Join("..", "testdata", "export", "fixture-1."+string(f)+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("%s export differs from %s (run with -update after checking)", f, path)
			}
		})
	}
}

// bundleListing is the bundle's manifest (archives hold gzip bytes a
// golden file cannot show).
func bundleListing(t *testing.T, out []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(raw, []byte(`{`+"\n"+`  "format"`))
	if i < 0 {
		t.Fatal("no manifest in the bundle")
	}
	return bytes.TrimRight(raw[i:], "\x00")
}

// TestDuplicateSessions: a session given twice is exported once.
func TestDuplicateSessions(t *testing.T) {
	d := fixtureDoc(t, redact.ModeRelative)
	out, res := exportDocs(t, AttemptDB, testOptions(""), d, d)
	if res.Sessions != 1 || res.Duplicates != 1 {
		t.Fatalf("sessions %d duplicates %d", res.Sessions, res.Duplicates)
	}
	if n := uint64(bytes.Count(out, []byte("\n"))); res.NextSeq != 1+n {
		t.Errorf("next seq %d after %d events from 1", res.NextSeq, n)
	}
}

// TestRerenderRefusesHashedMaps: only the relative form can be rendered
// again; a map already hashed stays out of a dirs_only export.
func TestRerenderRefusesHashedMaps(t *testing.T) {
	d := fixtureDoc(t, redact.ModeHashed)
	x, err := New(JSONL, io.Discard, testOptions(redact.ModeDirsOnly))
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Add(d); err == nil {
		t.Error("a hashed map was re-rendered")
	}
	// The same mode, or relative, passes the map through unchanged.
	out, _ := exportDocs(t, JSONL, testOptions(""), d)
	if !bytes.Equal(bytes.TrimSpace(out), d.Canonical) {
		t.Error("relative export changed a hashed map")
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats() {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%s) = %v, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("csv"); err == nil {
		t.Error("csv accepted")
	}
}
