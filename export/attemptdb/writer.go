package attemptdb

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

// Options configure a stream.
type Options struct {
	// DeviceID identifies this machine: a UUID generated once and kept
	// (the daemon's state, or the CLI's <data dir>/device-id).
	DeviceID string
	// FirstSeq is the source_seq of the first event written (>= 1): the
	// NextSeq of the previous export from this device.
	FirstSeq uint64
	// AdapterVersion is adapter_version, e.g. "agentmap 0.1.0".
	AdapterVersion string
	// Undated is observed_at's base for maps with no time at all (Cursor
	// sessions without file times); such events are marked
	// x_agentmap_time_unknown. Zero means the Unix epoch plus 1 µs.
	Undated time.Time
}

// Writer writes AttemptDB Event v1 lines, one map at a time.
type Writer struct {
	bw     *bufio.Writer
	opts   Options
	seq    uint64
	events int
	err    error
}

// NewWriter starts a stream on w.
func NewWriter(w io.Writer, o Options) (*Writer, error) {
	if !IsUUID(o.DeviceID) || isNil(o.DeviceID) {
		return nil, errors.New("attemptdb: the device id must be a lowercase hyphenated, non-nil UUID")
	}
	if o.FirstSeq == 0 {
		return nil, errors.New("attemptdb: source_seq starts at 1 (0 means not ingested)")
	}
	if o.AdapterVersion == "" {
		return nil, errors.New("attemptdb: adapter version is empty")
	}
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10), opts: o, seq: o.FirstSeq}, nil
}

// Add writes the events of one map.
func (w *Writer) Add(m *mapfile.Map) error {
	if w.err != nil {
		return w.err
	}
	c := newConversion(m, w.opts)
	c.flush = func(events []Event) error {
		for i := range events {
			ev := &events[i]
			ev.SourceSeq = w.seq
			line, err := json.Marshal(ev)
			if err != nil {
				return fmt.Errorf("attemptdb: session %s: encode event: %w", m.Session.ID, err)
			}
			if _, err := w.bw.Write(append(line, '\n')); err != nil {
				w.err = err
				return err
			}
			w.seq++
			w.events++
		}
		return nil
	}
	return c.run()
}

// Close flushes the stream.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// NextSeq is the source_seq the next export from this device starts at.
func (w *Writer) NextSeq() uint64 { return w.seq }

// Events is the number of lines written.
func (w *Writer) Events() int { return w.events }
