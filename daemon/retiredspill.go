package daemon

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentmap/agentmap/watchers"
)

// A one-shot catch-up keeps of each session it lets go of some 60 to 90
// bytes (retiredset.go): over 100,000 sessions, 7 MB of a scan's 16 MB of
// live heap, the one part of it that grew with the sessions met. Such a
// scan spills the sessions it has let go of to a file of its own once
// there are retiredSpillAt of them in memory: they are written there as sorted
// runs of fixed-size records, and what stays in memory of each run is a
// Bloom filter of its sessions' key hashes and one of its logs'
// identities, some 2.5 to 3 bytes a session. Nearly every question the scan
// asks of the set is about a session or a log it has not let go of (a new
// log, a new session key), which the filters answer without reading the
// file; the rest (a subagent log met after its session was written, a log
// renamed while the scan ran, and the filters' false positives, 1 in 120)
// read the records of the runs whose filters say maybe, a binary search
// of a few reads each.
//
// The set answers as before: a session is taken up again from a run as
// from memory, and a run's record is then marked gone (in memory: such
// sessions are few, but for a rewrite of every map, which takes each up
// once: a map entry each, a few MB at 100,000 sessions), as is the identity of a log that a newer retired
// session takes over (an inode reused), so that the newest holder of an
// identity answers, as the map in memory did. A daemon that follows never
// spills: it takes sessions up and lets them go for as long as it runs,
// and hears of them by path (retireIdle), which the runs do not keep.
//
// The file is the scan's alone: created in the data directory, unlinked
// at once where the system allows it (so that nothing is left after a
// crash), and otherwise removed at the end or by the next scan. It holds session-key hashes,
// source ids and file identities, no text. When it cannot be written (a
// full disk), the sessions stay in memory, as before. When a record cannot
// be read back, the scan does not know whether a session or a log it meets
// is one it let go of, and any answer could have it write a session's
// records or map without what it holds already: it stops there, logging
// why, with the exit status of an error, as it would have stopped had it
// been killed. Nothing is lost: every session let go of was committed and
// written, and a scan again resumes from the state database as after a
// crash (TestSpillUnreadableStopsTheScan).

// retiredSpillAt is how many sessions let go of stay in memory before
// they are spilled (a variable: tests spill after every session).
var retiredSpillAt = 16384

// Record layouts, little-endian.
const (
	// key record: hash, at (index of its first id in the run's ids),
	// n (ids), logs, held (u16), flags (u8), agent (u8).
	spillKeySize = 24
	// file record: dev, ino, hash of its session's key.
	spillFileSize = 24
)

// retiredSpill is the file of a scan's spilled runs.
type retiredSpill struct {
	f    *os.File
	name string // removed at close where it could not be unlinked at once
	end  int64
	runs []*retiredRun
	n    int   // sessions spilled and not taken up again
	err  error // the first failure to read a record back
	// writeErr is the failure to write a run: the sessions then stay in
	// memory, and no more are spilled.
	writeErr error
	// stop ends the scan on a failure to read a record back (see above);
	// nil in tests of the set alone.
	stop func(error)
}

// retiredRun is one spill: the sessions in memory at that moment, sorted.
type retiredRun struct {
	keyAt, fileAt, idsAt int64
	keys, files          int
	keyBloom, fileBloom  bloom
	goneKeys             map[uint64]bool
	goneFiles            map[watchers.FileID]bool
}

// spillRetired lets a one-shot catch-up spill the sessions it lets go of,
// from its load on (which spills them itself once they are placed:
// retiredSet.holdSpill), to a file in the data directory; it
// returns what closes the file. Without the file (it cannot be created)
// they stay in memory, as before.
func (d *Daemon) spillRetired() (done func()) {
	// A file left by a run that could not unlink it at once and crashed.
	if entries, err := os.ReadDir(d.opt.DataDir); err == nil {
		for _, e := range entries {
			if name := e.Name(); strings.HasPrefix(name, ".retired-") && strings.HasSuffix(name, ".tmp") {
				os.Remove(filepath.Join(d.opt.DataDir, name))
			}
		}
	}
	s, err := newRetiredSpill(d.opt.DataDir)
	if err != nil {
		d.log.Warn("the sessions let go of stay in memory", "component", "daemon", "err", err)
		return func() {}
	}
	s.stop = func(err error) {
		d.log.Error("the scan stops: it cannot read back the sessions it let go of; nothing is lost, and a scan again resumes where it stopped",
			"component", "daemon", "err", err)
		exitScan(1)
	}
	d.retired.spill = s
	return func() {
		if s.writeErr != nil {
			d.log.Warn("the sessions let go of stayed in memory", "component", "daemon", "err", s.writeErr)
		}
		if spillsLeftOpen != nil {
			*spillsLeftOpen = append(*spillsLeftOpen, s)
			return
		}
		s.close()
	}
}

// spillsLeftOpen, when set, takes the spill files of the scans that end
// instead of their being closed: tests look at the retired set after a
// scan, and close them.
var spillsLeftOpen *[]*retiredSpill

// newRetiredSpill creates the spill file in dir.
func newRetiredSpill(dir string) (*retiredSpill, error) {
	f, name, err := newScanFile(dir)
	if err != nil {
		return nil, err
	}
	return &retiredSpill{f: f, name: name}, nil
}

// newScanFile creates a file of a scan's own in dir, unlinked at once
// where the system allows it, so that nothing is left after a crash; name
// is where it could not be (to be removed at its close, and by the next
// scan: spillRetired).
func newScanFile(dir string) (f *os.File, name string, err error) {
	f, err = os.CreateTemp(dir, ".retired-*.tmp")
	if err != nil {
		return nil, "", err
	}
	if os.Remove(f.Name()) != nil {
		name = f.Name()
	}
	return f, name, nil
}

func (s *retiredSpill) close() {
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
}

// write appends a run of the given sessions (refs and their ids) and file
// identities. On a failure nothing is added (the caller keeps them).
func (s *retiredSpill) write(refs map[uint64]retiredRef, ids []uint64, files map[watchers.FileID]uint64) error {
	hashes := make([]uint64, 0, len(refs))
	for h := range refs {
		hashes = append(hashes, h)
	}
	slices.Sort(hashes)
	fileIDs := make([]watchers.FileID, 0, len(files))
	for id := range files {
		fileIDs = append(fileIDs, id)
	}
	slices.SortFunc(fileIDs, compareFileIDs)
	nids := 0
	for _, r := range refs {
		nids += int(r.n)
	}
	buf := make([]byte, 0, len(hashes)*spillKeySize+len(fileIDs)*spillFileSize+nids*8)
	run := &retiredRun{keys: len(hashes), files: len(fileIDs),
		keyBloom: newBloom(len(hashes)), fileBloom: newBloom(len(fileIDs))}
	run.keyAt = s.end
	at := uint32(0)
	for _, h := range hashes {
		r := refs[h]
		buf = binary.LittleEndian.AppendUint64(buf, h)
		buf = binary.LittleEndian.AppendUint32(buf, at)
		buf = binary.LittleEndian.AppendUint32(buf, r.n)
		buf = binary.LittleEndian.AppendUint32(buf, r.logs)
		buf = binary.LittleEndian.AppendUint16(buf, r.held)
		buf = append(buf, byte(r.flags), r.agent)
		at += r.n
		run.keyBloom.add(h)
	}
	run.fileAt = s.end + int64(len(buf))
	for _, id := range fileIDs {
		buf = binary.LittleEndian.AppendUint64(buf, id.Dev)
		buf = binary.LittleEndian.AppendUint64(buf, id.Ino)
		buf = binary.LittleEndian.AppendUint64(buf, files[id])
		run.fileBloom.add(fileIDHash(id))
	}
	run.idsAt = s.end + int64(len(buf))
	for _, h := range hashes {
		r := refs[h]
		for _, id := range ids[r.at : r.at+r.n] {
			buf = binary.LittleEndian.AppendUint64(buf, id)
		}
	}
	if _, err := s.f.WriteAt(buf, s.end); err != nil {
		return err
	}
	s.end += int64(len(buf))
	s.runs = append(s.runs, run)
	s.n += len(hashes)
	return nil
}

func compareFileIDs(a, b watchers.FileID) int {
	if a.Dev != b.Dev {
		if a.Dev < b.Dev {
			return -1
		}
		return 1
	}
	switch {
	case a.Ino < b.Ino:
		return -1
	case a.Ino > b.Ino:
		return 1
	}
	return 0
}

// spilledRef is a session found in a run.
type spilledRef struct {
	run *retiredRun
	ref retiredRef // at indexes the run's ids
}

// key finds the session of hash h in the runs, newest first, leaving out
// those taken up again. An error (a record not read) says that it is not
// known whether h was spilled.
func (s *retiredSpill) key(h uint64) (spilledRef, bool, error) {
	for i := len(s.runs) - 1; i >= 0; i-- {
		run := s.runs[i]
		if run.goneKeys[h] || !run.keyBloom.has(h) {
			continue
		}
		ref, ok, err := s.searchKey(run, h)
		if err != nil {
			s.fail(err)
			return spilledRef{}, false, err
		}
		if ok {
			return spilledRef{run, ref}, true, nil
		}
	}
	return spilledRef{}, false, nil
}

// file finds the session hash of the newest run holding a log of identity
// id; a run whose record of it is gone answers that none does.
func (s *retiredSpill) file(id watchers.FileID) (uint64, *retiredRun, bool, error) {
	fh := fileIDHash(id)
	for i := len(s.runs) - 1; i >= 0; i-- {
		run := s.runs[i]
		if !run.fileBloom.has(fh) {
			continue
		}
		h, ok, err := s.searchFile(run, id)
		if err != nil {
			s.fail(err)
			return 0, nil, false, err
		}
		if ok {
			if run.goneFiles[id] {
				return 0, nil, false, nil
			}
			return h, run, true, nil
		}
	}
	return 0, nil, false, nil
}

// spillReadFault, when set, is the error of every read of the spill file
// (tests).
var spillReadFault error

// readAt reads a record of the spill file.
func (s *retiredSpill) readAt(b []byte, off int64) error {
	if spillReadFault != nil {
		return spillReadFault
	}
	_, err := s.f.ReadAt(b, off)
	return err
}

// searchKey is a binary search of a run's key records.
func (s *retiredSpill) searchKey(run *retiredRun, h uint64) (retiredRef, bool, error) {
	var rec [spillKeySize]byte
	lo, hi := 0, run.keys
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if err := s.readAt(rec[:], run.keyAt+int64(mid)*spillKeySize); err != nil {
			return retiredRef{}, false, err
		}
		switch k := binary.LittleEndian.Uint64(rec[0:]); {
		case k < h:
			lo = mid + 1
		case k > h:
			hi = mid
		default:
			return retiredRef{
				at:    binary.LittleEndian.Uint32(rec[8:]),
				n:     binary.LittleEndian.Uint32(rec[12:]),
				logs:  binary.LittleEndian.Uint32(rec[16:]),
				held:  binary.LittleEndian.Uint16(rec[20:]),
				flags: refFlags(rec[22]),
				agent: rec[23],
			}, true, nil
		}
	}
	return retiredRef{}, false, nil
}

// searchFile is a binary search of a run's file records.
func (s *retiredSpill) searchFile(run *retiredRun, id watchers.FileID) (uint64, bool, error) {
	var rec [spillFileSize]byte
	lo, hi := 0, run.files
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if err := s.readAt(rec[:], run.fileAt+int64(mid)*spillFileSize); err != nil {
			return 0, false, err
		}
		got := watchers.FileID{Dev: binary.LittleEndian.Uint64(rec[0:]), Ino: binary.LittleEndian.Uint64(rec[8:])}
		switch c := compareFileIDs(got, id); {
		case c < 0:
			lo = mid + 1
		case c > 0:
			hi = mid
		default:
			return binary.LittleEndian.Uint64(rec[16:]), true, nil
		}
	}
	return 0, false, nil
}

// each calls fn with every spilled session not taken up again.
func (s *retiredSpill) each(fn func(h uint64, ids []uint64)) {
	type found struct {
		h   uint64
		ids []uint64
	}
	var all []found // fn takes sessions up, which changes the runs
	var rec [spillKeySize]byte
	for _, run := range s.runs {
		for i := range run.keys {
			if err := s.readAt(rec[:], run.keyAt+int64(i)*spillKeySize); err != nil {
				s.fail(err)
				return
			}
			h := binary.LittleEndian.Uint64(rec[0:])
			if run.goneKeys[h] {
				continue
			}
			if sr, ok, _ := s.key(h); ok && sr.run == run { // the newest of h's records answers
				all = append(all, found{h, s.ids(sr)})
			}
		}
	}
	for _, f := range all {
		fn(f.h, f.ids)
	}
}

// ids reads a spilled session's source ids; nil when they cannot be read.
func (s *retiredSpill) ids(sr spilledRef) []uint64 {
	buf := make([]byte, int(sr.ref.n)*8)
	if err := s.readAt(buf, sr.run.idsAt+int64(sr.ref.at)*8); err != nil {
		s.fail(err)
		return nil
	}
	ids := make([]uint64, sr.ref.n)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint64(buf[i*8:])
	}
	return ids
}

// gone marks a spilled session taken up again (its logs' identities are
// the caller's: retiredSet.forgetFile).
func (s *retiredSpill) gone(sr spilledRef, h uint64) {
	if sr.run.goneKeys == nil {
		sr.run.goneKeys = map[uint64]bool{}
	}
	sr.run.goneKeys[h] = true
	s.n--
}

// shadow marks the record of identity id in run as no longer answering.
func (run *retiredRun) shadow(id watchers.FileID) {
	if run.goneFiles == nil {
		run.goneFiles = map[watchers.FileID]bool{}
	}
	run.goneFiles[id] = true
}

func (s *retiredSpill) fail(err error) {
	if s.err == nil {
		s.err = fmt.Errorf("read back the sessions let go of from %s: %w", s.f.Name(), err)
	}
	if s.stop != nil {
		s.stop(s.err)
	}
}

// exitScan ends the process of a scan whose spill file fails (a variable:
// the test of it runs the scan in a process of its own).
var exitScan = os.Exit

// fileIDHash mixes a file identity into the 64 bits the filters take.
func fileIDHash(id watchers.FileID) uint64 {
	return mix64(id.Ino ^ mix64(id.Dev+0x9e3779b97f4a7c15))
}

// mix64 is splitmix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// bloom is a Bloom filter of 10 bits and 7 probes an item: about one
// false positive in 120.
type bloom struct {
	bits []uint64
	m    uint64
}

func newBloom(n int) bloom {
	m := uint64(max(64, n*10))
	return bloom{bits: make([]uint64, (m+63)/64), m: m}
}

func (b bloom) add(h uint64) {
	h = mix64(h)
	h1, h2 := h, h>>33|1
	for i := range uint64(7) {
		p := (h1 + i*h2) % b.m
		b.bits[p/64] |= 1 << (p % 64)
	}
}

func (b bloom) has(h uint64) bool {
	if b.m == 0 {
		return false
	}
	h = mix64(h)
	h1, h2 := h, h>>33|1
	for i := range uint64(7) {
		p := (h1 + i*h2) % b.m
		if b.bits[p/64]&(1<<(p%64)) == 0 {
			return false
		}
	}
	return true
}
