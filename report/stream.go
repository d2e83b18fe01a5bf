package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
// (a jsonl export), or one map written over several lines, each gzipped
// or not.
type Stream struct {
	Name string // for errors and the report's heading
	R    io.Reader
}

// Maps implements Source; it reads R to its end (or its first error).
func (s Stream) Maps(ctx context.Context, f Filter) iter.Seq2[*Map, error] {
	return decodeAll(ctx, f, false, func(emit func(name string, open func() (io.ReadCloser, error)) bool) error {
		r, err := lineReader(s.R)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if block, _ := r.Peek(512); len(block) == 512 && string(block[257:262]) == "ustar" {
			return tarMaps(s.Name, r, emit)
		}
		first, err := readMapLine(r)
		if err == io.EOF {
			return nil // nothing sent: no maps
		}
		if err != nil {
			return fmt.Errorf("%s: line 1: %w", s.Name, err)
		}
		if json.Valid(first) {
			// A whole value on the first line: maps one a line (one map
			// alone in compact JSON is a jsonl of one line).
			again := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(append(first, '\n')), r), 1<<16)
			return lineMaps(s.Name, again, emit)
		}
		// One map over several lines, as a map file is read.
		rest, err := io.ReadAll(io.LimitReader(r, int64(mapfile.MaxMapBytes)))
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		body := append(append(first, '\n'), rest...)
		if len(body) > mapfile.MaxMapBytes {
			return fmt.Errorf("%s: larger than %d bytes inflated", s.Name, mapfile.MaxMapBytes)
		}
		emit(s.Name, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil })
		return nil
	})
}
