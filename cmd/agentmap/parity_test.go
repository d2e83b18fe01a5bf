package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `agentmap build` and `scan` make the same map of the same log, also of
// logs at the edges of routing: a first line longer than what is read to
// route it (a first prompt with a pasted image), and lines whose
// sessionId cannot be an id (the file name routes them, in both). A log
// that neither its lines nor its name route is refused by both, for the
// same reason, and no text of it is said.
func TestBuildAndScanMapEdgeLogsAlike(t *testing.T) {
	privateHome(t)
	root := t.TempDir()
	proj := filepath.Join(root, "projects", "-w-api")
	os.MkdirAll(proj, 0o700)
	base, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	const id = "0a1b2c3d-0000-4000-8000-000000000001"
	write := func(name string, data []byte) string {
		p := filepath.Join(proj, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := []string{
		write("0a1b2c3d-0000-4000-8000-0000000000a1.jsonl", longFirstPrompt(t, base, 5<<20)),
		write("notauuid.jsonl", bytes.ReplaceAll(base, []byte(id), []byte("x y z secret"))),
		write("overlong.jsonl", bytes.ReplaceAll(base, []byte(id), bytes.Repeat([]byte("s"), 300))),
	}
	bad := write("x y.jsonl", bytes.ReplaceAll(base, []byte(id), []byte("x y z secret")))

	out := filepath.Join(t.TempDir(), "maps") + "/"
	code, _, berr := run(t, append([]string{"build", "-o", out}, good...)...)
	if code != exitOK {
		t.Fatalf("build: exit %d: %s", code, berr)
	}
	built := contentHashes(t, out)
	data := filepath.Join(t.TempDir(), "data")
	code, _, serr := run(t, "scan", "--data-dir", data, "--root", "claude="+root)
	if code != exitOK {
		t.Fatalf("scan: exit %d: %s", code, serr)
	}
	scanned := contentHashes(t, filepath.Join(data, "maps"))
	want := []string{"0a1b2c3d-0000-4000-8000-0000000000a1.json.gz", "notauuid.json.gz", "overlong.json.gz"}
	if len(built) != len(want) || len(scanned) != len(want) {
		t.Fatalf("build made %v, scan %v; want %v\nbuild: %s\nscan: %s", keys(built), keys(scanned), want, berr, serr)
	}
	for _, name := range want {
		if built[name] == "" || built[name] != scanned[name] {
			t.Errorf("%s: build's content hash %q, scan's %q", name, built[name], scanned[name])
		}
	}

	const why = "no session id in file name or first line"
	code, _, berr = run(t, "build", "-o", t.TempDir()+"/", bad)
	if code != exitFailure || !strings.Contains(berr, why) {
		t.Errorf("build of a log routed by nothing: exit %d, %q; want the reason %q", code, berr, why)
	}
	if !strings.Contains(serr, why) || !strings.Contains(serr, "x y.jsonl") {
		t.Errorf("scan did not say why it passed over the log routed by nothing:\n%s", serr)
	}
	for what, s := range map[string]string{"build": berr, "scan": serr} {
		if strings.Contains(s, "secret") {
			t.Errorf("%s said text of a log:\n%s", what, s)
		}
	}
}

// longFirstPrompt is the fixture from its first prompt on, the prompt's
// text made n bytes long: a log whose first line is its first prompt, as
// when the user starts with a pasted image. The keys keep Claude Code's
// order (the record's type before its message).
func longFirstPrompt(t *testing.T, log []byte, n int) []byte {
	t.Helper()
	at := bytes.Index(log, []byte(`{"parentUuid":null`))
	if at < 0 {
		t.Fatal("fixture has no first prompt")
	}
	log = log[at:]
	key := []byte(`"content":`)
	start := bytes.Index(log, key) + len(key)
	dec := json.NewDecoder(bytes.NewReader(log[start:]))
	var text string
	if err := dec.Decode(&text); err != nil {
		t.Fatal(err)
	}
	end := start + int(dec.InputOffset())
	var b bytes.Buffer
	b.Write(log[:start])
	b.WriteString(`"` + strings.Repeat("A", n) + `"`)
	b.Write(log[end:])
	return b.Bytes()
}

// contentHashes reads the maps under dir: their contentHash by file name.
func contentHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json.gz") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte("secret")) {
			t.Errorf("%s holds text of its log", p)
		}
		var m struct {
			ContentHash string `json:"contentHash"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out[d.Name()] = m.ContentHash
		return nil
	})
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
