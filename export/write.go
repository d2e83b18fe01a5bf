package export

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/state/durable"
)

// Selection picks maps: Since keeps sessions that started at or after it
// (a map with no time is judged by its file's modification time); zero
// keeps all.
type Selection struct {
	Since time.Time
	// Until, when set, keeps sessions started before it.
	Until time.Time
	// Match, when set, keeps only the maps it accepts (the repository and
	// outcome selectors of the command line).
	Match func(*mapfile.Map) bool
}

func (s Selection) keep(d *mapfile.Doc, file string) bool {
	if s.Match != nil && !s.Match(d.Map) {
		return false
	}
	if s.Since.IsZero() && s.Until.IsZero() {
		return true
	}
	start, ok := d.Map.Start()
	if !ok {
		fi, err := os.Stat(file)
		if err != nil {
			return false
		}
		start = fi.ModTime()
	}
	return !start.Before(s.Since) && (s.Until.IsZero() || start.Before(s.Until))
}

// Write exports the map files in files to w, in order, one map in memory
// at a time. A file that cannot be read as a map is passed to bad (with an
// error that names the problem, never the content) and left out; gz
// gzips the line formats' stream. A failed write to w (a full disk or
// device) ends the export with that error: it is the output's, not a
// map's, and every map after it would fail the same way.
func Write(w io.Writer, f Format, o Options, gz bool, sel Selection, files []string, bad func(file string, err error)) (Result, error) {
	return write(&stickyWriter{w: w}, f, o, gz, sel, files, bad)
}

// write is Write to out, whose err is the output's failure, if any.
func write(out *stickyWriter, f Format, o Options, gz bool, sel Selection, files []string, bad func(file string, err error)) (Result, error) {
	s, err := newStream(out, f, o, gz)
	if err != nil {
		return Result{}, err
	}
	for _, file := range files {
		d, err := mapfile.ReadFile(file)
		if err == nil && !sel.keep(d, file) {
			continue
		}
		if err == nil {
			err = s.x.Add(d)
		}
		if out.err != nil {
			return Result{}, out.err
		}
		if err != nil {
			if bad == nil {
				return Result{}, fmt.Errorf("%s: %w", file, err)
			}
			bad(file, err)
		}
	}
	res, err := s.close()
	if out.err != nil {
		return Result{}, out.err
	}
	return res, err
}

// stickyWriter keeps the first error of its writer and writes nothing
// after it, so that Write can tell a failed output from a bad map.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	s.err = err
	return n, err
}

// stream is one format's exporter over an output, gzipped when asked.
type stream struct {
	x  *Exporter
	zw *gzip.Writer
}

func newStream(w io.Writer, f Format, o Options, gz bool) (*stream, error) {
	s := &stream{}
	if gz && f != Bundle {
		s.zw = gzip.NewWriter(w)
		w = s.zw
	}
	x, err := New(f, w, o)
	if err != nil {
		return nil, err
	}
	s.x = x
	return s, nil
}

// close ends the format's stream and then the gzip stream around it.
func (s *stream) close() (Result, error) {
	res, err := s.x.Close()
	if err != nil {
		return res, err
	}
	if s.zw != nil {
		if err := s.zw.Close(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// WriteFile is Write to a file, atomically: the export is written to a
// temporary file beside target, synced, and renamed over it, so a reader
// (or a crash) never sees half an export. Files are 0600. A name ending in
// .gz gzips the line formats. Nothing is written when no map is selected.
// Target is the user's (durable.CreateOutput): a symbolic link is followed
// and the file it leads to replaced; a device or a FIFO is written through
// as the export is made, and gets what the format writes for no map too.
func WriteFile(target string, format Format, o Options, sel Selection, files []string, bad func(string, error)) (Result, error) {
	out, err := durable.CreateOutput(target, 0o600)
	if err != nil {
		return Result{}, fmt.Errorf("export to %s: %w", target, err)
	}
	defer out.Abort()
	w := &stickyWriter{w: out}
	res, err := write(w, format, o, Gzipped(format, target), sel, files, bad)
	if w.err != nil {
		return Result{}, fmt.Errorf("export to %s: %w", target, w.err)
	}
	if err != nil {
		return Result{}, err
	}
	if res.Sessions == 0 {
		return Result{}, ErrEmpty
	}
	if err := out.Commit(); err != nil {
		return Result{}, fmt.Errorf("export to %s: %w", target, err)
	}
	return res, nil
}

// StoreFiles lists the map files of a store (<data dir>/maps), sorted by
// agent, month and name; agent ("" for all) is the store's agent folder
// (claude, codex, cursor) or its agentTool name. Months before since's
// month are not listed.
func StoreFiles(mapsDir, agent string, since time.Time) ([]string, error) {
	switch agent {
	case "claude-code":
		agent = "claude"
	}
	var out []string
	agents, err := os.ReadDir(mapsDir)
	if err != nil {
		return nil, fmt.Errorf("read store %s: %w", mapsDir, err)
	}
	for _, a := range agents {
		if !a.IsDir() || (agent != "" && a.Name() != agent) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(mapsDir, a.Name()), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			name := d.Name()
			if len(name) < 8 || name[0] == '.' || name[len(name)-8:] != ".json.gz" {
				return nil
			}
			if !since.IsZero() && beforeMonth(p, since) {
				return nil
			}
			out = append(out, p)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read store %s: %w", mapsDir, err)
		}
	}
	return out, nil
}

// beforeMonth reports whether a store path's <yyyy>/<mm> folders name a
// month before since's (the folders are the session start month, UTC).
func beforeMonth(p string, since time.Time) bool {
	mm := filepath.Base(filepath.Dir(p))
	yyyy := filepath.Base(filepath.Dir(filepath.Dir(p)))
	t, err := time.Parse("2006/01", yyyy+"/"+mm)
	if err != nil || t.Year() < 1971 {
		return false // not a dated folder: let the map's own time decide
	}
	s := since.UTC()
	return t.Before(time.Date(s.Year(), s.Month(), 1, 0, 0, 0, 0, time.UTC))
}
