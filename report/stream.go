package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/agentmap/agentmap/export/mapfile"
)

// Stream is maps read once from a stream that cannot be read again:
// standard input (`--maps -`) or a pipe (a process substitution,
// `--maps <(…)`). A file named to --maps is told by reading it ahead
// (isBundle, IsLines) and then read again; a stream is told by its first
// bytes as they arrive: a bundle (a tar, gzipped or not), maps one a line
// (a jsonl export; blank lines before the first are passed over), or one
// map written over several lines, each gzipped or not. A stream that ends
// with nothing in it is an error, as an empty file is: the command that
// fed it most likely failed.
type Stream struct {
	Name string // for errors and the report's heading
	R    io.Reader
}

// errEmptyStream is a stream that ended before any byte of a map.
var errEmptyStream = errors.New("nothing was read: no map (did the command that sends them fail?)")

// Maps implements Source; it reads R to its end, its first error or the
// cancellation of ctx, whichever comes first.
func (s Stream) Maps(ctx context.Context, f Filter) iter.Seq2[*Map, error] {
	return decodeAll(ctx, f, false, func(emit func(name string, open func() (io.ReadCloser, error)) bool) error {
		r, err := lineReader(cancelable(ctx, s.R))
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if block, _ := r.Peek(512); len(block) == 512 && string(block[257:262]) == "ustar" {
			return tarMaps(s.Name, r, emit)
		}
		var first []byte
		blank := 0 // lines passed over before the first
		for {
			first, err = readMapLine(r)
			if err == io.EOF {
				return fmt.Errorf("%s: %w", s.Name, errEmptyStream)
			}
			if err != nil {
				return fmt.Errorf("%s: line %d: %w", s.Name, blank+1, err)
			}
			if len(bytes.TrimSpace(first)) > 0 {
				break
			}
			blank++
		}
		if json.Valid(first) {
			// A whole value on the first line: maps one a line (one map
			// alone in compact JSON is a jsonl of one line). Its lines are
			// numbered as in the stream.
			again := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("\n"), blank)),
				bytes.NewReader(append(first, '\n')), r), 1<<16)
			return lineMaps(s.Name, again, emit)
		}
		// One map over several lines, as a map file is read.
		body := bytes.NewBuffer(append(first, '\n'))
		if _, err := body.ReadFrom(io.LimitReader(r, int64(mapfile.MaxMapBytes))); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if body.Len() > mapfile.MaxMapBytes {
			return fmt.Errorf("%s: larger than %d bytes inflated", s.Name, mapfile.MaxMapBytes)
		}
		emit(s.Name, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body.Bytes())), nil })
		return nil
	})
}

// cancelable reads r until ctx is done: then a read waiting on a pipe
// whose writer sends nothing returns ctx's error at once, while the
// blocked read of r is left to end when the process does (a standard
// input cannot be closed under a read or given a deadline).
func cancelable(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r
	}
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	// The read goes into a buffer of the reader's own: after a
	// cancellation it may still complete, and must not write into p.
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	done := make(chan readResult, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- readResult{n, err}
	}()
	select {
	case res := <-done:
		return copy(p, buf[:res.n]), res.err
	case <-c.ctx.Done():
		c.buf = nil // the goroutine may still write into the old one
		return 0, c.ctx.Err()
	}
}
