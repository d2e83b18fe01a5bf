package watchers

import (
	"bufio"
	"bytes"
	"hash/crc32"
	"io"
	"sync"
)

// blockReader reads a file's bytes [start, end) for the tailer in blocks
// of its buffer and hands them out line by line, as bufio.Reader.ReadSlice
// would; unlike it, it knows which bytes it still holds. That lets the
// tailer take the cursor's checksum and fingerprints from the bytes it
// read for the lines: the checksum is extended over each block as the
// block is let go (one call per 256 KiB, not one per line) and, when a
// cursor is cut, over the bytes up to it.
type blockReader struct {
	f    io.ReaderAt
	bp   *[]byte
	buf  []byte
	base int64 // the file offset of buf[0]
	r, w int   // buf[r:w] is read from the file and not yet handed out
	end  int64
	err  error // a read error, reported once buf[r:w] is handed out

	lastEnd int64 // the file offset after the last newline handed out

	needHead bool   // a cursor cut from the read wants the head fingerprint
	headHash string // once taken

	summing bool
	crc     uint32 // over the file's bytes [0, crcAt)
	crcAt   int64  // base <= crcAt: the bytes after it are still in buf
	endCRC  uint32 // over [0, lastEnd), once crcAt is past it (a line longer than the buffer)
}

// blockBufs are the readers' buffers: a catch-up reads thousands of small
// logs, and a fresh 256 KiB buffer for each would be most of its
// allocation.
var blockBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

func newBlockReader(f io.ReaderAt, start, end int64, sum PrefixSum, needHead bool) *blockReader {
	bp := blockBufs.Get().(*[]byte)
	return &blockReader{f: f, bp: bp, buf: *bp, base: start, end: end, lastEnd: start, needHead: needHead,
		summing: sum.Known, crc: sum.CRC, crcAt: start}
}

// release returns the buffer; the reader is not used after.
func (b *blockReader) release() {
	blockBufs.Put(b.bp)
	b.bp, b.buf = nil, nil
}

// readSlice is bufio.Reader.ReadSlice('\n') over [start, end): the bytes
// up to and including the next newline, or the whole buffer with
// bufio.ErrBufferFull when no newline comes within it, or the bytes left
// with io.EOF at the end (a file shorter than end ends there too) or with
// the read error. The slice is valid until the next call.
func (b *blockReader) readSlice() ([]byte, error) {
	for {
		if i := bytes.IndexByte(b.buf[b.r:b.w], '\n'); i >= 0 {
			line := b.buf[b.r : b.r+i+1]
			b.r += i + 1
			b.lastEnd = b.base + int64(b.r)
			return line, nil
		}
		if b.w-b.r == len(b.buf) {
			line := b.buf[b.r:b.w]
			b.r = b.w
			return line, bufio.ErrBufferFull
		}
		if b.err != nil || b.base+int64(b.w) >= b.end {
			line := b.buf[b.r:b.w]
			b.r = b.w
			err := b.err
			if err == nil {
				err = io.EOF
			}
			b.err = nil
			return line, err
		}
		b.fill()
	}
}

// fill lets go of the bytes handed out (extending the checksum over them,
// and keeping the one at the last line's end) and reads more after the
// ones kept.
func (b *blockReader) fill() {
	if b.summing {
		b.sumTo(b.lastEnd)
		if b.crcAt == b.lastEnd {
			b.endCRC = b.crc
		}
		b.sumTo(b.base + int64(b.r))
	}
	n := copy(b.buf, b.buf[b.r:b.w])
	b.base += int64(b.r)
	b.r, b.w = 0, n
	want := int(min(int64(len(b.buf)-b.w), b.end-b.base-int64(b.w)))
	got, err := b.f.ReadAt(b.buf[b.w:b.w+want], b.base+int64(b.w))
	b.w += got
	if got < want {
		if err == nil {
			err = io.EOF
		}
		b.err = err
	}
}

// sumTo extends the checksum up to the file offset at (the bytes from
// crcAt to it are in buf).
func (b *blockReader) sumTo(at int64) {
	if at > b.crcAt {
		b.crc = crc32.Update(b.crc, castagnoli, b.buf[b.crcAt-b.base:at-b.base])
		b.crcAt = at
	}
}

// prefix returns what a cursor after the last line handed out needs from
// the bytes before it: their checksum, and the head and tail fingerprints
// when those bytes are still in the buffer.
func (b *blockReader) prefix() Prefix {
	at := b.lastEnd
	p := Prefix{Sum: PrefixSum{At: at, Known: b.summing}}
	if b.summing {
		if b.crcAt <= at {
			b.sumTo(at)
			p.Sum.CRC = b.crc
		} else {
			p.Sum.CRC = b.endCRC
		}
	}
	if n := min(at, TailMax); n > 0 && at-n >= b.base {
		p.TailHash = Fingerprint(b.buf[at-n-b.base : at-b.base])
	}
	if want := int(min(b.end, HeadMax)); b.needHead && b.base == 0 && b.w >= want {
		if b.headHash == "" {
			b.headHash = Fingerprint(b.buf[:want])
		}
		p.HeadLen, p.HeadHash = want, b.headHash
	}
	return p
}
