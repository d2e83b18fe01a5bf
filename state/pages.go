package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// checkPages proves a bbolt file sound before bbolt walks it. bbolt trusts
// its pages: a page number or an element offset that a flipped byte sends
// past the mapped file makes it read memory that is not there, and a
// branch that points back at an ancestor makes it descend for ever. Its
// own check (Tx.Check) has both faults, and runs on a goroutine of its own
// where they cannot be recovered: the process dies. So the structure is
// walked here first, from the file with plain reads and bounds checked at
// every step, on no memory map at all: every page the tree reaches and
// every element on it must lie inside the file, each page is reached once
// (no cycle, no page shared), keys are in order within their pages and
// within their parents' ranges, nested buckets (inline ones too) are sound,
// the freelist names each free page once, no page is both reachable and
// free, and every page below the high-water mark is one or the other.
// This is everything Tx.Check verifies; once it passes, nothing bbolt
// does on a read can leave the file.
//
// The file format read here is bbolt's (v2, the only one bbolt 1.x
// writes), in the machine's byte order as bbolt writes it.

const (
	pageHeaderLen = 16 // id u64, flags u16, count u16, overflow u32
	elementLen    = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	bucketLen     = 16 // a bucket value: root pgid u64, sequence u64, then an inline page when root is 0
	metaLen       = 64 // magic, version, page size, flags, root bucket (16), freelist, high-water mark, txid, checksum

	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagMeta     = 0x04
	flagFreelist = 0x10

	leafBucket = 0x01

	boltMagic   = 0xED0CDAED
	boltVersion = 2
	noFreelist  = ^uint64(0)
)

var ne = binary.NativeEndian

// errStructure is what checkPages reports: the file's structure is
// damaged and the file is to be moved aside whole.
func errStructure(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDamaged, fmt.Sprintf(format, args...))
}

type boltMeta struct {
	root, freelist, hwm, txid uint64
}

// pageReader reads whole pages of the file, within its size only, into
// one buffer that the next read reuses.
type pageReader struct {
	f        io.ReaderAt
	pageSize int
	hwm      uint64
	buf      []byte
}

// page returns page id and its overflow pages, checking that its header
// names it and that it lies below the high-water mark. The bytes are
// valid until the next call.
func (r *pageReader) page(id uint64) ([]byte, error) {
	if id >= r.hwm {
		return nil, errStructure("page %d is past the high-water mark %d", id, r.hwm)
	}
	buf := r.read(id, r.pageSize)
	if buf == nil {
		return nil, errStructure("page %d cannot be read", id)
	}
	if got := ne.Uint64(buf); got != id {
		return nil, errStructure("page %d names itself %d", id, got)
	}
	overflow := pageOverflow(buf)
	if overflow >= r.hwm-id {
		return nil, errStructure("page %d overflows past the high-water mark (%d more pages)", id, overflow)
	}
	if overflow > 0 {
		if buf = r.read(id, int(overflow+1)*r.pageSize); buf == nil {
			return nil, errStructure("page %d cannot be read", id)
		}
	}
	return buf, nil
}

func (r *pageReader) read(id uint64, n int) []byte {
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	buf := r.buf[:n]
	if _, err := r.f.ReadAt(buf, int64(id)*int64(r.pageSize)); err != nil {
		return nil
	}
	return buf
}

func pageFlags(p []byte) uint16    { return ne.Uint16(p[8:]) }
func pageCount(p []byte) int       { return int(ne.Uint16(p[10:])) }
func pageOverflow(p []byte) uint64 { return uint64(ne.Uint32(p[12:])) }

// readMeta returns the meta page whose transaction is txid: the one bbolt
// opened the file at.
func readMeta(f io.ReaderAt, pageSize int, txid uint64) (boltMeta, error) {
	var found *boltMeta
	for id := range 2 {
		buf := make([]byte, pageHeaderLen+metaLen)
		if _, err := f.ReadAt(buf, int64(id*pageSize)); err != nil {
			return boltMeta{}, errStructure("meta page %d cannot be read: %v", id, err)
		}
		// Both headers, as bbolt's check has them, though bbolt reads
		// neither: damage there is damage all the same.
		if ne.Uint64(buf) != uint64(id) || pageFlags(buf) != flagMeta {
			return boltMeta{}, errStructure("meta page %d has a damaged header", id)
		}
		m := buf[pageHeaderLen:]
		h := fnv.New64a()
		h.Write(m[:metaLen-8])
		if ne.Uint32(m) != boltMagic || ne.Uint32(m[4:]) != boltVersion || ne.Uint64(m[56:]) != h.Sum64() {
			continue
		}
		meta := boltMeta{root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]), hwm: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])}
		if meta.txid == txid {
			found = &meta
		}
	}
	if found == nil {
		return boltMeta{}, errStructure("no valid meta page for transaction %d", txid)
	}
	return *found, nil
}

// treePage is a page still to walk and the key range its keys must be in:
// [min, max), a nil bound meaning none. A page below a branch must begin
// with exactly the key its branch element holds (min): bbolt finds a
// changed page's slot in its parent by that key, and with any other key
// it would add a second slot and free the page the first still names.
type treePage struct {
	id       uint64
	min, max []byte
}

type pageWalk struct {
	r               *pageReader
	reachable, free bitset // by page id, below the high-water mark
	todo            []treePage
}

type bitset []uint64

func newBitset(n uint64) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) has(i uint64) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i uint64)      { b[i/64] |= 1 << (i % 64) }

// checkPages walks the file at path as bbolt sees it in a transaction of
// txid, with the given page size and file size.
func checkPages(path string, pageSize int, txid uint64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if pageSize < 1024 || pageSize > 1<<20 {
		return errStructure("page size %d", pageSize)
	}
	meta, err := readMeta(f, pageSize, txid)
	if err != nil {
		return err
	}
	if meta.hwm < 3 || meta.hwm > uint64(fi.Size())/uint64(pageSize) {
		return errStructure("the file is cut short (%d bytes, %d pages claimed)", fi.Size(), meta.hwm)
	}
	w := &pageWalk{r: &pageReader{f: f, pageSize: pageSize, hwm: meta.hwm}, reachable: newBitset(meta.hwm), free: newBitset(meta.hwm)}
	w.reachable.set(0)
	w.reachable.set(1)
	if meta.freelist != noFreelist {
		if err := w.freelist(meta.freelist); err != nil {
			return err
		}
	}
	if meta.root < 2 {
		return errStructure("root bucket at page %d", meta.root)
	}
	w.todo = append(w.todo, treePage{id: meta.root})
	for len(w.todo) > 0 {
		p := w.todo[len(w.todo)-1]
		w.todo = w.todo[:len(w.todo)-1]
		if err := w.tree(p); err != nil {
			return err
		}
	}
	for id := uint64(2); id < meta.hwm; id++ {
		if !w.reachable.has(id) && !w.free.has(id) {
			return errStructure("page %d is neither reachable nor free", id)
		}
	}
	return nil
}

// reach marks a page and its overflow pages reached, once only.
func (w *pageWalk) reach(id, overflow uint64) error {
	for i := id; i <= id+overflow; i++ {
		if w.reachable.has(i) {
			return errStructure("page %d is reached twice", i)
		}
		if w.free.has(i) {
			return errStructure("page %d is reachable and free", i)
		}
		w.reachable.set(i)
	}
	return nil
}

func (w *pageWalk) freelist(id uint64) error {
	p, err := w.r.page(id)
	if err != nil {
		return err
	}
	if pageFlags(p) != flagFreelist {
		return errStructure("freelist page %d has flags %#x", id, pageFlags(p))
	}
	if err := w.reach(id, pageOverflow(p)); err != nil {
		return err
	}
	start, count := uint64(pageHeaderLen), uint64(pageCount(p))
	if count == 0xFFFF {
		if len(p) < pageHeaderLen+8 {
			return errStructure("freelist page %d is too short", id)
		}
		count, start = ne.Uint64(p[pageHeaderLen:]), pageHeaderLen+8
	}
	if count > (uint64(len(p))-start)/8 {
		return errStructure("freelist page %d claims %d pages", id, count)
	}
	for i := range count {
		free := ne.Uint64(p[start+8*i:])
		switch {
		case free < 2 || free >= w.r.hwm:
			return errStructure("freelist names page %d, out of range", free)
		case w.free.has(free):
			return errStructure("freelist names page %d twice", free)
		case w.reachable.has(free):
			return errStructure("page %d is reachable and free", free)
		}
		w.free.set(free)
	}
	return nil
}

// slot returns the bytes [off, off+n) of p, or false when they are not
// all inside it.
func slot(p []byte, off, n uint64) ([]byte, bool) {
	if off > uint64(len(p)) || n > uint64(len(p))-off {
		return nil, false
	}
	return p[off : off+n], true
}

// tree checks one page of a bucket's tree and queues its children.
func (w *pageWalk) tree(t treePage) error {
	p, err := w.r.page(t.id)
	if err != nil {
		return err
	}
	if err := w.reach(t.id, pageOverflow(p)); err != nil {
		return err
	}
	if t.min != nil && pageCount(p) == 0 {
		return errStructure("page %d is an empty child", t.id)
	}
	return w.elements(p, pageName(t.id), t.min, t.max)
}

// pageName names a page in an error, made only when there is one.
type pageName uint64

func (n pageName) String() string { return fmt.Sprintf("page %d", uint64(n)) }

// elements checks the elements of a branch or leaf page (a tree's page, or
// an inline bucket's page held in a value).
func (w *pageWalk) elements(p []byte, where fmt.Stringer, min, max []byte) error {
	flags, n := pageFlags(p), pageCount(p)
	if flags != flagBranch && flags != flagLeaf {
		return errStructure("%s has flags %#x", where, flags)
	}
	if uint64(pageHeaderLen+n*elementLen) > uint64(len(p)) {
		return errStructure("%s claims %d elements", where, n)
	}
	if flags == flagBranch && n == 0 {
		return errStructure("%s is an empty branch", where)
	}
	keys := make([][]byte, n)
	for i := range n {
		e := p[pageHeaderLen+i*elementLen:]
		at := uint64(pageHeaderLen + i*elementLen)
		var key []byte
		var ok bool
		if flags == flagBranch {
			key, ok = slot(p, at+uint64(ne.Uint32(e)), uint64(ne.Uint32(e[4:])))
		} else {
			key, ok = slot(p, at+uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:]))+uint64(ne.Uint32(e[12:])))
			if ok {
				key = key[:ne.Uint32(e[8:])]
			}
		}
		if !ok {
			return errStructure("%s: element %d lies outside the page", where, i)
		}
		if i > 0 && bytes.Compare(keys[i-1], key) >= 0 {
			return errStructure("%s: key %d is out of order", where, i)
		}
		if i == 0 && min != nil && !bytes.Equal(key, min) {
			return errStructure("%s: its first key is not its parent's key for it", where)
		}
		if max != nil && bytes.Compare(key, max) >= 0 {
			return errStructure("%s: key %d is outside its parent's range", where, i)
		}
		keys[i] = key
	}
	for i := range n {
		e := p[pageHeaderLen+i*elementLen:]
		if flags == flagBranch {
			child := treePage{id: ne.Uint64(e[8:]), min: bytes.Clone(keys[i]), max: bytes.Clone(max)}
			if i+1 < n {
				child.max = bytes.Clone(keys[i+1])
			}
			if child.id < 2 {
				return errStructure("%s: element %d points at page %d", where, i, child.id)
			}
			w.todo = append(w.todo, child)
			continue
		}
		switch ne.Uint32(e) {
		case 0:
		case leafBucket:
			at := uint64(pageHeaderLen+i*elementLen) + uint64(ne.Uint32(e[4:])) + uint64(ne.Uint32(e[8:]))
			v, _ := slot(p, at, uint64(ne.Uint32(e[12:])))
			if err := w.bucket(v, bucketName{where, i}); err != nil {
				return err
			}
		default:
			return errStructure("%s: element %d has flags %#x", where, i, ne.Uint32(e))
		}
	}
	return nil
}

// bucket checks a nested bucket's value: its tree is queued, an inline
// bucket's page checked in place.
// bucketName names a nested bucket in an error: its element on a page.
type bucketName struct {
	page fmt.Stringer
	i    int
}

func (n bucketName) String() string { return fmt.Sprintf("%v: bucket %d", n.page, n.i) }

func (w *pageWalk) bucket(v []byte, where fmt.Stringer) error {
	if len(v) < bucketLen {
		return errStructure("%s: value of %d bytes", where, len(v))
	}
	root := ne.Uint64(v)
	if root != 0 {
		if root < 2 {
			return errStructure("%s: root at page %d", where, root)
		}
		w.todo = append(w.todo, treePage{id: root})
		return nil
	}
	inline := v[bucketLen:]
	if len(inline) < pageHeaderLen {
		return errStructure("%s: inline page of %d bytes", where, len(inline))
	}
	// bbolt writes an inline page with id and overflow 0, and takes a
	// changed bucket's id for a page of the file to free.
	if pageFlags(inline) != flagLeaf || ne.Uint64(inline) != 0 || pageOverflow(inline) != 0 {
		return errStructure("%s: inline page with a damaged header", where)
	}
	// An inline bucket's own nested buckets lie inside this value, each
	// smaller than the last: the recursion ends.
	return w.elements(inline, where, nil, nil)
}

// cutShort reports a file whose newest valid meta page claims more pages
// than the file holds. A writable bbolt open of such a file reads its
// freelist past the end and faults, and the recovered fault ("invalid
// memory address") says nothing a user can act on; this says what it is.
// It is asked only after bbolt failed, when the file is no one's.
func cutShort(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	head := make([]byte, pageHeaderLen+metaLen)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil
	}
	pageSize := int(ne.Uint32(head[pageHeaderLen+8:]))
	if pageSize < 1024 || pageSize > 1<<20 {
		return nil
	}
	var newest *boltMeta
	for _, txid := range []uint64{metaTxid(f, 0, pageSize), metaTxid(f, 1, pageSize)} {
		if m, err := readMeta(f, pageSize, txid); err == nil && (newest == nil || m.txid > newest.txid) {
			newest = &m
		}
	}
	if newest == nil {
		return nil
	}
	if claimed := newest.hwm * uint64(pageSize); claimed > uint64(fi.Size()) {
		return errStructure("the file is cut short (%d of %d bytes)", fi.Size(), claimed)
	}
	return nil
}

// metaTxid is the transaction id meta page id names, valid or not
// (readMeta checks it).
func metaTxid(f io.ReaderAt, id, pageSize int) uint64 {
	buf := make([]byte, pageHeaderLen+metaLen)
	if _, err := f.ReadAt(buf, int64(id*pageSize)); err != nil {
		return 0
	}
	return ne.Uint64(buf[pageHeaderLen+48:])
}
