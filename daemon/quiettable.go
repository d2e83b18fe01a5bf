package daemon

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"

	"github.com/agentmap/agentmap/watchers"
)

// quietTable is the table of the quiet logs a catch-up's walk leaves out
// (quietLogs), in memory or, for a load in pieces (loadpieces.go), in its
// file: 40 bytes a log there, where the table in memory was the one part
// of a second scan's memory left that grew with the sessions (8 MB at
// 200,000). On disk it is sorted by path hash in blocks of
// quietBlockLogs logs, and what stays in memory is the first hash of each
// block (0.08 bytes a log): a look-up reads one block, rarely two. The
// walks of a catch-up look each log up twice (sizing, then reading). On
// Linux the table is read through a mapping of the file: a read of a block
// (pread) took some 2 µs, 6.5% of the CPU samples of a second scan at
// 100,000 sessions, a page already mapped nothing. Once the pages read
// since the last time add up to tableResidentBytes, they are let go of
// (madvise), so that the mapping counts at most that much (and a page or
// two) in the process's memory, as the state database's mapping does; a
// table of up to 200,000 logs is never let go of.
//
// A block that cannot be read back leaves the walk not knowing which logs
// it may leave out: the scan stops there, as when its spill file fails
// (retiredspill.go), and a scan again resumes from the state database.
type quietTable struct {
	mem quietLogs // the table, when it is in memory
	// Or on disk: n logs from at in f, and the first path hash of each
	// block.
	f     *loadScratch
	at    int64
	n     int
	index []uint64
	buf   []byte    // one block's records, as read
	got   quietLogs // the logs of the last span read
	stop  func(error)
	// The table as mapped, when it is (mapQuietTable), and of the
	// mapping's pages, those read since it was last let go of.
	mapped   []byte
	mapping  []byte
	touched  []uint64
	resident int
}

// tableResidentBytes is how much of the table's mapping may stay resident
// before it is let go of (a variable: tests let go of it often).
var tableResidentBytes = 8 << 20

const quietLogSize = 40

// quietBlockLogs is how many logs a block of the table on disk holds,
// 4,080 bytes (a variable: tests cut small tables in blocks).
var quietBlockLogs = 102

// len is how many quiet logs the table has.
func (t *quietTable) len() int {
	switch {
	case t == nil:
		return 0
	case t.f == nil:
		return len(t.mem)
	}
	return t.n
}

// span returns the quiet logs whose paths have path's hash, and where the
// first of them is in the table (they follow it). On disk, they are valid
// until the next call.
func (t *quietTable) span(path string) (int, quietLogs) {
	if t == nil {
		return 0, nil
	}
	if t.f == nil {
		i, j := t.mem.span(path)
		return i, t.mem[i:j]
	}
	h := quietPathHash(path)
	// Logs of hash h are in the block before the first block whose first
	// hash is h or more (at its end), and at the start of the blocks
	// after it whose first hash is h.
	b, _ := slices.BinarySearch(t.index, h)
	start := max(b-1, 0)
	t.got = t.got[:0]
	first := -1
	for blk := start; blk < len(t.index) && (blk == start || t.index[blk] == h); blk++ {
		recs, ok := t.block(blk)
		if !ok {
			return 0, nil
		}
		for i := 0; i < len(recs); i += quietLogSize {
			if binary.LittleEndian.Uint64(recs[i:]) == h {
				if first < 0 {
					first = blk*quietBlockLogs + i/quietLogSize
				}
				t.got = append(t.got, decodeQuietLog(recs[i:]))
			}
		}
	}
	return max(first, 0), t.got
}

// block reads one block of the table on disk: its records, as written.
func (t *quietTable) block(blk int) ([]byte, bool) {
	n := min(quietBlockLogs, t.n-blk*quietBlockLogs) * quietLogSize
	t.buf = slices.Grow(t.buf[:0], n)[:n]
	off := blk * quietBlockLogs * quietLogSize
	var err error
	if t.mapped != nil {
		err = t.copyMapped(t.buf, off)
	} else {
		err = t.f.readAt(t.buf, t.at+int64(off))
	}
	if err != nil {
		t.stop(err)
		return nil, false
	}
	return t.buf, true
}

// mapQuietTable maps the table on disk where the system allows it (see
// quietTable); otherwise it is read block by block.
func (t *quietTable) mapQuietTable() {
	if t.n == 0 {
		return
	}
	mapped, mapping, err := mapFile(t.f.f, t.at, int64(t.n)*quietLogSize)
	if err != nil {
		return
	}
	t.mapped, t.mapping = mapped, mapping
	t.touched = make([]uint64, (len(mapping)/os.Getpagesize()+64)/64)
	t.f.unmap = append(t.f.unmap, mapping)
}

// copyMapped copies the records at off in the table into b, from the
// mapping; a page that cannot be read (a failing disk) is an error, not
// a crash.
func (t *quietTable) copyMapped(b []byte, off int) (err error) {
	if loadScratchReadFault != nil {
		return loadScratchReadFault
	}
	page := os.Getpagesize()
	start := len(t.mapping) - len(t.mapped) + off // in the mapping
	for p := start / page; p <= (start+len(b)-1)/page; p++ {
		if t.touched[p/64]&(1<<(p%64)) == 0 {
			t.touched[p/64] |= 1 << (p % 64)
			t.resident += page
		}
	}
	if t.resident > tableResidentBytes {
		releaseFile(t.mapping)
		clear(t.touched)
		t.resident = 0
	}
	src := t.mapped[off : off+len(b)] // out of range is a fault of this code: not recovered
	return copyFaulting(b, src)
}

// copyFaulting copies src, a mapping's bytes, into b: a page that cannot
// be read (a failing disk, a file cut short) faults, and is an error here
// instead of ending the process.
func copyFaulting(b, src []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("read the table of quiet logs: a page of the load's file could not be read (%v)", r)
		}
	}()
	copy(b, src)
	return nil
}

// each hands every quiet log to fn, with its place in the table, in order.
func (t *quietTable) each(fn func(k int, q quietLog)) {
	if t == nil {
		return
	}
	if t.f == nil {
		for k, q := range t.mem {
			fn(k, q)
		}
		return
	}
	r := bufio.NewReaderSize(t.f.section(t.at, int64(t.n)*quietLogSize), 64<<10)
	var rec [quietLogSize]byte
	for k := range t.n {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			t.stop(err)
			return
		}
		fn(k, decodeQuietLog(rec[:]))
	}
}

func appendQuietLog(b []byte, q quietLog) []byte {
	b = binary.LittleEndian.AppendUint64(b, q.path)
	b = binary.LittleEndian.AppendUint64(b, q.id.Dev)
	b = binary.LittleEndian.AppendUint64(b, q.id.Ino)
	b = binary.LittleEndian.AppendUint64(b, uint64(q.size))
	return binary.LittleEndian.AppendUint64(b, uint64(q.modMs))
}

func decodeQuietLog(b []byte) quietLog {
	return quietLog{
		path:  binary.LittleEndian.Uint64(b),
		id:    watchers.FileID{Dev: binary.LittleEndian.Uint64(b[8:]), Ino: binary.LittleEndian.Uint64(b[16:])},
		size:  int64(binary.LittleEndian.Uint64(b[24:])),
		modMs: int64(binary.LittleEndian.Uint64(b[32:])),
	}
}
