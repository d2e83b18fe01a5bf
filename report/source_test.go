package report

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func mapJSON(t testing.TB, m *Map) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeRefusesWhatIsNotAMap with an error that quotes nothing of the
// input.
func TestDecodeRefusesWhatIsNotAMap(t *testing.T) {
	const secret = "SECRET-CANARY-TEXT"
	for name, in := range map[string][]byte{
		"garbage":      []byte("not json " + secret),
		"other json":   []byte(`{"schema":"x","note":"` + secret + `"}`),
		"no id":        []byte(`{"schema":"agentplay/v1","session":{"agentTool":"` + secret + `"}}`),
		"wrong type":   []byte(`{"schema":"agentplay/v1","session":{"id":5},"x":"` + secret + `"}`),
		"cut gzip":     gzipped([]byte(`{"schema":"agentplay/v1","session":{"id":"` + secret + `"}}`))[:20],
		"cut json":     []byte(`{"schema":"agentplay/v1","session":{"id":"` + secret),
		"bad gzip hdr": {0x1f, 0x8b, 0, 0},
	} {
		_, err := Decode(bytes.NewReader(in))
		if err == nil {
			t.Errorf("%s: decoded", name)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error quotes the input: %v", name, err)
		}
	}
}

// TestSources: a directory (with a corrupt map and an unrelated JSON file
// beside the maps) and a bundle yield the same maps; the filter applies.
func TestSources(t *testing.T) {
	dir := t.TempDir()
	a, b := synthMap(1, 30), synthMap(2, 40)
	a.Session.AgentTool, b.Session.AgentTool = "claude-code", "codex"
	a.Repos[0].Name, b.Repos[0].Name = "alpha-api", "beta-web"
	a.Session.StartedAt = "2026-02-01T10:00:00Z"
	b.Session.StartedAt = "2026-03-01T10:00:00Z"
	a.Session.Outcome, b.Session.Outcome = "completed", "verified"
	os.MkdirAll(filepath.Join(dir, "claude", "2026"), 0o700)
	os.WriteFile(filepath.Join(dir, "claude", "2026", "a.json.gz"), gzipped(mapJSON(t, a)), 0o600)
	os.WriteFile(filepath.Join(dir, "b.json"), mapJSON(t, b), 0o600)
	os.WriteFile(filepath.Join(dir, "export.json"), []byte(`{"format":"something else"}`), 0o600)
	os.WriteFile(filepath.Join(dir, ".tmp-1.json.gz"), []byte("half a map"), 0o600)
	os.WriteFile(filepath.Join(dir, "broken.json.gz"), []byte("not gzip"), 0o600)

	maps, errs := Collect(t.Context(), Dir(dir), Filter{})
	if len(maps) != 2 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "broken.json.gz") {
		t.Fatalf("dir: %d maps, errors %v", len(maps), errs)
	}
	for name, f := range map[string]Filter{
		"agent":   {Agent: "claude"},
		"since":   {Since: time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC)},
		"until":   {Until: time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC)},
		"repo":    {Repo: "BETA*"},
		"session": {Session: "codex/synthetic-0000000"},
		"outcome": {Outcome: "Verified"},
	} {
		got, _ := Collect(t.Context(), Dir(dir), f)
		want := a
		if name == "since" || name == "session" || name == "repo" || name == "outcome" {
			want = b
		}
		if len(got) != 1 || got[0].Session.ID != want.Session.ID {
			t.Errorf("filter %s: %d maps", name, len(got))
		}
	}

	// A store not created yet holds no maps; it is not an error.
	if got, errs := Collect(t.Context(), Dir(filepath.Join(dir, "not-yet")), Filter{}); len(got) != 0 || len(errs) != 0 {
		t.Errorf("missing store: %d maps, errors %v", len(got), errs)
	}

	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range map[string][]byte{"claude-code/a.json.gz": gzipped(mapJSON(t, a)), "codex/b.json.gz": gzipped(mapJSON(t, b)),
		"manifest.json": []byte(`{"format":"agentmap-bundle/v1"}`)} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write(body)
	}
	tw.Close()
	zw.Close()
	bundle := filepath.Join(t.TempDir(), "maps.tar.gz")
	os.WriteFile(bundle, buf.Bytes(), 0o600)
	maps, errs = Collect(t.Context(), Bundle(bundle), Filter{})
	if len(maps) != 2 || len(errs) != 0 {
		t.Errorf("bundle: %d maps, errors %v", len(maps), errs)
	}
	os.WriteFile(bundle, buf.Bytes()[:buf.Len()/2], 0o600)
	if _, errs = Collect(t.Context(), Bundle(bundle), Filter{}); len(errs) == 0 {
		t.Error("a cut bundle reads without an error")
	}
}

// TestLinesSource: maps one a line (a jsonl export), gzipped or not, yield
// the maps; a blank line is passed over, a damaged line is its own error;
// a file whose first line is not a map (another export's events) is one
// error, not one per line; a line longer than a map may be is refused.
func TestLinesSource(t *testing.T) {
	a, b := synthMap(1, 30), synthMap(2, 40)
	a.Session.AgentTool, b.Session.AgentTool = "claude-code", "codex"
	dir := t.TempDir()
	lines := append(append(append(mapJSON(t, a), "\n\n"...), mapJSON(t, b)...), '\n')
	for name, body := range map[string][]byte{"maps.jsonl": lines, "maps.jsonl.gz": gzipped(lines), "maps.json": lines} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, body, 0o600)
		maps, errs := Collect(t.Context(), Lines(p), Filter{Agent: "codex"})
		if len(maps) != 1 || len(errs) != 0 || maps[0].Session.ID != b.Session.ID {
			t.Errorf("%s: %d maps, errors %v", name, len(maps), errs)
		}
		if !IsLines(p) {
			t.Errorf("%s is not taken for maps one a line", name)
		}
	}
	single := filepath.Join(dir, "one.json")
	os.WriteFile(single, append(mapJSON(t, a), '\n'), 0o600)
	if IsLines(single) {
		t.Error("a single map file is taken for maps one a line")
	}

	damaged := filepath.Join(dir, "damaged.jsonl")
	os.WriteFile(damaged, append(append(mapJSON(t, a), "\n{\"schema\":\"agentplay/v1\",\"sess\n"...), mapJSON(t, b)...), 0o600)
	if maps, errs := Collect(t.Context(), Lines(damaged), Filter{}); len(maps) != 2 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "damaged.jsonl:2") {
		t.Errorf("a damaged line: %d maps, errors %v", len(maps), errs)
	}

	events := filepath.Join(dir, "events.jsonl")
	os.WriteFile(events, []byte(strings.Repeat(`{"event_type":"tool_call_started","session_id":"x"}`+"\n", 500)), 0o600)
	if maps, errs := Collect(t.Context(), Lines(events), Filter{}); len(maps) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 1 is not a session map") {
		t.Errorf("another export's lines: %d maps, errors %v", len(maps), errs)
	}

	defer func(n int) { maxMapLine = n }(maxMapLine)
	maxMapLine = 1 << 16
	long := filepath.Join(dir, "long.jsonl")
	os.WriteFile(long, append(mapJSON(t, a)[:20], bytes.Repeat([]byte("x"), maxMapLine+10)...), 0o600)
	if maps, errs := Collect(t.Context(), Lines(long), Filter{}); len(maps) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "longer than") {
		t.Errorf("a line longer than a map: %d maps, errors %v", len(maps), errs)
	}
}

// FuzzDecode: any input is a map or an error, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema":"agentplay/v1","session":{"id":"local:codex:x"},"events":[{"seq":0,"t":0,"kind":"llm"}]}`))
	f.Add(gzipped([]byte(`{"schema":"agentplay/v1","session":{"id":"x"}}`)))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Decode(bytes.NewReader(in))
		if err == nil {
			var out bytes.Buffer
			if err := Write(&out, []*Map{m}, Options{}); err != nil {
				t.Fatal(err)
			}
			WriteEvents(&out, m)
			Usage([]*Map{m}, Daily, time.UTC)
		}
	})
}

// The maps agentmap writes are all read by mapfile.DecodeJSON, as
// json.Unmarshal reads them: none of the corpus's is left to encoding/json,
// whose reading was most of the time of a command over a whole store.
func TestCorpusMapsDecodeWithoutEncodingJSON(t *testing.T) {
	bin, err := agentmapBinary()
	if err != nil {
		t.Skipf("no agentmap binary: %v", err)
	}
	dir := corpusMaps(t, bin)
	n := 0
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			return err
		}
		got, ok := mapfile.DecodeJSON(raw)
		if !ok {
			t.Errorf("%s: left to encoding/json", filepath.Base(p))
			return nil
		}
		var want Map
		if err := json.Unmarshal(raw, &want); err != nil {
			return err
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: decoded otherwise than by json.Unmarshal", filepath.Base(p))
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("%d maps of the corpus read: the test checks less than it says", n)
	}
}
