package watchers

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"sync"
)

// HeadMax and TailMax bound the fingerprints a tailer keeps: a hash of the
// first bytes of a file (its identity beside dev+inode, up to 1 KiB) and of
// the bytes just before the cursor (to catch a file rewritten in place).
const (
	HeadMax = 1024
	TailMax = 256
)

// FileID is a file's device and inode (volume and file index on Windows).
// The zero value means unknown.
type FileID struct{ Dev, Ino uint64 }

// Known reports whether the id was read.
func (id FileID) Known() bool { return id != FileID{} }

// Cursor is where a tailer stands in one file: the end of the last complete
// line consumed, and the fingerprints that tell whether the file under the
// path is still the one the cursor belongs to.
type Cursor struct {
	ID       FileID
	HeadLen  int
	HeadHash string
	Offset   int64
	TailHash string
	// Sum is the CRC-32C of all the bytes before Offset (hex; "" when not
	// known yet): a rewrite in the middle that keeps the size and misses
	// the head and tail windows still changes it.
	Sum string
}

// Why a cursor no longer fits its file; the source is rebuilt from zero.
var (
	ErrTruncated = errors.New("file is shorter than the cursor")
	ErrReplaced  = errors.New("file was replaced (new identity or new head)")
	ErrRewritten = errors.New("bytes before the cursor changed")
)

// Fingerprint is the hash kept for a head or a tail: 16 bytes of SHA-256, hex.
func Fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func readAt(f io.ReaderAt, off int64, n int) ([]byte, error) {
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, off)
	if got == n {
		return buf, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, err
}

// Verify checks that the open file f (size bytes long, identity id) is the
// one c was taken on and that nothing before the cursor changed. It returns
// nil, or ErrTruncated, ErrReplaced or ErrRewritten; other errors are I/O.
func Verify(f io.ReaderAt, id FileID, size int64, c Cursor) error {
	if c.ID.Known() && id.Known() && c.ID != id {
		return ErrReplaced
	}
	if size < c.Offset {
		return ErrTruncated
	}
	if c.HeadLen > 0 {
		if size < int64(c.HeadLen) {
			return ErrTruncated
		}
		head, err := readAt(f, 0, c.HeadLen)
		if err != nil {
			return fmt.Errorf("read head: %w", err)
		}
		if Fingerprint(head) != c.HeadHash {
			return ErrReplaced
		}
	}
	if c.Offset > 0 && c.TailHash != "" {
		n := int64(TailMax)
		if c.Offset < n {
			n = c.Offset
		}
		tail, err := readAt(f, c.Offset-n, int(n))
		if err != nil {
			return fmt.Errorf("read before offset %d: %w", c.Offset, err)
		}
		if Fingerprint(tail) != c.TailHash {
			return ErrRewritten
		}
	}
	return nil
}

// Advance returns the cursor moved to offset in f (size bytes long),
// with its head fingerprint widened as the file grows to HeadMax and the
// tail fingerprint taken before the new offset.
func Advance(f io.ReaderAt, id FileID, size int64, c Cursor, offset int64) (Cursor, error) {
	return AdvanceFrom(f, id, size, c, offset, Prefix{})
}

// AdvanceFrom is Advance given what a read of the lines before offset
// took of the bytes (TailSummed hands it out): the cursor is the one
// Advance returns, without reading those bytes a second time. What p does
// not hold (a sum not known or taken at another offset, a head or tail
// window not at hand) is read from f, as Advance does.
func AdvanceFrom(f io.ReaderAt, id FileID, size int64, c Cursor, offset int64, p Prefix) (Cursor, error) {
	from := c.Offset
	var err error
	c.ID, c.Offset = id, offset
	if want := min(size, HeadMax); int64(c.HeadLen) < want {
		if int64(p.HeadLen) == want {
			c.HeadLen, c.HeadHash = p.HeadLen, p.HeadHash
		} else {
			head, err := readAt(f, 0, int(want))
			if err != nil {
				return c, fmt.Errorf("read head: %w", err)
			}
			c.HeadLen, c.HeadHash = int(want), Fingerprint(head)
		}
	}
	if p.Sum.Known && p.Sum.At == offset {
		c.Sum = formatSum(offset, p.Sum.CRC)
	} else if c.Sum, err = extendSum(f, c.Sum, from, offset); err != nil {
		return c, err
	}
	c.TailHash = ""
	if offset > 0 && p.Sum.At == offset && p.TailHash != "" {
		c.TailHash = p.TailHash
	} else if offset > 0 {
		n := min(offset, TailMax)
		tail, err := readAt(f, offset-n, int(n))
		if err != nil {
			return c, fmt.Errorf("read before offset %d: %w", offset, err)
		}
		c.TailHash = Fingerprint(tail)
	}
	return c, nil
}

// Prefix is what a cursor at an offset (Sum.At) needs of the bytes before
// it, as a read of the file's lines took it from them: their checksum,
// the fingerprint of the file's first HeadLen bytes and that of the
// TailMax bytes before the offset. Each is there only when the read had
// the bytes at hand (otherwise a sum not Known, HeadLen 0, TailHash "").
type Prefix struct {
	Sum      PrefixSum
	HeadLen  int
	HeadHash string
	TailHash string
}

// PrefixSum is the CRC-32C of a file's bytes [0, At), the value a
// cursor at offset At keeps in Sum; Known is false when it was not taken.
type PrefixSum struct {
	At    int64
	CRC   uint32
	Known bool
}

// prefixSum is the checksum c holds at its offset, when it holds one.
func (c Cursor) prefixSum() PrefixSum {
	if c.Offset == 0 {
		return PrefixSum{Known: true}
	}
	if v, err := strconv.ParseUint(c.Sum, 16, 32); err == nil && c.Sum != "" {
		return PrefixSum{At: c.Offset, CRC: uint32(v), Known: true}
	}
	return PrefixSum{}
}

// formatSum is how a cursor writes the checksum of [0, to).
func formatSum(to int64, crc uint32) string {
	if to == 0 {
		return ""
	}
	return strconv.FormatUint(uint64(crc), 16)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// extendSum returns the checksum of [0, to) given sum, the checksum of
// [0, from). An unknown sum (a cursor from before checksums) is taken
// from the start once.
func extendSum(f io.ReaderAt, sum string, from, to int64) (string, error) {
	var crc uint32
	if v, err := strconv.ParseUint(sum, 16, 32); err == nil && sum != "" && from <= to {
		crc = uint32(v)
	} else {
		from = 0
	}
	if to == 0 {
		return "", nil
	}
	crc, err := crcOf(f, crc, from, to)
	if err != nil {
		return "", fmt.Errorf("read before offset %d: %w", to, err)
	}
	return formatSum(to, crc), nil
}

// crcBufs holds the read buffers of crcOf: a catch-up checksums every byte
// it reads, and a fresh buffer per call was a fifth of all its allocation.
var crcBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// crcOf extends crc over the bytes [from, to) of f.
func crcOf(f io.ReaderAt, crc uint32, from, to int64) (uint32, error) {
	bp := crcBufs.Get().(*[]byte)
	defer crcBufs.Put(bp)
	buf := *bp
	for from < to {
		n := int(min(int64(len(buf)), to-from))
		got, err := f.ReadAt(buf[:n], from)
		if got < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return crc, err
		}
		crc = crc32.Update(crc, castagnoli, buf[:n])
		from += int64(n)
	}
	return crc, nil
}

// VerifySum reads every byte before the cursor and compares it with the
// cursor's checksum: ErrRewritten when they differ, nil when they agree
// or the cursor has no checksum. It costs a read of the file, so the
// tailer calls it only when a file changed without growing, and once per
// file after a start.
func VerifySum(f io.ReaderAt, c Cursor) error {
	if c.Sum == "" || c.Offset == 0 {
		return nil
	}
	crc, err := crcOf(f, 0, 0, c.Offset)
	if err != nil {
		return fmt.Errorf("read before offset %d: %w", c.Offset, err)
	}
	if strconv.FormatUint(uint64(crc), 16) != c.Sum {
		return ErrRewritten
	}
	return nil
}

// TailStats counts what one TailLines call saw.
type TailStats struct {
	Lines     int   // complete lines handed to the callback
	Oversized int   // lines skipped because they exceeded the cap
	End       int64 // absolute offset after the last complete line
	Partial   int64 // bytes after End (a line still being written)
}

// TailLines reads the complete lines of f between start and size and calls
// fn with each one (without its newline or a trailing \r) and the absolute
// offset just after it, so the caller can commit a cursor at any line
// boundary. The rules are those of ReadLines (same cap, same trimming), so
// a file read in pieces yields exactly the lines of one ReadLines pass. A
// line longer than maxLine is skipped as it streams past, never buffered,
// and counted. A last line without newline is left for later. The slice
// passed to fn is only valid during the call: it lies in the read buffer,
// which the next read overwrites and another file's read reuses.
func TailLines(f io.ReaderAt, start, size int64, maxLine int, fn func(line []byte, end int64) error) (TailStats, error) {
	st, _, err := tailLines(f, start, size, maxLine, PrefixSum{}, false, func(line []byte, end int64, _ func() Prefix) error {
		return fn(line, end)
	})
	return st, err
}

// TailSummed is TailLines from the cursor c that also keeps what a cursor
// needs of the bytes read (see Prefix): fn may ask, with each line, for
// the Prefix at its end, and the one at the stats' End is returned.
// Handed to AdvanceFrom they give the cursor Advance would, without a
// second read of the file. The checksum is extended from c's (a cursor
// without one yields sums not Known: AdvanceFrom then reads the prefix,
// as Advance does).
func TailSummed(f io.ReaderAt, c Cursor, size int64, maxLine int, fn func(line []byte, end int64, prefix func() Prefix) error) (TailStats, Prefix, error) {
	return tailLines(f, c.Offset, size, maxLine, c.prefixSum(), int64(c.HeadLen) < min(size, HeadMax), fn)
}

// tailLines is TailLines extending sum (the checksum at start, when
// Known) over the bytes read, and taking the head fingerprint if needHead.
func tailLines(f io.ReaderAt, start, size int64, maxLine int, sum PrefixSum, needHead bool, fn func(line []byte, end int64, prefix func() Prefix) error) (TailStats, Prefix, error) {
	maxLine = LineCap(maxLine)
	st := TailStats{End: start}
	if size <= start {
		return st, Prefix{Sum: sum}, nil
	}
	br := newBlockReader(f, start, size, sum, needHead)
	defer br.release()
	prefix := br.prefix // made once: a method value made per line is an allocation per line
	pos := start
	var buf []byte
	var lineLen int64
	skipping := false
	for {
		chunk, err := br.readSlice()
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
			return st, br.prefix(), fmt.Errorf("read at offset %d: %w", pos+lineLen, err)
		}
		lineLen += int64(len(chunk))
		// A line whole in the buffer is handed out as it lies there; one
		// read in pieces is gathered.
		line := chunk
		if err != nil || lineLen != int64(len(chunk)) {
			if !skipping {
				if lineLen > int64(maxLine)+1 {
					skipping, buf = true, nil // let the partial copy go
				} else {
					buf = append(buf, chunk...)
				}
			}
			line = buf
		} else if lineLen > int64(maxLine)+1 {
			skipping = true
		}
		if err == nil {
			pos += lineLen
			if skipping {
				st.Oversized++
			} else {
				st.Lines++
				if ferr := fn(trimEOL(line), pos, prefix); ferr != nil {
					st.End = pos
					return st, br.prefix(), ferr
				}
			}
			st.End = pos
			skipping, buf, lineLen = false, buf[:0], 0
			continue
		}
		if errors.Is(err, io.EOF) {
			st.Partial = lineLen
			return st, br.prefix(), nil
		}
	}
}

// PartialLine returns the last line of f when it has no newline yet: the
// bytes from offset to size, if they hold no newline, fit under the cap and
// are not blank. A tailer hands it to the parser only when a session is
// flushed, and never moves its cursor over it.
func PartialLine(f io.ReaderAt, offset, size int64, maxLine int) ([]byte, bool) {
	maxLine = LineCap(maxLine)
	n := size - offset
	if n <= 0 || n > int64(maxLine)+1 {
		return nil, false
	}
	b, err := readAt(f, offset, int(n))
	if err != nil || bytes.IndexByte(b, '\n') >= 0 {
		return nil, false
	}
	b = trimEOL(b)
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, false
	}
	return b, true
}

// UnfinishedLine reports whether the bytes of f from offset to size are a
// last line still being written: no newline among them, and no more than
// the cap allows (PartialLine's reading, without holding the line). It
// reads them a block at a time, so a long line costs no memory.
func UnfinishedLine(f io.ReaderAt, offset, size int64, maxLine int) bool {
	maxLine = LineCap(maxLine)
	if size <= offset || size-offset > int64(maxLine)+1 {
		return false
	}
	return !NewlineIn(f, offset, size)
}

// NewlineIn reports whether f holds a newline from offset to size; a read
// that fails or ends early is true: nothing is claimed of bytes not read.
// It stops at the first newline and reads a block at a time, so a long
// line costs no memory.
func NewlineIn(f io.ReaderAt, offset, size int64) bool {
	var block [32 << 10]byte
	for at := offset; at < size; {
		n, err := f.ReadAt(block[:min(int64(len(block)), size-at)], at)
		if bytes.IndexByte(block[:n], '\n') >= 0 {
			return true
		}
		at += int64(n)
		if (err != nil || n == 0) && at < size {
			return true
		}
	}
	return false
}

// IdentifyOpen returns the identity of an open file.
func IdentifyOpen(f *os.File) (FileID, os.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileID{}, nil, err
	}
	id, err := openID(f, fi)
	return id, fi, err
}
