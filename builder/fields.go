package builder

import (
	"bytes"
	"strconv"
)

// fieldList writes one canonical JSON object without building a map: the
// fields are collected in any order, sorted by key (a handful per object)
// and written. Events are by far the largest part of a map, so they are
// encoded this way; the result is byte-identical to CanonicalJSON.
type fieldList struct {
	fs []field
}

type field struct {
	key  string
	kind byte // 'i' int, 's' string, 'b' bool, 'f' float, 'r' raw canonical JSON
	i    int64
	s    string
	raw  []byte
	f    float64
}

func (l *fieldList) reset() { l.fs = l.fs[:0] }

func (l *fieldList) int(k string, v int64) { l.fs = append(l.fs, field{key: k, kind: 'i', i: v}) }
func (l *fieldList) str(k, v string)       { l.fs = append(l.fs, field{key: k, kind: 's', s: v}) }
func (l *fieldList) float(k string, v float64) {
	l.fs = append(l.fs, field{key: k, kind: 'f', f: v})
}
func (l *fieldList) raw(k string, v []byte) { l.fs = append(l.fs, field{key: k, kind: 'r', raw: v}) }
func (l *fieldList) bool(k string, v bool) {
	var i int64
	if v {
		i = 1
	}
	l.fs = append(l.fs, field{key: k, kind: 'b', i: i})
}

// optStr adds a string field only when it is not empty.
func (l *fieldList) optStr(k, v string) {
	if v != "" {
		l.str(k, v)
	}
}

func (l *fieldList) write(buf *bytes.Buffer) error {
	fs := l.fs
	for i := 1; i < len(fs); i++ { // insertion sort: few fields, no allocation
		for j := i; j > 0 && fs[j].key < fs[j-1].key; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
	buf.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, f.key)
		buf.WriteByte(':')
		switch f.kind {
		case 'i':
			buf.WriteString(strconv.FormatInt(f.i, 10))
		case 's':
			writeString(buf, f.s)
		case 'b':
			if f.i == 1 {
				buf.WriteString("true")
			} else {
				buf.WriteString("false")
			}
		case 'f':
			if err := writeFloatValue(buf, f.f); err != nil {
				return err
			}
		case 'r':
			buf.Write(f.raw)
		}
	}
	buf.WriteByte('}')
	return nil
}
