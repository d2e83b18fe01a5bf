package watchers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxLine is the hard cap on one log line. Real Codex lines reach
// 12 MB and Claude lines carry base64 images, so the cap is far above what a
// healthy log holds; beyond it a line is skipped and counted.
const DefaultMaxLine = 64 << 20

// MaxMaxLine is the largest cap on a line the readers take (config's
// watch.max_line ceiling): a larger one would hold that much of a single
// line in memory, and one near the int64 range overflows the comparisons
// (every line then reads as too long, and is skipped for good).
const MaxMaxLine = 1 << 30

// LineCap is the cap on a line in effect for maxLine: the default for 0
// or less, never above MaxMaxLine.
func LineCap(maxLine int) int {
	if maxLine <= 0 {
		return DefaultMaxLine
	}
	return min(maxLine, MaxMaxLine)
}

// ErrLineTooLong is reported (once per skipped line) by ReadLines.
var ErrLineTooLong = errors.New("line longer than the cap")

// LineStats counts what ReadLines saw.
type LineStats struct {
	Lines     int   // complete lines handed to the callback
	Oversized int   // lines skipped because they exceeded the cap
	Bytes     int64 // bytes consumed, through the last complete line
	// Partial is the length of a final line that had no newline. It is not
	// handed to the callback; the caller decides (a tailer waits for the
	// newline, a one-shot build may try it).
	Partial int
}

// ReadLines streams r line by line and calls fn with each complete line
// (without its newline, and without a trailing \r). Memory stays bounded by
// the longest line under maxLine: a longer line is discarded as it is read,
// never buffered whole. The slice passed to fn is only valid during the call.
// If final is true, a last line without newline is also passed to fn.
func ReadLines(r io.Reader, maxLine int, final bool, fn func(line []byte) error) (LineStats, error) {
	maxLine = LineCap(maxLine)
	br := getReader(r)
	defer putReader(br)
	var st LineStats
	var buf []byte
	var lineLen int64 // bytes of the current line read so far, skipped or not
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
			return st, fmt.Errorf("read: %w", err)
		}
		lineLen += int64(len(chunk))
		// A line whole in the buffer is handed out as it lies there; one
		// read in pieces is gathered.
		line := chunk
		if err != nil || lineLen != int64(len(chunk)) {
			if !skipping {
				if lineLen > int64(maxLine)+1 { // +1: the newline itself
					skipping, buf = true, buf[:0]
				} else {
					buf = append(buf, chunk...)
				}
			}
			line = buf
		} else if lineLen > int64(maxLine)+1 {
			skipping = true
		}
		if err == nil { // a complete line
			st.Bytes += lineLen
			if skipping {
				st.Oversized++
			} else {
				st.Lines++
				if ferr := fn(trimEOL(line)); ferr != nil {
					return st, ferr
				}
			}
			skipping, buf, lineLen = false, buf[:0], 0
			continue
		}
		if errors.Is(err, io.EOF) {
			st.Partial = int(lineLen)
			if final && !skipping && len(buf) > 0 {
				st.Lines++
				if ferr := fn(trimEOL(buf)); ferr != nil {
					return st, ferr
				}
			}
			return st, nil
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Line readers are pooled: a catch-up opens thousands of small logs, and a
// fresh 256 KiB buffer for each would be most of its allocation.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

func getReader(r io.Reader) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}
