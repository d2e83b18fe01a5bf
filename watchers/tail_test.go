package watchers

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tailAll follows path from c to its current end, as the daemon does on one
// wake-up, and returns the lines seen and the advanced cursor.
func tailAll(t *testing.T, path string, c Cursor, maxLine int) ([]string, Cursor, TailStats) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, fi, err := IdentifyOpen(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(f, id, fi.Size(), c); err != nil {
		t.Fatalf("verify: %v", err)
	}
	var lines []string
	st, err := TailLines(f, c.Offset, fi.Size(), maxLine, func(l []byte, end int64) error {
		lines = append(lines, string(l))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err = Advance(f, id, fi.Size(), c, st.End)
	if err != nil {
		t.Fatal(err)
	}
	return lines, c, st
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Whatever the chunking of the writes, tailing yields exactly the lines of
// one ReadLines pass over the complete file.
func TestTailChunkedEqualsWhole(t *testing.T) {
	var content bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 400; i++ {
		n := rng.IntN(300)
		if i%50 == 7 {
			n = 5000 // over the cap below
		}
		content.WriteString(strings.Repeat(string(rune('a'+i%26)), n))
		if i%9 == 0 {
			content.WriteString("\r")
		}
		content.WriteString("\n")
	}
	const maxLine = 1000
	var want []string
	ws, err := ReadLines(bytes.NewReader(content.Bytes()), maxLine, false, func(l []byte) error {
		want = append(want, string(l))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(0); seed < 5; seed++ {
		path := filepath.Join(t.TempDir(), "log.jsonl")
		rng := rand.New(rand.NewPCG(seed, 9))
		var got []string
		var c Cursor
		oversized := 0
		rest := content.Bytes()
		for len(rest) > 0 {
			n := min(len(rest), 1+rng.IntN(2000))
			appendFile(t, path, rest[:n])
			rest = rest[n:]
			lines, c2, st := tailAll(t, path, c, maxLine)
			got, c, oversized = append(got, lines...), c2, oversized+st.Oversized
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d: %d lines, want %d", seed, len(got), len(want))
		}
		if oversized != ws.Oversized || oversized == 0 {
			t.Fatalf("seed %d: %d oversized, want %d", seed, oversized, ws.Oversized)
		}
		if c.Offset != int64(content.Len()) {
			t.Fatalf("cursor %d, want %d", c.Offset, content.Len())
		}
	}
}

func TestPartialLineWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	appendFile(t, path, []byte("{\"a\":1}\n{\"b\":"))
	lines, c, st := tailAll(t, path, Cursor{}, 0)
	if len(lines) != 1 || c.Offset != 8 || st.Partial != 5 {
		t.Fatalf("lines %q, offset %d, partial %d", lines, c.Offset, st.Partial)
	}
	f, _ := os.Open(path)
	fi, _ := f.Stat()
	if p, ok := PartialLine(f, c.Offset, fi.Size(), 0); !ok || string(p) != `{"b":` {
		t.Fatalf("PartialLine = %q, %v", p, ok)
	}
	f.Close()
	appendFile(t, path, []byte("2}\n"))
	lines, c, _ = tailAll(t, path, c, 0)
	if len(lines) != 1 || lines[0] != `{"b":2}` || c.Offset != 16 {
		t.Fatalf("after the newline: %q at %d", lines, c.Offset)
	}
	f, _ = os.Open(path)
	defer f.Close()
	if _, ok := PartialLine(f, c.Offset, 16, 0); ok {
		t.Fatal("a complete file has no partial line")
	}
	if _, ok := PartialLine(f, 0, 16, 0); ok {
		t.Fatal("bytes holding a newline are not a partial line")
	}
}

// A line over the cap is skipped without being held in memory.
func TestHugeLineSkippedUnbuffered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	huge := bytes.Repeat([]byte("x"), 8<<20)
	appendFile(t, path, []byte("first\n"))
	appendFile(t, path, huge)
	appendFile(t, path, []byte("\nlast\n"))
	lines, c, st := tailAll(t, path, Cursor{}, 1<<20)
	if strings.Join(lines, ",") != "first,last" || st.Oversized != 1 || c.Offset != int64(len(huge)+12) {
		t.Fatalf("lines %q, oversized %d, offset %d", lines, st.Oversized, c.Offset)
	}
}

func TestVerify(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, content string) (string, Cursor) {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		_, c, _ := tailAll(t, p, Cursor{}, 0)
		return p, c
	}
	check := func(p string, c Cursor) error {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		id, fi, _ := IdentifyOpen(f)
		return Verify(f, id, fi.Size(), c)
	}
	body := strings.Repeat("{\"line\":\"0123456789\"}\n", 100)

	p, c := mk("grow", body)
	appendFile(t, p, []byte("more\n"))
	if err := check(p, c); err != nil {
		t.Errorf("appended file: %v", err)
	}

	p, c = mk("trunc", body)
	os.Truncate(p, 50)
	if err := check(p, c); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
	// Truncated and regrown past the old size while nobody looked.
	p, c = mk("regrow", body)
	os.WriteFile(p, []byte(strings.Repeat("{\"other\":\"abcdefghij\"}\n", 120)), 0o600)
	if err := check(p, c); !errors.Is(err, ErrReplaced) && !errors.Is(err, ErrRewritten) {
		t.Errorf("regrown: %v", err)
	}

	// Replaced under the same name: new inode.
	p, c = mk("replace", body)
	tmp := p + ".new"
	os.WriteFile(tmp, []byte(body+"x\n"), 0o600)
	os.Rename(tmp, p)
	if err := check(p, c); !errors.Is(err, ErrReplaced) {
		t.Errorf("replaced: %v", err)
	}

	// Rewritten in place after the head: only the tail hash sees it.
	p, c = mk("rewrite", body)
	b := []byte(body)
	b[len(b)-5] = 'Z'
	f, _ := os.OpenFile(p, os.O_WRONLY, 0)
	f.WriteAt(b[len(b)-5:len(b)-4], int64(len(b)-5))
	f.Close()
	if err := check(p, c); !errors.Is(err, ErrRewritten) {
		t.Errorf("rewritten: %v", err)
	}

	// Renamed: the identity follows the file.
	p, c = mk("rename", body)
	moved := filepath.Join(dir, "archived.jsonl")
	os.Rename(p, moved)
	if err := check(moved, c); err != nil {
		t.Errorf("renamed: %v", err)
	}
	fi, _ := os.Stat(moved)
	if id := StatID(fi); id.Known() && id != c.ID {
		t.Errorf("stat identity %v differs from the cursor's %v", id, c.ID)
	}
}

// A file shorter than HeadMax widens its head fingerprint as it grows, and
// a file whose first bytes change is seen as replaced.
func TestHeadGrowsThenDetectsNewHead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.jsonl")
	appendFile(t, p, []byte("a\n"))
	_, c, _ := tailAll(t, p, Cursor{}, 0)
	if c.HeadLen != 2 {
		t.Fatalf("head %d", c.HeadLen)
	}
	appendFile(t, p, bytes.Repeat([]byte("b\n"), 1000))
	_, c, _ = tailAll(t, p, c, 0)
	if c.HeadLen != HeadMax {
		t.Fatalf("head %d after growth", c.HeadLen)
	}
	f, _ := os.OpenFile(p, os.O_WRONLY, 0)
	f.WriteAt([]byte("c"), 0)
	f.Close()
	f, _ = os.Open(p)
	defer f.Close()
	id, fi, _ := IdentifyOpen(f)
	if err := Verify(f, id, fi.Size(), c); !errors.Is(err, ErrReplaced) {
		t.Fatalf("new head: %v", err)
	}
}

// FuzzTailLines: read in two pieces from any split point, the tailer yields
// the lines of one ReadLines pass, and never panics.
func FuzzTailLines(f *testing.F) {
	f.Add([]byte("a\nbb\r\nccc"), 3, 4)
	f.Add([]byte("\n\n\n"), 1, 1)
	f.Add([]byte("xxxxxxxxxxxxxxxxxxxx\nshort\n"), 10, 8)
	f.Fuzz(func(t *testing.T, data []byte, split, maxLine int) {
		if maxLine < 1 || maxLine > 64 || split < 0 || split > len(data) {
			return
		}
		var want []string
		if _, err := ReadLines(bytes.NewReader(data), maxLine, false, func(l []byte) error {
			want = append(want, string(l))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var got []string
		collect := func(l []byte, _ int64) error { got = append(got, string(l)); return nil }
		st, err := TailLines(bytes.NewReader(data[:split]), 0, int64(split), maxLine, collect)
		if err != nil {
			t.Fatal(err)
		}
		if st.End > int64(split) || st.End+st.Partial != int64(split) {
			t.Fatalf("end %d partial %d of %d", st.End, st.Partial, split)
		}
		if _, err := TailLines(bytes.NewReader(data), st.End, int64(len(data)), maxLine, collect); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("tailed %q, want %q", got, want)
		}
	})
}

func TestUnfinishedLine(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // over one block of the reading
	for _, tc := range []struct {
		text         string
		offset, size int64
		maxLine      int
		want         bool
	}{
		{`{"a":1}` + "\n" + `{"b":`, 8, 13, 0, true},
		{`{"a":1}` + "\n" + `{"b":2}` + "\n", 0, 16, 0, false}, // complete lines to read
		{`{"a":1}` + "\n" + `{"b":`, 8, 8, 0, false},           // nothing beyond the cursor
		{`{"a":1}` + "\n" + `{"b":`, 8, 20, 0, false},          // the file is shorter than said
		{"{" + long, 0, int64(1 + len(long)), 0, true},
		{"{" + long + "\n" + "{", 0, int64(3 + len(long)), 0, false}, // a newline after the first block
		{"{" + long, 0, int64(1 + len(long)), 1000, false},           // over the cap: skipped, not a line
	} {
		got := UnfinishedLine(strings.NewReader(tc.text), tc.offset, tc.size, tc.maxLine)
		if got != tc.want {
			t.Errorf("%.20q… [%d,%d) cap %d: %v, want %v", tc.text, tc.offset, tc.size, tc.maxLine, got, tc.want)
		}
	}
}
