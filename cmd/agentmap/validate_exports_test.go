package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export/mapfile"
)

// validate checks what export writes: every map of a bundle, of a jsonl
// export, and of a bundle unpacked (its manifest.json is no map), and
// says which of them fails.
func TestValidateTakesWhatExportWrites(t *testing.T) {
	dir := t.TempDir()
	mapFile := filepath.Join(dir, "m.json.gz")
	if code, _, errb := run(t, "build", "-o", mapFile, fixture); code != exitOK {
		t.Fatalf("build: %s", errb)
	}
	gz, _ := os.ReadFile(mapFile)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	plain.ReadFrom(zr)
	manifest := []byte(`{"format":"agentmap-bundle/v1","sessions":1}`)

	var bundle bytes.Buffer
	gw := gzip.NewWriter(&bundle)
	tw := tar.NewWriter(gw)
	for name, body := range map[string][]byte{"manifest.json": manifest, "claude/a.json.gz": gz, "claude/bad.json": []byte(`{"schema":"agentplay/v1"}`)} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write(body)
	}
	tw.Close()
	gw.Close()
	bundlePath := filepath.Join(dir, "maps.tar.gz")
	os.WriteFile(bundlePath, bundle.Bytes(), 0o600)
	lines := filepath.Join(dir, "shared.jsonl")
	os.WriteFile(lines, append(bytes.TrimSpace(plain.Bytes()), '\n'), 0o600)
	unpacked := filepath.Join(dir, "unpacked")
	os.MkdirAll(filepath.Join(unpacked, "claude"), 0o700)
	os.WriteFile(filepath.Join(unpacked, "manifest.json"), manifest, 0o600)
	os.WriteFile(filepath.Join(unpacked, "claude", "a.json.gz"), gz, 0o600)

	code, out, errb := run(t, "validate", lines, unpacked)
	if code != exitOK || !strings.Contains(out, lines+":1: ok") || !strings.Contains(out, "a.json.gz: ok") || strings.Contains(out+errb, "manifest") {
		t.Errorf("a jsonl export and an unpacked bundle: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb = run(t, "validate", bundlePath)
	if code != exitFailure || !strings.Contains(out, bundlePath+":claude/a.json.gz: ok") || !strings.Contains(out, bundlePath+":claude/bad.json: ") ||
		!strings.Contains(errb, "1 of 2 files failed") {
		t.Errorf("a bundle with a bad map: exit %d\n%s%s", code, out, errb)
	}
}

// list names a map file it cannot read, as usage and report do, and exits
// 1: it does not leave the session out in silence.
func TestListNamesAnUnreadableMap(t *testing.T) {
	data := t.TempDir()
	good := filepath.Join(data, "maps", "claude", "2026", "05", "good.json.gz")
	bad := filepath.Join(data, "maps", "claude", "2026", "05", "bad.json.gz")
	os.MkdirAll(filepath.Dir(good), 0o700)
	if code, _, errb := run(t, "build", "-o", good, fixture); code != exitOK {
		t.Fatalf("build: %s", errb)
	}
	b, _ := os.ReadFile(good)
	os.WriteFile(bad, b[:100], 0o600) // cut short
	code, out, errb := run(t, "list", "--data-dir", data)
	if code != exitFailure || !strings.Contains(out, "map unreadable") || !strings.Contains(errb, "1 map file could not be read") || !strings.Contains(errb, bad) {
		t.Errorf("list: exit %d\n%s%s", code, out, errb)
	}
	code, out, _ = run(t, "list", "--json", "--data-dir", data)
	if code != exitFailure || !strings.Contains(out, `"unreadable": true`) || strings.Count(out, `"key"`) != 2 {
		t.Errorf("list --json: exit %d\n%s", code, out)
	}
}

// A session some of whose requests recorded no usage is marked in list as
// show marks it, with a note: its figures are the others'.
func TestListMarksPartlyRecordedUsage(t *testing.T) {
	var out strings.Builder
	writeList(&out, []daemon.Entry{
		{Key: "cursor/a", Agent: "cursor", ID: "a", Requests: 9, NoUsage: 8, Tokens: 16_000, CostUSD: 0.003},
		{Key: "claude/b", Agent: "claude", ID: "b", Requests: 3, Tokens: 1_000, CostUSD: 0.2},
		{Key: "cursor/c", Agent: "cursor", ID: "c", Requests: 2, NoUsage: 2},
	}, nil)
	got := out.String()
	if !strings.Contains(got, "16k*") || !strings.Contains(got, "<$0.01*") || strings.Contains(got, "1000*") ||
		!strings.Contains(got, "* 1 session some of whose model requests recorded no token usage") || !strings.Contains(got, "not recorded") {
		t.Errorf("list:\n%s", got)
	}
}

// build given one log under four names (itself, a hard link, a symbolic
// link, its name through a link to its directory) reads it once: the map
// is the one of the log alone.
func TestBuildReadsALogUnderTwoNamesOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links")
	}
	dir := t.TempDir()
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "a", "basic.jsonl")
	os.MkdirAll(filepath.Dir(first), 0o700)
	os.MkdirAll(filepath.Join(dir, "b"), 0o700)
	os.MkdirAll(filepath.Join(dir, "c"), 0o700)
	os.WriteFile(first, raw, 0o600)
	if err := os.Link(first, filepath.Join(dir, "b", "basic.jsonl")); err != nil {
		t.Skipf("hard link: %v", err)
	}
	if err := os.Symlink(first, filepath.Join(dir, "c", "basic.jsonl")); err != nil {
		t.Skipf("symbolic link: %v", err)
	}
	os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "d")) // a link to its directory
	one, all := filepath.Join(dir, "one.json.gz"), filepath.Join(dir, "all.json.gz")
	if code, _, errb := run(t, "build", "-o", one, first); code != exitOK {
		t.Fatalf("build: %s", errb)
	}
	if code, _, errb := run(t, "build", "-o", all, filepath.Join(dir, "c", "basic.jsonl"), filepath.Join(dir, "b", "basic.jsonl"), filepath.Join(dir, "d", "basic.jsonl"), first); code != exitOK {
		t.Fatalf("build of three names: %s", errb)
	}
	a, _ := mapfile.ReadFile(one)
	b, _ := mapfile.ReadFile(all)
	if a == nil || b == nil || a.Map.Totals.Calls != b.Map.Totals.Calls || a.Map.Totals.Tokens != b.Map.Totals.Tokens || a.Map.Totals.UserTurns != b.Map.Totals.UserTurns {
		t.Errorf("one name: %+v\nthree names: %+v", a, b)
	}
}

// A map no record names, whose file is named otherwise than its session (a
// map renamed, copied in), is found by show by the id list gives it.
func TestShowFindsARenamedMap(t *testing.T) {
	data := t.TempDir()
	p := filepath.Join(data, "maps", "claude", "2026", "05", "renamed-map.json.gz")
	os.MkdirAll(filepath.Dir(p), 0o700)
	if code, _, errb := run(t, "build", "-o", p, fixture); code != exitOK {
		t.Fatalf("build: %s", errb)
	}
	doc, err := mapfile.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	id := doc.Map.Session.NativeID()
	if code, out, _ := run(t, "list", "--data-dir", data); code != exitOK || !strings.Contains(out, id) {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	for _, name := range []string{id, id[:6], "claude/" + id, "claude-code/" + id[:6]} {
		if code, out, errb := run(t, "show", name, "--data-dir", data); code != exitOK || !strings.Contains(out, id) {
			t.Errorf("show %s: exit %d\n%s%s", name, code, out, errb)
		}
	}
}
