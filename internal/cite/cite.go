// Package cite names, in a test's failure message, what the test read from
// an agent's log without quoting it. The corpus's logs hold real prompts,
// code and secrets, and a failure message lands in CI's log: a line is
// named by its file, line number, byte offset, length and a short hash, so
// that it can be found and read where the log is, and two values taken
// from it that should be equal by the fields where they differ.
//
// A test's own input (a literal case, a fuzz input) is quoted as before:
// Own marks it so.
package cite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// A Line is a line a test read, and where it read it.
type Line struct {
	Path string // the log it was read from ("" for a test's own input)
	N    int    // its line number in the log, from 1
	Off  int64  // the offset of its first byte in the log (decompressed)
	B    []byte // the line itself
	name string // what names it when it is not a log's line (Named)
	own  bool
}

// At is line n of the log at path, off bytes into it.
func At(path string, n int, off int64, b []byte) Line {
	return Line{Path: path, N: n, Off: off, B: b}
}

// Named is b, a piece of a log that is not one of its lines (a command
// taken from a record, say), named by what the test calls it.
func Named(name string, b []byte) Line { return Line{B: b, name: name} }

// Split cuts the bytes of the log at path into its lines (without their
// newlines; a last line without one included), each with its place.
func Split(path string, data []byte) []Line {
	var lines []Line
	var off int64
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		lines = append(lines, At(path, n, off, line))
		off += int64(len(data) - len(rest))
		data = rest
	}
	return lines
}

// Own is a test's own input: messages quote it.
func Own(b []byte) Line { return Line{B: b, own: true} }

// Input is a line from nowhere a test can name, and not its own: a fuzz
// input, whose seeds may be a log's lines. Messages name it by length and
// hash (the fuzzer keeps a failing input in testdata/fuzz).
func Input(b []byte) Line { return Line{B: b} }

// String names the line: quoted when it is the test's own, else
// "claude/x.jsonl line 12 (offset 3456, 789 bytes, sha256 1a2b3c4d)", the
// length and hash of the line without its newline.
func (l Line) String() string {
	if l.own {
		return strconv.Quote(string(l.B))
	}
	if l.name != "" {
		return l.name + " (" + Bytes(l.B) + ")"
	}
	if l.Path == "" {
		return "a line of " + Bytes(l.B)
	}
	// Without its newline, if it holds one: as `sed -n Np FILE | tr -d '\n'`
	// gives it to check.
	return fmt.Sprintf("%s line %d (offset %d, %s)", shortPath(l.Path), l.N, l.Off, Bytes(bytes.TrimSuffix(l.B, []byte("\n"))))
}

// Part names b, a part of the line (a member's raw value, a decoded
// string): quoted when the line is the test's own, else by its length and
// hash, in parentheses.
func (l Line) Part(b []byte) string {
	if l.own {
		return strconv.Quote(string(b))
	}
	return "(" + Bytes(b) + ")"
}

// Diff says how two values read from the line differ (got, then want):
// "got {...}, want {...}" when the line is the test's own, else "differ
// at" the fields where they differ (see Diff).
func (l Line) Diff(got, want any) string {
	if l.own {
		return fmt.Sprintf("got %+v, want %+v", got, want)
	}
	return Diff(got, want)
}

// Bytes names b by its length and the first 8 hex digits of its SHA-256:
// "789 bytes, sha256 1a2b3c4d".
func Bytes[T ~[]byte | ~string](b T) string {
	sum := sha256.Sum256([]byte(b))
	return fmt.Sprintf("%d bytes, sha256 %s", len(b), hex.EncodeToString(sum[:4]))
}

// shortPath is a log's file name and the directory it is in (the agent's,
// in the corpus), enough to find it.
func shortPath(path string) string {
	if path == "" {
		return "(no file)"
	}
	dir, file := filepath.Split(filepath.Clean(path))
	if dir = filepath.Base(dir); dir == "." || dir == string(filepath.Separator) {
		return file
	}
	return dir + "/" + file
}

// maxPaths bounds the fields a Diff lists; maxDepth the nesting it
// follows (a cycle of pointers would otherwise be followed for ever).
const (
	maxPaths = 8
	maxDepth = 64
)

// Diff lists where two values differ, as reflect.DeepEqual compares them,
// without their text: the path of each differing field (names of struct
// fields, indexes of slices), with the numbers and truth values as they
// are, strings and bytes by length and hash, pointers by whether they are
// set. Map keys, which may be text, are named by hash too.
func Diff(got, want any) string {
	var d differ
	d.walk(reflect.ValueOf(got), reflect.ValueOf(want), "", 0)
	switch {
	case len(d.paths) == 0:
		return "no field differs"
	case d.more > 0:
		return "differ at " + strings.Join(d.paths, "; ") + fmt.Sprintf("; and %d more", d.more)
	}
	return "differ at " + strings.Join(d.paths, "; ")
}

type differ struct {
	paths []string
	more  int
}

func (d *differ) add(path, format string, args ...any) {
	if path == "" {
		path = "the value"
	}
	if len(d.paths) == maxPaths {
		d.more++
		return
	}
	d.paths = append(d.paths, path+": "+fmt.Sprintf(format, args...))
}

func set(v reflect.Value) string {
	if v.IsNil() {
		return "nil"
	}
	return "set"
}

func (d *differ) walk(a, b reflect.Value, path string, depth int) {
	if depth > maxDepth {
		d.add(path, "nested deeper than %d levels: not compared", maxDepth)
		return
	}
	depth++
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			d.add(path, "one of the two is nil")
		}
		return
	}
	if a.Type() != b.Type() {
		d.add(path, "%s vs %s", a.Type(), b.Type())
		return
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				d.add(path, "%s vs %s", set(a), set(b))
			}
			return
		}
		d.walk(a.Elem(), b.Elem(), path, depth)
	case reflect.Struct:
		for i := range a.NumField() {
			name := a.Type().Field(i).Name
			if path != "" {
				name = path + "." + name
			}
			d.walk(a.Field(i), b.Field(i), name, depth)
		}
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() {
			d.add(path, "%s vs %s (%d and %d elements)", set(a), set(b), a.Len(), b.Len())
			return
		}
		if a.Type().Elem().Kind() == reflect.Uint8 {
			if x, y := byteString(a), byteString(b); x != y {
				d.add(path, "%s vs %s", Bytes(x), Bytes(y))
			}
			return
		}
		if a.Len() != b.Len() {
			d.add(path, "%d vs %d elements", a.Len(), b.Len())
		}
		for i := range min(a.Len(), b.Len()) {
			d.walk(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), depth)
		}
	case reflect.Map:
		if a.IsNil() != b.IsNil() {
			d.add(path, "%s vs %s", set(a), set(b))
			return
		}
		if a.Len() != b.Len() {
			d.add(path, "%d vs %d entries", a.Len(), b.Len())
			return
		}
		it := a.MapRange()
		for it.Next() {
			key := fmt.Sprintf("%s[key %s]", path, Bytes(fmt.Sprint(it.Key())))
			if bv := b.MapIndex(it.Key()); !bv.IsValid() {
				d.add(key, "only in the first")
			} else {
				d.walk(it.Value(), bv, key, depth)
			}
		}
	case reflect.String:
		if a.String() != b.String() {
			d.add(path, "%s vs %s", Bytes(a.String()), Bytes(b.String()))
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			d.add(path, "%v vs %v", a.Bool(), b.Bool())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			d.add(path, "%d vs %d", a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			d.add(path, "%d vs %d", a.Uint(), b.Uint())
		}
	case reflect.Float32, reflect.Float64:
		if x, y := a.Float(), b.Float(); x != y {
			d.add(path, "%v vs %v", x, y)
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		// reflect.DeepEqual: equal only when both are nil.
		if !a.IsNil() || !b.IsNil() {
			d.add(path, "%s vs %s (%s)", set(a), set(b), a.Kind())
		}
	}
}

// byteString is a []byte or [N]byte as a string, read element by element
// (reflect hands out the bytes of an unexported field no other way).
func byteString(v reflect.Value) string {
	if v.Kind() == reflect.Slice && v.CanInterface() {
		return string(v.Bytes())
	}
	var sb strings.Builder
	for i := range v.Len() {
		sb.WriteByte(byte(v.Index(i).Uint()))
	}
	return sb.String()
}
