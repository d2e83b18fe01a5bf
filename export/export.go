// Package export turns agentplay/v1 maps into the forms other tools read:
// agentplay bundles, JSON lines of canonical maps, AttemptDB Event v1,
// AgentScope traces and Sentience traces. An Exporter takes maps one at a
// time and streams its format; WriteFile writes one export atomically.
// Every format is derived from the map alone, which carries no text, so no
// export can carry text either; docs/exports.md says what each keeps.
package export

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/export/agentscope"
	"github.com/agentmap/agentmap/export/attemptdb"
	"github.com/agentmap/agentmap/export/bundle"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/export/sentience"
)

// Format is an export format.
type Format string

// The formats.
const (
	Bundle     Format = "bundle"
	JSONL      Format = "jsonl"
	AttemptDB  Format = "attemptdb"
	AgentScope Format = "agentscope"
	Sentience  Format = "sentience"
)

// Formats lists every format.
func Formats() []Format { return []Format{Bundle, JSONL, AttemptDB, AgentScope, Sentience} }

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown export format %q (bundle, jsonl, attemptdb, agentscope or sentience)", s)
}

// Ext is the file name suffix of a format's exports.
func (f Format) Ext() string {
	switch f {
	case Bundle:
		return ".tar.gz"
	case JSONL:
		return ".jsonl"
	case AttemptDB:
		return ".attemptdb.jsonl"
	case AgentScope:
		return ".trace.json"
	case Sentience:
		return ".sentience.jsonl"
	}
	return ""
}

// Options tune an export.
type Options struct {
	// PathMode re-renders relative maps in dirs_only or hashed mode before
	// they are exported ("" or relative: as stored). HashKey is the key of
	// hashed mode; without one hashed falls back to dirs_only.
	PathMode redact.Mode
	HashKey  []byte
	// DeviceID and FirstSeq are AttemptDB's device id (kept for ever) and
	// the first source_seq of this export (Result.NextSeq of the previous
	// one; 1 for the first).
	DeviceID string
	FirstSeq uint64
	// Producer is the exporter's version, e.g. "agentmap 0.1.0".
	Producer string
	// Now stamps bundles and dates maps that have no time at all.
	Now time.Time
}

// Result summarises an export.
type Result struct {
	Sessions   int
	Duplicates int    // maps of a session already exported in this stream, skipped
	NextSeq    uint64 // AttemptDB: the FirstSeq of the next export
}

// Exporter writes one export stream.
type Exporter struct {
	format Format
	opts   Options
	seen   map[string]bool
	res    Result
	bundle *bundle.Writer
	jsonl  *bufio.Writer
	adb    *attemptdb.Writer
	scope  *agentscope.Writer
	sent   *sentience.Writer
}

// New starts an export of format f on w.
func New(f Format, w io.Writer, o Options) (*Exporter, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Producer == "" {
		o.Producer = "agentmap"
	}
	switch o.PathMode {
	case "", redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed:
	default:
		return nil, fmt.Errorf("export: unknown path mode %q", o.PathMode)
	}
	x := &Exporter{format: f, opts: o, seen: map[string]bool{}, res: Result{NextSeq: o.FirstSeq}}
	switch f {
	case Bundle:
		x.bundle = bundle.NewWriter(w, o.Now)
	case JSONL:
		x.jsonl = bufio.NewWriterSize(w, 64<<10)
	case AttemptDB:
		adb, err := attemptdb.NewWriter(w, attemptdb.Options{DeviceID: o.DeviceID, FirstSeq: o.FirstSeq,
			AdapterVersion: o.Producer, Undated: o.Now})
		if err != nil {
			return nil, err
		}
		x.adb = adb
	case AgentScope:
		x.scope = agentscope.NewWriter(w)
	case Sentience:
		x.sent = sentience.NewWriter(w, sentience.Options{Undated: o.Now})
	default:
		return nil, fmt.Errorf("export: unknown format %q", f)
	}
	return x, nil
}

// Add exports one map. A second map of a session already in the stream is
// skipped (counted in Result.Duplicates): ids derive from the session, so
// a stream must hold each session once.
func (x *Exporter) Add(d *mapfile.Doc) error {
	if x.seen[d.Map.Session.ID] {
		x.res.Duplicates++
		return nil
	}
	d, err := mapfile.Rerender(d, x.opts.PathMode, x.opts.HashKey)
	if err != nil {
		return err
	}
	x.seen[d.Map.Session.ID] = true
	switch x.format {
	case Bundle:
		err = x.bundle.Add(d)
	case JSONL:
		_, err = x.jsonl.Write(append(append([]byte(nil), d.Canonical...), '\n'))
	case AttemptDB:
		err = x.adb.Add(d.Map)
	case AgentScope:
		err = x.scope.Add(d.Map)
	case Sentience:
		err = x.sent.Add(d.Map)
	}
	if err != nil {
		return err
	}
	x.res.Sessions++
	return nil
}

// Close ends the stream.
func (x *Exporter) Close() (Result, error) {
	var err error
	switch x.format {
	case Bundle:
		err = x.bundle.Close()
	case JSONL:
		err = x.jsonl.Flush()
	case AttemptDB:
		err = x.adb.Close()
		x.res.NextSeq = x.adb.NextSeq()
	case AgentScope:
		err = x.scope.Close()
	case Sentience:
		err = x.sent.Close()
	}
	return x.res, err
}

// ErrEmpty means an export had no map to write.
var ErrEmpty = errors.New("export: no session map to export")

// Gzipped reports whether an output name asks for a gzipped stream (every
// format but a bundle, which is always gzipped).
func Gzipped(f Format, name string) bool {
	return f != Bundle && strings.HasSuffix(name, ".gz")
}
