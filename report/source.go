package report

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"

	"github.com/agentmap/agentmap/internal/regular"
)

// Map is a decoded agentplay/v1 map, the view the exporters read too.
type Map = mapfile.Map

// Source yields decoded maps; see the package documentation.
type Source interface {
	Maps(ctx context.Context, f Filter) iter.Seq2[*Map, error]
}

// Filter selects sessions. The zero Filter keeps every map.
type Filter struct {
	// Since and Until bound the session start: Since <= start < Until.
	// A zero bound is open.
	Since, Until time.Time
	// Agent is an agent name: the map's agentTool (claude-code) or its
	// first word (claude), case-insensitive.
	Agent string
	// Repo is a glob (path.Match, case-insensitive) one of the session's
	// repository names must match.
	Repo string
	// Session is a session id (session.id, the agent's native id, or
	// agent/native id) or a prefix of one.
	Session string
	// Outcome is a session.outcome of the format, case-insensitive.
	Outcome string
}

// Keep reports whether m passes the filter.
func (f Filter) Keep(m *Map) bool {
	if f.Agent != "" && !agentMatches(m.Session.AgentTool, f.Agent) {
		return false
	}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		start, ok := m.Start()
		if !ok || (!f.Since.IsZero() && start.Before(f.Since)) || (!f.Until.IsZero() && !start.Before(f.Until)) {
			return false
		}
	}
	if f.Repo != "" {
		found := false
		for _, r := range m.Repos {
			if ok, _ := path.Match(strings.ToLower(f.Repo), strings.ToLower(r.Name)); ok {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if f.Session != "" && !SessionMatches(m, f.Session) {
		return false
	}
	if f.Outcome != "" && !strings.EqualFold(m.Session.Outcome, f.Outcome) {
		return false
	}
	return true
}

// SessionMatches reports whether id names m or is a prefix of its name:
// session.id, the native id, or agent/native id as `agentmap list` keys it.
func SessionMatches(m *Map, id string) bool {
	if strings.HasPrefix(m.Session.ID, id) || strings.HasPrefix(m.Session.NativeID(), id) {
		return true
	}
	agent, rest, ok := strings.Cut(id, "/")
	return ok && agentMatches(m.Session.AgentTool, agent) && strings.HasPrefix(m.Session.NativeID(), rest)
}

func agentMatches(tool, want string) bool {
	return strings.EqualFold(tool, want) || strings.EqualFold(AgentName(tool), want)
}

// AgentName is the name the command line gives the agent of a map's
// agentTool, and takes in --agent: its first word (claude for
// claude-code, gemini for gemini-cli, codex for codex). list and show
// name agents so, and the usage table's rows do too, so that a session
// reads the same in every command.
func AgentName(tool string) string {
	first, _, _ := strings.Cut(tool, "-")
	return first
}

// Decode reads one map, gzipped or plain JSON. Unlike mapfile.Read it
// does not compute the canonical form, which a report never needs and
// which would triple the cost of reading ten thousand maps. Errors say
// what is wrong, never what the input holds.
func Decode(r io.Reader) (*Map, error) {
	br := bufio.NewReader(r)
	var src io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, errors.New("bad gzip header")
		}
		defer zr.Close()
		src = zr
	}
	raw, err := io.ReadAll(io.LimitReader(src, mapfile.MaxMapBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(raw) > mapfile.MaxMapBytes {
		return nil, fmt.Errorf("larger than %d bytes inflated", mapfile.MaxMapBytes)
	}
	m, err := decodeMap(raw)
	if err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, fmt.Errorf("invalid JSON at offset %d", syn.Offset)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("field %s has the wrong type", typ.Field)
		}
		return nil, errors.New("invalid JSON")
	}
	if m.Schema != "agentplay/v1" && m.Schema != "entelligence.session-map/v1" {
		return nil, mapfile.ErrNotMap
	}
	if m.Session.ID == "" {
		return nil, fmt.Errorf("%w: no session.id", mapfile.ErrNotMap)
	}
	return m, nil
}

// decodeMap is json.Unmarshal of a map: mapfile.DecodeJSON reads the
// compact JSON maps are written in nearly a quarter of the time, and leaves
// the rest (and every error) to encoding/json.
func decodeMap(raw []byte) (*Map, error) {
	if m, ok := mapfile.DecodeJSON(raw); ok {
		return m, nil
	}
	m := new(Map)
	return m, json.Unmarshal(raw, m)
}

// Dir is a directory of maps (the local map store, or any folder of
// .json.gz and .json files), searched recursively. Hidden files are
// skipped, as the store's temporary files are hidden.
type Dir string

// Maps implements Source.
func (d Dir) Maps(ctx context.Context, f Filter) iter.Seq2[*Map, error] {
	var rels []string
	err := filepath.WalkDir(string(d), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !(strings.HasSuffix(name, ".json.gz") || strings.HasSuffix(name, ".json")) {
			return nil
		}
		rel, _ := filepath.Rel(string(d), p)
		rels = append(rels, rel)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) && len(rels) == 0 {
		if _, statErr := os.Stat(string(d)); errors.Is(statErr, fs.ErrNotExist) {
			err = nil // no map written yet: an empty store
		}
	}
	if err != nil {
		return func(yield func(*Map, error) bool) { yield(nil, fmt.Errorf("read maps in %s: %w", d, err)) }
	}
	return Files{Root: string(d), Paths: rels, skipOthers: true}.Maps(ctx, f)
}

// Files are named map files under Root (Paths relative to it), as the
// daemon's listing names the maps of its store.
type Files struct {
	Root  string
	Paths []string
	// skipOthers passes over plain .json files that are not maps (a
	// directory may hold exports beside its maps).
	skipOthers bool
}

// Maps implements Source.
func (s Files) Maps(ctx context.Context, f Filter) iter.Seq2[*Map, error] {
	return decodeAll(ctx, f, s.skipOthers, func(emit func(name string, open func() (io.ReadCloser, error)) bool) error {
		for _, rel := range s.Paths {
			p := filepath.Join(s.Root, rel)
			// A walk's files, a store's and one named as --maps are read
			// as maps: a named pipe among them is an error, not a wait.
			if !emit(p, func() (io.ReadCloser, error) { return regular.Open(p) }) {
				return nil
			}
		}
		return nil
	})
}

// Bundle is an agentmap bundle (.tar.gz of .json.gz maps and a manifest),
// as `agentmap export --format bundle` writes and as someone may send (or
// the same tar not gzipped).
type Bundle string

// maxBundleEntry bounds one member of a bundle before inflation: a gzipped
// map is far smaller than mapfile.MaxMapBytes.
const maxBundleEntry = mapfile.MaxMapBytes

// Maps implements Source.
func (b Bundle) Maps(ctx context.Context, f Filter) iter.Seq2[*Map, error] {
	return decodeAll(ctx, f, false, b.each)
}

// each emits the bundle's maps (tarMaps).
func (b Bundle) each(emit func(name string, open func() (io.ReadCloser, error)) bool) error {
	file, err := os.Open(string(b))
	if err != nil {
		return fmt.Errorf("open bundle: %w", err)
	}
	defer file.Close()
	r, err := lineReader(file) // a tar, inflated when gzipped
	if err != nil {
		return fmt.Errorf("bundle %s: not a gzipped tar", b)
	}
	return tarMaps(string(b), r, emit)
}

// tarMaps emits the maps of a bundle's tar stream r (the members that are
// .json or .json.gz files, its manifest aside); errors name the bundle.
func tarMaps(bundle string, r io.Reader, emit func(name string, open func() (io.ReadCloser, error)) bool) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("bundle %s: %w", bundle, err)
		}
		name := hdr.Name
		if hdr.Typeflag != tar.TypeReg || path.Base(name) == "manifest.json" ||
			!(strings.HasSuffix(name, ".json.gz") || strings.HasSuffix(name, ".json")) {
			continue
		}
		body, err := io.ReadAll(io.LimitReader(tr, maxBundleEntry+1))
		if err != nil {
			return fmt.Errorf("bundle %s: %s: %w", bundle, name, err)
		}
		if len(body) > maxBundleEntry {
			return fmt.Errorf("bundle %s: %s: too large", bundle, name)
		}
		if !emit(bundle+":"+name, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }) {
			return nil
		}
	}
}

// Lines is a file of maps one a line, as `agentmap export --format jsonl`
// writes it, gzipped or not: a file someone may send as well as a bundle.
type Lines string

// Maps implements Source. A file whose first line is not a map (another
// export's lines: AttemptDB events, a Sentience trace) ends at once with
// one error that says so, not one per line.
func (l Lines) Maps(ctx context.Context, f Filter) iter.Seq2[*Map, error] {
	return decodeAll(ctx, f, false, l.each)
}

// each emits the file's maps, one a line (lineMaps).
func (l Lines) each(emit func(name string, open func() (io.ReadCloser, error)) bool) error {
	file, err := os.Open(string(l))
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer file.Close()
	lines, err := lineReader(file)
	if err != nil {
		return fmt.Errorf("%s: %w", l, err)
	}
	return lineMaps(string(l), lines, emit)
}

// lineMaps emits the maps of r, one a line; errors name the file.
func lineMaps(file string, r *bufio.Reader, emit func(name string, open func() (io.ReadCloser, error)) bool) error {
	first := true
	for n := 1; ; n++ {
		line, err := readMapLine(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", file, n, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if first {
			first = false
			var head struct {
				Schema string `json:"schema"`
			}
			if json.Unmarshal(line, &head) != nil || head.Schema != "agentplay/v1" && head.Schema != "entelligence.session-map/v1" {
				return fmt.Errorf("%s: line %d is not a session map (an AttemptDB, AgentScope or Sentience export?): maps are read from a directory, a map file, a bundle or a jsonl export", file, n)
			}
		}
		if !emit(fmt.Sprintf("%s:%d", file, n), func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(line)), nil }) {
			return nil
		}
	}
}

// lineReader reads r, inflated when it is gzipped.
func lineReader(r io.Reader) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("not gzip: %w", err)
		}
		return bufio.NewReaderSize(zr, 1<<16), nil
	}
	return br, nil
}

// maxMapLine is the longest line a map may be (a variable for the tests).
var maxMapLine = mapfile.MaxMapBytes

// readMapLine returns the next line of r, without its newline, in a slice
// of its own; a line longer than a map may be is an error, read no
// further, so that a file with no newline cannot fill the memory.
func readMapLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxMapLine+1 {
			return nil, fmt.Errorf("longer than %d bytes", maxMapLine)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		case err != nil:
			return nil, err
		}
		return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), nil
	}
}

// IsLines reports whether the file at p holds maps one a line: its first
// line a JSON value and more after it (a single map file is one value,
// with at most a newline after it).
func IsLines(p string) bool {
	file, err := os.Open(p)
	if err != nil {
		return false
	}
	defer file.Close()
	r, err := lineReader(file)
	if err != nil {
		return false
	}
	first, err := readMapLine(r)
	if err != nil || !json.Valid(first) {
		return false
	}
	for {
		next, err := readMapLine(r)
		if err != nil {
			return false
		}
		if len(bytes.TrimSpace(next)) > 0 {
			return true
		}
	}
}

type decoded struct {
	m   *Map
	err error
}

// decodeAll decodes the inputs list names on every core and yields the
// maps that pass f. list stops early when emit returns false.
func decodeAll(ctx context.Context, f Filter, skipOthers bool, list func(emit func(name string, open func() (io.ReadCloser, error)) bool) error) iter.Seq2[*Map, error] {
	return func(yield func(*Map, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type job struct {
			name string
			open func() (io.ReadCloser, error)
		}
		jobs := make(chan job, 64)
		out := make(chan decoded, 64)
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for j := range jobs {
					var d decoded
					r, err := j.open()
					if err == nil {
						d.m, err = Decode(r)
						r.Close()
					}
					if err != nil {
						if skipOthers && errors.Is(err, mapfile.ErrNotMap) && strings.HasSuffix(j.name, ".json") {
							continue
						}
						d.err = fmt.Errorf("%s: %w", j.name, err)
					} else if !f.Keep(d.m) {
						continue
					}
					select {
					case out <- d:
					case <-ctx.Done():
						return
					}
				}
			})
		}
		go func() {
			err := list(func(name string, open func() (io.ReadCloser, error)) bool {
				select {
				case jobs <- job{name, open}:
					return true
				case <-ctx.Done():
					return false
				}
			})
			close(jobs)
			wg.Wait()
			if err != nil {
				select {
				case out <- decoded{err: err}:
				case <-ctx.Done():
				}
			}
			close(out)
		}()
		for d := range out {
			if ctx.Err() != nil {
				break
			}
			if !yield(d.m, d.err) {
				break
			}
		}
		cancel()
		for range out { // let the workers finish
		}
	}
}

// Collect reads every map of src that passes f. Unreadable maps are
// returned as errors beside the maps that could be read.
func Collect(ctx context.Context, src Source, f Filter) ([]*Map, []error) {
	var maps []*Map
	errs := CollectEach(ctx, src, f, func(m *Map) { maps = append(maps, m) })
	return maps, errs
}

// CollectEach hands each map of src that passes f to each, in the order
// Collect lists them, without holding them: a caller that keeps a small
// part of each (a usage table) reads any number of maps. Unreadable maps
// are returned as errors.
func CollectEach(ctx context.Context, src Source, f Filter, each func(*Map)) []error {
	var errs []error
	for m, err := range src.Maps(ctx, f) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		each(m)
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// Raw hands each map of the bundle to each, undecoded (gzipped or not, as
// the bundle holds it), by the name errors give it (bundle:member): what
// `agentmap validate` checks. It stops when each returns false.
func (b Bundle) Raw(each func(name string, data []byte) bool) error { return b.each(rawEmit(each)) }

// Raw hands each map of the file, one a line, to each, undecoded, by the
// name errors give it (file:line).
func (l Lines) Raw(each func(name string, data []byte) bool) error { return l.each(rawEmit(each)) }

// rawEmit is the emit of tarMaps and lineMaps for each, which takes the
// bytes themselves.
func rawEmit(each func(name string, data []byte) bool) func(name string, open func() (io.ReadCloser, error)) bool {
	return func(name string, open func() (io.ReadCloser, error)) bool {
		rc, err := open()
		if err != nil {
			return each(name, nil)
		}
		defer rc.Close()
		data, _ := io.ReadAll(rc) // in memory already
		return each(name, data)
	}
}
