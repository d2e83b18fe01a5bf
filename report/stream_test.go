package report

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// streamOf reads a Stream fed through a pipe, a chunk at a time, as
// standard input or a process substitution gives it: nothing can be read
// twice.
func streamOf(t *testing.T, body []byte) ([]*Map, []error) {
	t.Helper()
	r, w := io.Pipe()
	go func() {
		for chunk := range slices.Chunk(body, 1000) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Close()
	}()
	return Collect(t.Context(), Stream{Name: "standard input", R: r}, Filter{})
}

// TestStreamSource: whatever --maps reads from a file (a jsonl export, a
// bundle, one map, gzipped or not), a stream gives the same maps, told
// apart by its first bytes; what is not maps is an error, nothing is none.
func TestStreamSource(t *testing.T) {
	a, b := synthMap(1, 30), synthMap(2, 40)
	a.Session.AgentTool, b.Session.AgentTool = "claude-code", "codex"
	ids := func(maps []*Map) []string {
		var out []string
		for _, m := range maps {
			out = append(out, m.Session.ID)
		}
		slices.Sort(out)
		return out
	}
	both := ids([]*Map{a, b})

	lines := append(append(append(mapJSON(t, a), "\n\n"...), mapJSON(t, b)...), '\n')
	var tarred bytes.Buffer
	tw := tar.NewWriter(&tarred)
	for name, body := range map[string][]byte{"claude-code/a.json.gz": gzipped(mapJSON(t, a)), "codex/b.json": mapJSON(t, b),
		"manifest.json": []byte(`{"format":"agentmap-bundle/v1"}`)} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write(body)
	}
	tw.Close()
	var pretty bytes.Buffer
	json.Indent(&pretty, mapJSON(t, a), "", "  ")

	for name, c := range map[string]struct {
		body []byte
		want []string
	}{
		"jsonl":               {lines, both},
		"gzipped jsonl":       {gzipped(lines), both},
		"bundle":              {gzipped(tarred.Bytes()), both},
		"tar":                 {tarred.Bytes(), both},
		"one compact map":     {mapJSON(t, a), ids([]*Map{a})},
		"one map over lines":  {pretty.Bytes(), ids([]*Map{a})},
		"one gzipped map":     {gzipped(pretty.Bytes()), ids([]*Map{a})},
		"blank lines first":   {append([]byte("\n  \r\n"), lines...), both},
		"one line, no ending": {bytes.TrimSuffix(mapJSON(t, b), []byte("\n")), ids([]*Map{b})},
	} {
		maps, errs := streamOf(t, c.body)
		if len(errs) != 0 || !slices.Equal(ids(maps), c.want) {
			t.Errorf("%s: maps %v, errors %v; want %v", name, ids(maps), errs, c.want)
		}
	}

	for name, c := range map[string]struct {
		body []byte
		err  string
	}{
		"another export's lines": {[]byte(strings.Repeat(`{"event_type":"tool_call_started"}`+"\n", 50)), "line 1 is not a session map"},
		"text":                   {[]byte("hello\nworld\n"), "invalid JSON"},
		"a cut bundle":           {gzipped(tarred.Bytes())[:600], "bundle standard input"},
		"bad gzip":               {[]byte{0x1f, 0x8b, 0, 0}, "standard input"},
		"nothing":                {nil, "nothing was read"},
		"blank lines alone":      {[]byte("\n \n"), "nothing was read"},
	} {
		if maps, errs := streamOf(t, c.body); len(maps) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), c.err) {
			t.Errorf("%s: %d maps, errors %v; want one error with %q", name, len(maps), errs, c.err)
		}
	}

	// The same tar, not gzipped, named as a file, is a bundle too.
	plain := filepath.Join(t.TempDir(), "maps.tar")
	os.WriteFile(plain, tarred.Bytes(), 0o600)
	if maps, errs := Collect(t.Context(), Bundle(plain), Filter{}); len(errs) != 0 || !slices.Equal(ids(maps), both) {
		t.Errorf("a tar not gzipped: maps %v, errors %v", ids(maps), errs)
	}
}

// A stream whose writer sends nothing ends when the command is
// interrupted, not when the writer goes.
func TestStreamEndsWhenCancelled(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan []error, 1)
	go func() {
		_, errs := Collect(ctx, Stream{Name: "standard input", R: r}, Filter{})
		done <- errs
	}()
	select {
	case errs := <-done:
		if len(errs) == 0 || !errors.Is(errs[len(errs)-1], context.Canceled) {
			t.Errorf("errors %v, want the cancellation", errs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a silent stream goes on after the cancellation")
	}
}
