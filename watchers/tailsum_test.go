package watchers

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"
)

// sumLog is a log whose lines straddle the line reader's 256 KiB buffer
// at many alignments: short lines, lines of a few KiB, lines longer than
// the buffer (read in pieces), lines over the cap, CRLF endings, blank
// lines, and (when partial) a last line without its newline.
func sumLog(rng *rand.Rand, size int, partial bool) []byte {
	var b bytes.Buffer
	for b.Len() < size {
		var n int
		switch r := rng.IntN(100); {
		case r < 60:
			n = rng.IntN(200)
		case r < 95:
			n = rng.IntN(8 << 10)
		case r < 98:
			n = 256<<10 - 64 + rng.IntN(128) // about the buffer's size
		default:
			n = 300<<10 + rng.IntN(1<<20) // over the buffer, some over the cap, in pieces
		}
		b.WriteString(strings.Repeat(string(rune('a'+rng.IntN(26))), n))
		if rng.IntN(7) == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	if partial {
		b.WriteString(`{"unfinished":`)
	}
	return b.Bytes()
}

// The checksum TailSummed hands out with each line is the CRC-32C of every
// byte before the line's end, and AdvanceSummed with it gives exactly the
// cursor Advance computes by reading the file again: from a fresh cursor,
// from a cursor left mid-file by an earlier read, and (sums not known) from
// a cursor taken before checksums existed.
func TestTailSummedEqualsAdvance(t *testing.T) {
	const maxLine = 512 << 10
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		data := sumLog(rng, 1<<20+rng.IntN(2<<20), seed%2 == 0)
		r := bytes.NewReader(data)
		size := int64(len(data))
		id := FileID{Dev: 1, Ino: seed}
		crcs := make([]uint32, len(data)+1) // CRC-32C of data[:i]
		for i := range data {
			crcs[i+1] = crc32.Update(crcs[i], castagnoli, data[i:i+1])
		}
		var want []string
		ws, err := ReadLines(bytes.NewReader(data), maxLine, false, func(l []byte) error {
			want = append(want, string(l))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		// Read in pieces, each from the cursor the previous one left,
		// cutting a cursor at some lines as the daemon's batches do.
		var c Cursor
		var got []string
		legacy := seed == 3 // its first piece resumes a cursor without a checksum
		for piece := 0; c.Offset < ws.Bytes; piece++ {
			stop := min(size, c.Offset+int64(rng.IntN(2<<20))) // more than the longest line
			if legacy && piece == 1 {
				c.Sum = ""
			}
			cur := c
			st, last, err := TailSummed(r, cur, stop, maxLine, func(l []byte, end int64, prefix func() Prefix) error {
				got = append(got, string(l))
				if rng.IntN(3) != 0 {
					return nil // most lines cut no cursor
				}
				p := prefix()
				sum := p.Sum
				if sum.Known != (cur.Sum != "" || cur.Offset == 0) {
					t.Fatalf("seed %d: at %d sum known %v from cursor %+v", seed, end, sum.Known, cur)
				}
				if sum.At != end || sum.Known && sum.CRC != crcs[end] {
					t.Fatalf("seed %d: sum at %d = %+v, want crc %x", seed, end, sum, crcs[end])
				}
				if rng.IntN(2) == 0 {
					checkAdvance(t, r, id, size, c, end, p)
					c, _ = Advance(r, id, size, c, end)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if sum := last.Sum; sum.At != st.End || sum.Known && sum.CRC != crcs[st.End] {
				t.Fatalf("seed %d: sum at the end %d = %+v, want crc %x", seed, st.End, sum, crcs[st.End])
			}
			checkAdvance(t, r, id, size, c, st.End, last)
			c, _ = Advance(r, id, size, c, st.End)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("seed %d: %d lines tailed, want %d", seed, len(got), len(want))
		}
	}
}

func checkAdvance(t *testing.T, r *bytes.Reader, id FileID, size int64, c Cursor, end int64, p Prefix) {
	t.Helper()
	want, werr := Advance(r, id, size, c, end)
	got, gerr := AdvanceFrom(r, id, size, c, end, p)
	if got != want || (werr == nil) != (gerr == nil) {
		t.Fatalf("AdvanceFrom from %d to %d = %+v, %v; Advance = %+v, %v", c.Offset, end, got, gerr, want, werr)
	}
}

// What a Prefix does not hold for the offset is read, never trusted.
func TestAdvanceFromIgnoresStalePrefix(t *testing.T) {
	data := []byte("one\ntwo\nthree\n")
	r := bytes.NewReader(data)
	want, _ := Advance(r, FileID{}, int64(len(data)), Cursor{}, 8)
	for _, p := range []Prefix{{}, {Sum: PrefixSum{At: 4, CRC: 7, Known: true}, TailHash: "x"},
		{Sum: PrefixSum{At: 8, CRC: 7}}, {HeadLen: 4, HeadHash: "x"}, {HeadLen: HeadMax, HeadHash: "x"}} {
		if got, _ := AdvanceFrom(r, FileID{}, int64(len(data)), Cursor{}, 8, p); got != want {
			t.Errorf("with %+v: %+v, want %+v", p, got, want)
		}
	}
}

// noReads fails every read: a cursor cut from what the tailer read must
// not read the file again.
type noReads struct{}

func (noReads) ReadAt([]byte, int64) (int, error) { return 0, errors.New("read again") }

// A small log read from its start gives the cursor of each batch, and the
// one after its end, with no second read: checksum, head and tail all
// come from the bytes read for the lines.
func TestTailSummedReadsOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, size := range []int{1, 100, HeadMax - 1, HeadMax + 1, 200 << 10} {
		var b bytes.Buffer // lines well within the buffer
		for b.Len() < size {
			b.WriteString(strings.Repeat("x", rng.IntN(300)) + "\r\n"[rng.IntN(2):])
		}
		b.WriteString("{")
		data := b.Bytes()
		r := bytes.NewReader(data)
		n := int64(len(data))
		var cuts int
		st, last, err := TailSummed(r, Cursor{}, n, 0, func(_ []byte, end int64, prefix func() Prefix) error {
			if end < TailMax || rng.IntN(4) != 0 {
				return nil // a window shorter than TailMax is read whole below
			}
			cuts++
			want, _ := Advance(r, FileID{}, n, Cursor{}, end)
			got, err := AdvanceFrom(noReads{}, FileID{}, n, Cursor{}, end, prefix())
			if err != nil || got != want {
				t.Fatalf("size %d: cut at %d read the file again (%v), or differs: %+v, want %+v", size, end, err, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Advance(r, FileID{}, n, Cursor{}, st.End)
		got, err := AdvanceFrom(noReads{}, FileID{}, n, Cursor{}, st.End, last)
		if err != nil || got != want {
			t.Fatalf("size %d: the cursor at the end read the file again (%v), or differs: %+v, want %+v", size, err, got, want)
		}
	}
}
