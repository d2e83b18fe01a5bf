package agents

import (
	"bufio"
	"encoding/json"
	"errors"
)

// The working directory a log names, for privacy.exclude: the daemon and
// `build --config` judge each log by the cwd its first records name
// (Claude Code records carry it at top level, Codex session_meta and
// turn_context in their payload), decoding nothing else.

// SniffLines and SniffLineMax bound the read: the cwd comes with the first
// user or session record.
const (
	SniffLines   = 64
	SniffLineMax = 1 << 20
)

// SniffCWD returns the first cwd named in a log's first complete lines and
// whether the file holds fewer complete lines than were looked at (more may
// come).
func SniffCWD(path string) (cwd string, short bool) {
	f, err := Open(path) // a Codex rollout's compressed copy is read through zstd
	if err != nil {
		return "", true
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 0; n < SniffLines; n++ {
		line, ok := readBounded(br)
		if !ok {
			return "", true
		}
		if line == nil {
			continue // over the bound: no record worth decoding
		}
		var rec struct {
			CWD     string `json:"cwd"`
			Payload struct {
				CWD string `json:"cwd"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		if rec.CWD != "" {
			return rec.CWD, false
		}
		if rec.Payload.CWD != "" {
			return rec.Payload.CWD, false
		}
	}
	return "", false
}

// readBounded reads one complete line; a line over SniffLineMax comes back
// nil (and ok). ok is false at the end of the complete lines.
func readBounded(br *bufio.Reader) (line []byte, ok bool) {
	var buf []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(buf)+len(chunk) > SniffLineMax {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if over {
				return nil, true
			}
			return buf, true
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, false
		}
	}
}
