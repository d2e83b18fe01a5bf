package daemon

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// A second scan lets go of the quiet sessions as it loads them (quiet.go),
// but what the load held while it read the records still grew with them:
// a count of each session's sources, the sessions let go of until they
// were spilled after the load (retiredspill.go), and the quiet logs' table,
// 126 bytes of live heap a session in all (a peak of 104 MiB over 200,000
// sessions, 44 MiB over 10,000). So a one-shot catch-up over more than
// loadPieceSessions sessions loads them in pieces, as `build` builds in
// pieces: a session's piece is its key's hash modulo the number of pieces,
// and each piece is counted, retired and spilled before the next one.
//
// The records are read once: a first walk over the sources decodes each,
// keeps those that are not quiet (they are read whatever happens) and
// writes what the pieces need of each, fixed-size, to a file of the
// load's own (loadScratch): its session's hash, whether it is quiet, and
// for a quiet one what the retired set and the quiet logs' table keep. The
// session keys' hashes, and the sessions named as parents, go there too.
// They are written in chunks by piece (loadedPieces), and each piece then
// reads its own twice (to count its sessions' sources, then to place those
// of the sessions it retired), and walks the session records decoding only
// its own. A quiet source of a session that stays
// (another of its logs changed) is read back by its id. The quiet logs of
// each piece are written to the file as a sorted run; once every piece is
// done, the runs are merged into the table the walk looks logs up in
// (quietTable), on disk.
//
// The file is the scan's alone, as its spill file is (created in the data
// directory, unlinked at once where the system allows it), and holds
// hashes, ids, file identities, sizes and times: no path, no text. When it
// cannot be created or its first walk cannot be written (a full disk),
// the load is made in one piece, in memory, as before; when the quiet
// logs' runs cannot be written, the table stays in memory. A record of it
// that cannot be read back ends the load with an error.
//
// A daemon that follows loads in one piece: it keeps retiring and taking
// up sessions by their paths (retireIdle), which the spill does not keep.

// loadPieceSessions is how many sessions a load takes in one piece (a
// variable: tests cut small loads in pieces). Past it, a piece holds some
// 170 bytes a session while it is read, 5.6 MB, and each piece costs a
// walk over the session records and two reads of the load's file.
var loadPieceSessions = 32768

// loadedInPieces, when set, hears of every load in pieces (tests).
var loadedInPieces func(pieces int)

// loadedSource is what a load in pieces writes of a source, or of a
// session key or a parent named, to its file (loadedSize bytes).
type loadedSource struct {
	kind    loadedKind
	quiet   bool
	missing bool
	session uint64 // the hash of the key of its session (retiredKeyHash)
	id      uint64
	// For a quiet source: its file's identity, and its quiet log (quietLog).
	file        watchers.FileID
	path        uint64
	size, modMs int64
}

type loadedKind uint8

const (
	loadedKey    loadedKind = iota + 1 // a session record's key
	loadedParent                       // a session named as a source's parent
	loadedSrc                          // a source of the session
)

const loadedSize = 2 + 7*8 // kind, flags and seven numbers: 58 bytes

func appendLoaded(b []byte, l loadedSource) []byte {
	var flags byte
	if l.quiet {
		flags |= 1
	}
	if l.missing {
		flags |= 2
	}
	b = append(b, byte(l.kind), flags)
	for _, v := range [...]uint64{l.session, l.id, l.file.Dev, l.file.Ino, l.path, uint64(l.size), uint64(l.modMs)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

func decodeLoaded(b []byte) loadedSource {
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[2+8*i:]) }
	return loadedSource{kind: loadedKind(b[0]), quiet: b[1]&1 != 0, missing: b[1]&2 != 0,
		session: u(0), id: u(1), file: watchers.FileID{Dev: u(2), Ino: u(3)}, path: u(4),
		size: int64(u(5)), modMs: int64(u(6))}
}

// loadScratch is the file of a load in pieces.
type loadScratch struct {
	f     *os.File
	name  string // removed at close where it could not be unlinked at once
	end   int64
	unmap [][]byte // its mappings (quietTable)
}

// Faults of the load's file, for tests: its creation and every read fail
// with them when set, and every write of what (the "sources" of the
// first walk, the quiet logs' "runs", their merged "table") for which
// loadScratchWriteFault returns an error.
var (
	loadScratchCreateFault, loadScratchReadFault error
	loadScratchWriteFault                        func(what string) error
)

func newLoadScratch(dir string) (*loadScratch, error) {
	if loadScratchCreateFault != nil {
		return nil, loadScratchCreateFault
	}
	f, name, err := newScanFile(dir)
	if err != nil {
		return nil, err
	}
	return &loadScratch{f: f, name: name}, nil
}

func (s *loadScratch) close() {
	for _, m := range s.unmap {
		unmapFile(m)
	}
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
}

// appender writes at the file's end through a buffer.
type appender struct {
	s   *loadScratch
	at  int64 // where what it writes starts
	buf *bufio.Writer
	err error
}

// appender writes what (see loadScratchWriteFault).
func (s *loadScratch) appender(what string) *appender {
	return &appender{s: s, at: s.end, buf: bufio.NewWriterSize(scratchWriter{s, what}, 64<<10)}
}

// scratchWriter appends what to the file.
type scratchWriter struct {
	s    *loadScratch
	what string
}

func (w scratchWriter) Write(b []byte) (int, error) {
	if loadScratchWriteFault != nil {
		if err := loadScratchWriteFault(w.what); err != nil {
			return 0, err
		}
	}
	n, err := w.s.f.WriteAt(b, w.s.end)
	w.s.end += int64(n)
	return n, err
}

func (a *appender) write(b []byte) {
	if a.err == nil {
		_, a.err = a.buf.Write(b)
	}
}

// done flushes what is buffered; it returns the first failure to write.
func (a *appender) done() error {
	if a.err == nil {
		a.err = a.buf.Flush()
	}
	return a.err
}

func (s *loadScratch) readAt(b []byte, off int64) error {
	if loadScratchReadFault != nil {
		return loadScratchReadFault
	}
	_, err := s.f.ReadAt(b, off)
	return err
}

// section reads n bytes from off.
func (s *loadScratch) section(off, n int64) io.Reader {
	if loadScratchReadFault != nil {
		return failingReader{loadScratchReadFault}
	}
	return io.NewSectionReader(s.f, off, n)
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

// loadedPieces are the records of a load's first walk in its file, by
// piece: each piece's are buffered and appended to the file in chunks,
// so that a piece reads its own records only (reading the whole file for
// each piece made the load's reads grow as the square of the sessions).
type loadedPieces struct {
	s      *loadScratch
	size   int          // of a chunk
	bufs   [][]byte     // by piece: what is not written yet
	chunks [][][2]int64 // by piece: where its chunks start and end
	err    error
}

func newLoadedPieces(s *loadScratch, pieces int) *loadedPieces {
	// Up to 64 KB a piece, 4 MB in all (120 pieces: some 4 million sessions).
	size := min(max((4<<20)/pieces, 4<<10), 64<<10)
	return &loadedPieces{s: s, size: size, bufs: make([][]byte, pieces), chunks: make([][][2]int64, pieces)}
}

// put adds a record of a piece.
func (p *loadedPieces) put(piece int, rec []byte) {
	b := append(p.bufs[piece], rec...)
	if len(b) >= p.size {
		p.flush(piece, b)
		b = b[:0]
	}
	p.bufs[piece] = b
}

func (p *loadedPieces) flush(piece int, b []byte) {
	if p.err != nil || len(b) == 0 {
		return
	}
	at := p.s.end
	if _, p.err = (scratchWriter{p.s, "sources"}).Write(b); p.err == nil {
		p.chunks[piece] = append(p.chunks[piece], [2]int64{at, p.s.end})
	}
}

// done writes what is buffered; it returns the first failure to write.
func (p *loadedPieces) done() error {
	for piece, b := range p.bufs {
		p.flush(piece, b)
		p.bufs[piece] = nil
	}
	return p.err
}

// each hands fn every record of a piece, in the order they were put.
func (p *loadedPieces) each(piece int, fn func(loadedSource)) error {
	var buf []byte
	for _, c := range p.chunks[piece] {
		buf = slices.Grow(buf[:0], int(c[1]-c[0]))[:c[1]-c[0]]
		if err := p.s.readAt(buf, c[0]); err != nil {
			return fmt.Errorf("read back the load's file: %w", err)
		}
		for i := 0; i+loadedSize <= len(buf); i += loadedSize {
			fn(decodeLoaded(buf[i:]))
		}
	}
	return nil
}

// loadInPieces loads the records of a one-shot catch-up over more than
// loadPieceSessions sessions in pieces (see above); it reports false,
// having kept nothing, when the load is to be made in one piece. keep and
// session are load's: what it does with a record it keeps, and with a
// session record.
func (d *Daemon) loadInPieces(q *quietLoad, keep func(*state.Source), session func(*state.Session) error) (bool, error) {
	var pieced bool
	err := d.db.Read(func(l *state.Loader) error {
		n := 0
		if err := l.SessionKeys(func([]byte) { n++ }); err != nil {
			return err
		}
		if n <= loadPieceSessions {
			return nil
		}
		s, err := newLoadScratch(d.opt.DataDir)
		if err != nil {
			d.log.Warn("the state is loaded in one piece", "component", "daemon", "err", err)
			return nil
		}
		// The file serves the walk after the load too (the quiet logs'
		// table): closed when the scan ends.
		d.closeScratch = s.close
		pieces := (n + loadPieceSessions - 1) / loadPieceSessions
		loaded, kept, err := d.writeLoaded(l, q, newLoadedPieces(s, pieces))
		if err != nil || loaded == nil {
			s.close()
			d.closeScratch = nil
			return err
		}
		pieced = true
		for _, src := range kept {
			keep(src)
		}
		kept = nil
		d.loadPieces = pieces
		if loadedInPieces != nil {
			loadedInPieces(pieces)
		}
		runs := &quietRuns{s: s}
		for k := range pieces {
			if err := d.loadPiece(l, q, loaded, uint64(pieces), uint64(k), keep, session, runs); err != nil {
				return err
			}
		}
		q.groups = nil
		d.quietLogs, err = runs.table()
		if d.quietLogs != nil {
			d.quietLogs.stop = d.stopOnScratch
		}
		return err
	})
	return pieced, err
}

// writeLoaded is a load in pieces' walk over the sources: it writes to w
// the records of the session keys, parents and sources, each to the piece
// of the session it names, and returns w and the source records it keeps;
// no w when the file could not be written.
func (d *Daemon) writeLoaded(l *state.Loader, q *quietLoad, w *loadedPieces) (loaded *loadedPieces, kept []*state.Source, err error) {
	var rec []byte
	pieces := uint64(len(w.bufs))
	put := func(ls loadedSource) {
		rec = appendLoaded(rec[:0], ls)
		w.put(int(ls.session%pieces), rec)
	}
	if err := l.SessionKeys(func(k []byte) {
		put(loadedSource{kind: loadedKey, session: retiredKeyHash(string(k))})
	}); err != nil {
		return nil, nil, err
	}
	if err := l.Sources(func(src *state.Source) error {
		if src.ID >= d.nextID {
			d.nextID = src.ID + 1
		}
		if src.ParentSession != "" {
			put(loadedSource{kind: loadedParent, session: retiredKeyHash(src.ParentSession)})
		}
		if src.Session == "" {
			kept = append(kept, src)
			return nil
		}
		// As park judges it, but for the counts, which need the piece's
		// sessions: a quiet source of a session that stays is read back.
		ls := loadedSource{kind: loadedSrc, session: retiredKeyHash(src.Session), id: src.ID, missing: src.Missing}
		if ls.quiet = src.ID != 0 && quietSource(src, q.roots, q.agents); ls.quiet {
			ls.file = watchers.FileID{Dev: src.Dev, Ino: src.Ino}
			ls.path, ls.size, ls.modMs = quietPathHash(src.Path), src.Offset, src.ModMs
		} else {
			kept = append(kept, src)
		}
		put(ls)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	if err := w.done(); err != nil {
		d.log.Warn("the state is loaded in one piece", "component", "daemon", "err", err)
		return nil, nil, nil
	}
	return w, kept, nil
}

// loadPiece loads the sessions of piece k of n: those whose key's hash is
// k modulo n.
func (d *Daemon) loadPiece(l *state.Loader, q *quietLoad, loaded *loadedPieces, n, k uint64,
	keep func(*state.Source), session func(*state.Session) error, runs *quietRuns) error {
	in := func(h uint64) bool { return h%n == k }
	q.groups = make(map[uint64]quietGroup, loadPieceSessions+loadPieceSessions/4)
	q.quiet, q.retired, q.logs = 0, 0, nil
	// The piece's sessions, those named as parents, and each one's sources
	// counted, as park counts them.
	if err := loaded.each(int(k), func(ls loadedSource) {
		switch ls.kind {
		case loadedKey:
			q.sessionKeyHash(ls.session)
		case loadedParent:
			q.namedParent(ls.session)
		case loadedSrc:
			g, ok := q.groups[ls.session]
			if !ok {
				return // no session record: a quiet source is read back and kept
			}
			g.total++
			if ls.quiet && g.flags&groupShared == 0 {
				g.quiet++
				q.quiet++
				if ls.missing {
					g.gone++
				}
			}
			q.groups[ls.session] = g
		}
	}); err != nil {
		return err
	}
	if err := l.Sessions(func(key []byte) bool { return in(retiredKeyHash(string(key))) }, session); err != nil {
		return err
	}
	// The quiet sources: placed in the retired set, or read back and kept.
	var back []uint64
	if err := loaded.each(int(k), func(ls loadedSource) {
		if ls.kind != loadedSrc || !ls.quiet {
			return
		}
		if !d.retired.place(ls.session, ls.id, ls.file, ls.missing) {
			back = append(back, ls.id)
		} else if !ls.missing {
			q.logs = append(q.logs, quietLog{path: ls.path, id: ls.file, size: ls.size, modMs: ls.modMs})
		}
	}); err != nil {
		return err
	}
	for _, id := range back {
		src, err := l.Source(id)
		if err != nil {
			return err
		}
		keep(src)
	}
	if err := runs.add(q.sortedLogs()); err != nil {
		return err
	}
	q.logs = nil
	if d.retired.spill != nil && len(d.retired.byKey) > 0 {
		d.retired.spillNow()
	}
	return nil
}

// stopOnScratch stops a scan whose load's file cannot be read back (see
// quietTable).
func (d *Daemon) stopOnScratch(err error) {
	d.log.Error("the scan stops: it cannot read back the table of the logs it leaves out; nothing is lost, and a scan again resumes where it stopped",
		"component", "daemon", "err", err)
	exitScan(1)
}

// quietRuns are the quiet logs of a load in pieces, a sorted run a piece
// in the load's file; once a run cannot be written, every quiet log is
// kept in memory (mem).
type quietRuns struct {
	s     *loadScratch
	runs  [][2]int64 // where each run starts and ends
	mem   quietLogs
	inMem bool
}

// add takes the quiet logs of a piece, sorted.
func (r *quietRuns) add(logs quietLogs) error {
	if r.inMem {
		r.mem = append(r.mem, logs...)
		return nil
	}
	w := r.s.appender("runs")
	var rec []byte
	for _, q := range logs {
		rec = appendQuietLog(rec[:0], q)
		w.write(rec)
	}
	if w.done() == nil {
		r.runs = append(r.runs, [2]int64{w.at, r.s.end})
		return nil
	}
	if err := r.toMemory(); err != nil {
		return err
	}
	r.mem = append(r.mem, logs...)
	return nil
}

// toMemory reads the runs written back into memory, where the table is
// kept from then on.
func (r *quietRuns) toMemory() error {
	r.inMem = true
	for _, run := range r.runs {
		b := make([]byte, run[1]-run[0])
		if err := r.s.readAt(b, run[0]); err != nil {
			return fmt.Errorf("read back the load's file: %w", err)
		}
		for i := 0; i < len(b); i += quietLogSize {
			r.mem = append(r.mem, decodeQuietLog(b[i:]))
		}
	}
	r.runs = nil
	return nil
}

// table merges the runs into the quiet logs' table, on disk.
func (r *quietRuns) table() (*quietTable, error) {
	if !r.inMem {
		t, err := r.merge()
		if err != nil || t != nil {
			return t, err
		}
		if err := r.toMemory(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(r.mem, func(a, b quietLog) int { return cmp.Compare(a.path, b.path) })
	return &quietTable{mem: r.mem}, nil
}

// merge writes the runs merged, in order of path hash, and returns them
// as a table; nil when it could not be written.
func (r *quietRuns) merge() (*quietTable, error) {
	type head struct {
		r    *bufio.Reader
		left int64
		q    quietLog
	}
	var rec [quietLogSize]byte
	next := func(h *head) (bool, error) {
		if h.left == 0 {
			return false, nil
		}
		if _, err := io.ReadFull(h.r, rec[:]); err != nil {
			return false, fmt.Errorf("read back the load's file: %w", err)
		}
		h.left--
		h.q = decodeQuietLog(rec[:])
		return true, nil
	}
	var heads []*head
	total := 0
	for _, run := range r.runs {
		n := (run[1] - run[0]) / quietLogSize
		h := &head{r: bufio.NewReaderSize(r.s.section(run[0], run[1]-run[0]), 4096), left: n}
		ok, err := next(h)
		if err != nil {
			return nil, err
		}
		if ok {
			heads = append(heads, h)
		}
		total += int(n)
	}
	t := &quietTable{f: r.s, n: total, index: make([]uint64, 0, (total+quietBlockLogs-1)/quietBlockLogs)}
	w := r.s.appender("table")
	t.at = w.at
	var out []byte
	for k := 0; len(heads) > 0; k++ {
		// The runs are few (one a piece): the least of their heads.
		least := 0
		for i, h := range heads {
			if h.q.path < heads[least].q.path {
				least = i
			}
		}
		h := heads[least]
		if k%quietBlockLogs == 0 {
			t.index = append(t.index, h.q.path)
		}
		out = appendQuietLog(out[:0], h.q)
		w.write(out)
		ok, err := next(h)
		if err != nil {
			return nil, err
		}
		if !ok {
			heads = slices.Delete(heads, least, least+1)
		}
	}
	if w.done() != nil {
		return nil, nil
	}
	t.mapQuietTable()
	return t, nil
}
