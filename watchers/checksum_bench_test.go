package watchers

import (
	"bytes"
	"fmt"
	"testing"
)

// The prefix checksum of a cursor is extended over every byte a tailer
// commits. BenchmarkTailLines (reading the lines, before any parsing) is
// its peer: `go test ./watchers -bench 'TailLines|CursorChecksum|TailSummed'`
// prints the throughputs; BenchmarkTailSummed reads the lines and keeps
// the checksum as they stream past, what a tailer does, against
// BenchmarkTailLines plus BenchmarkCursorChecksum (a second read).
func benchLog() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 8<<20; i++ {
		fmt.Fprintf(&b, `{"type":"assistant","sessionId":"s","uuid":"a%d","message":{"usage":{"input_tokens":%d,"output_tokens":5}},"pad":"%0200d"}`+"\n", i, i, i)
	}
	return b.Bytes()
}

func BenchmarkTailLines(b *testing.B) {
	log := benchLog()
	r := bytes.NewReader(log)
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		if _, err := TailLines(r, 0, int64(len(log)), 0, func([]byte, int64) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCursorChecksum(b *testing.B) {
	log := benchLog()
	r := bytes.NewReader(log)
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		// One commit per 1 MiB, as a tailer's batches go.
		var c Cursor
		var err error
		for off := int64(1 << 20); ; off += 1 << 20 {
			off = min(off, int64(len(log)))
			if c, err = Advance(r, FileID{}, int64(len(log)), c, off); err != nil {
				b.Fatal(err)
			}
			if off == int64(len(log)) {
				break
			}
		}
	}
}

func BenchmarkTailSummed(b *testing.B) {
	log := benchLog()
	r := bytes.NewReader(log)
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		// One commit per 1 MiB, as a tailer's batches go.
		var c Cursor
		var err error
		next := int64(1 << 20)
		st, last, terr := TailSummed(r, c, int64(len(log)), 0, func(_ []byte, end int64, prefix func() Prefix) error {
			if end >= next {
				next += 1 << 20
				c, err = AdvanceFrom(r, FileID{}, int64(len(log)), c, end, prefix())
			}
			return err
		})
		if terr != nil {
			b.Fatal(terr)
		}
		if _, err := AdvanceFrom(r, FileID{}, int64(len(log)), c, st.End, last); err != nil {
			b.Fatal(err)
		}
	}
}
