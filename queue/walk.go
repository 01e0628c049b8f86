package queue

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// The page walk follows, from the file's bytes, every page pointer bbolt
// will follow — from the meta page it opens at, through the branch and
// leaf pages of every bucket, inline buckets and the freelist — and checks
// the bounds bbolt takes on trust: each page id inside [2, high water),
// each page's header naming that id and a type, each page reached once
// (no cycles), element tables, keys and values inside their page, and each
// branch key equal to the first key of its child (node.go finds a child's
// entry in its parent by that key when it writes; tx.Check only checks the
// order), and no page in use, overflow pages included, on the freelist
// (tx.Check checks only a page's first id; freelist.Free panics on any).
// bbolt
// reads its memory map through unchecked pointers (page.go, unsafe.go), so
// one of these broken is a fault that kills the process, or a recursion
// that never ends, inside bbolt's own goroutines (tx.Check) where colocd
// cannot recover it. What the walk does not check (key order, freed and
// unreachable pages) bbolt's tx.Check reports, once the walk says it is
// safe to run.
//
// Page layout (bbolt v1.5.0, internal/common/page.go): a 16-byte header
// (id u64, flags u16, count u16, overflow u32), then count elements of 16
// bytes: branch {pos u32, ksize u32, pgid u64}, leaf {flags u32, pos u32,
// ksize u32, vsize u32}; pos counts from the element itself. A leaf element
// with flag 1 is a bucket: its value starts with {root u64, sequence u64}
// and, when root is 0, an inline leaf page follows. A freelist page holds
// count page ids (u64), or, when count is 0xFFFF, the real count first.
const (
	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagFreelist = 0x10
	elemSize     = 16
	bucketHeader = 16
	maxWalkDepth = 64 // far deeper than any B+tree of a file that fits in memory, nested buckets included
	maxProblems  = 20
)

type walker struct {
	// leaf and bucket, when set, are told of every key and value (leaf)
	// and every bucket with its value in the parent (bucket, whose answer
	// says whether to walk into it) the walk reads, under the path of
	// bucket names from the root (Salvage). The slices are the walk's
	// buffers: valid during the call only.
	leaf   func(path [][]byte, k, v []byte)
	bucket func(path [][]byte, v []byte) (walk bool)

	r     io.ReaderAt
	ps    uint64
	hwm   uint64
	seen  []uint64 // bitset of page ids reached
	free  []uint64 // bitset of the freelist's page ids
	bufs  [][]byte // one page buffer per depth, reused
	found []string
	more  int // problems past maxProblems
}

// walkPages walks the file from in's usable meta page and returns what is
// broken (nil when nothing is).
func walkPages(r io.ReaderAt, in *inspection) []string {
	return (&walker{}).walk(r, in)
}

// walk is walkPages with w's callbacks.
func (w *walker) walk(r io.ReaderAt, in *inspection) []string {
	m := in.meta[in.use]
	words := (m.HighWater + 63) / 64
	w.r, w.ps, w.hwm, w.seen, w.free = r, uint64(in.pageSize), m.HighWater, make([]uint64, words), make([]uint64, words)
	if m.HighWater < 2 {
		return []string{fmt.Sprintf("meta page %d: high water %d is below the two meta pages", m.Page, m.HighWater)}
	}
	w.mark(0)
	w.mark(1)
	w.freelist(m.Freelist)
	w.page("root bucket", m.Root, nil, 0, nil)
	if w.more > 0 {
		w.found = append(w.found, fmt.Sprintf("… and %d more", w.more))
	}
	return w.found
}

func (w *walker) problem(format string, args ...any) {
	if len(w.found) == maxProblems {
		w.more++
		return
	}
	w.found = append(w.found, fmt.Sprintf(format, args...))
}

// mark records page id in set and reports whether it was there already.
func mark(set []uint64, id uint64) (again bool) {
	word, bit := id/64, uint64(1)<<(id%64)
	again = set[word]&bit != 0
	set[word] |= bit
	return again
}

func (w *walker) mark(id uint64) bool { return mark(w.seen, id) }

// span reads page id with its overflow pages after checking its header,
// into the buffer of depth (valid until the next span at that depth).
func (w *walker) span(where string, id uint64, want uint16, depth int) []byte {
	if id < 2 || id >= w.hwm {
		w.problem("%s: page %d is outside the pages in use [2, %d)", where, id, w.hwm)
		return nil
	}
	var h [pageHeaderSize]byte
	if _, err := w.r.ReadAt(h[:], int64(id*w.ps)); err != nil {
		w.problem("%s: page %d: read: %v", where, id, err)
		return nil
	}
	hid, flags, overflow := native.Uint64(h[0:]), native.Uint16(h[8:]), uint64(native.Uint32(h[12:]))
	switch {
	case hid != id:
		w.problem("%s: page %d: its header names page %d", where, id, hid)
		return nil
	case flags&want == 0 || flags&(flags-1) != 0:
		w.problem("%s: page %d: type flags %#x, want %#x", where, id, flags, want)
		return nil
	case id+overflow >= w.hwm:
		w.problem("%s: page %d: %d overflow pages run past the pages in use (%d)", where, id, overflow, w.hwm)
		return nil
	}
	for p := id; p <= id+overflow; p++ {
		if w.mark(p) {
			w.problem("%s: page %d: reached a second time (a cycle, or two parents)", where, p)
			return nil
		}
		if w.free[p/64]&(1<<(p%64)) != 0 {
			w.problem("%s: page %d: in use and on the freelist", where, p)
			return nil
		}
	}
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, nil)
	}
	n := (overflow + 1) * w.ps
	if uint64(cap(w.bufs[depth])) < n {
		w.bufs[depth] = make([]byte, n)
	}
	buf := w.bufs[depth][:n]
	if _, err := w.r.ReadAt(buf, int64(id*w.ps)); err != nil {
		w.problem("%s: page %d: read: %v", where, id, err)
		return nil
	}
	return buf
}

func (w *walker) freelist(id uint64) {
	if id == noFreelist {
		return
	}
	buf := w.span("freelist", id, flagFreelist, 0)
	if buf == nil {
		return
	}
	n, first := uint64(native.Uint16(buf[10:])), uint64(0)
	if n == 0xFFFF {
		n, first = native.Uint64(buf[pageHeaderSize:]), 1
	}
	if n > (uint64(len(buf))-pageHeaderSize)/8-first {
		w.problem("freelist: page %d: %d page ids do not fit in its %d bytes", id, n, len(buf))
		return
	}
	overflow := uint64(native.Uint32(buf[12:]))
	for i := first; i < first+n; i++ {
		switch p := native.Uint64(buf[pageHeaderSize+8*i:]); {
		case p < 2 || p >= w.hwm:
			w.problem("freelist: page %d: free page id %d is outside [2, %d)", id, p, w.hwm)
		case p >= id && p <= id+overflow:
			w.problem("freelist: page %d: lists its own page %d as free", id, p)
		case mark(w.free, p):
			w.problem("freelist: page %d: lists page %d twice", id, p)
		}
	}
}

// page walks the tree under page id, where names the bucket; first is the
// key its parent's branch element holds (nil for a bucket's root).
func (w *walker) page(where string, id uint64, first []byte, depth int, path [][]byte) {
	if depth > maxWalkDepth {
		w.problem("%s: page %d: deeper than %d levels", where, id, maxWalkDepth)
		return
	}
	buf := w.span(where, id, flagBranch|flagLeaf, depth)
	if buf == nil {
		return
	}
	w.elements(where, id, buf, first, depth, path)
}

// pageName names page id in a problem; 0 is an inline bucket's page.
func pageName(id uint64) string {
	if id == 0 {
		return "inline page"
	}
	return "page " + strconv.FormatUint(id, 10)
}

// elements checks the element table of page id (0: an inline page; buf
// starts at its header) and follows its children and buckets; path names
// the bucket the page belongs to.
func (w *walker) elements(where string, id uint64, buf []byte, first []byte, depth int, path [][]byte) {
	flags, count := native.Uint16(buf[8:]), int(native.Uint16(buf[10:]))
	size := uint64(len(buf))
	switch {
	case uint64(pageHeaderSize+count*elemSize) > size:
		w.problem("%s: %s: %d elements do not fit in %d bytes", where, pageName(id), count, size)
		return
	case count == 0 && (flags == flagBranch || first != nil):
		w.problem("%s: %s: no elements, on a branch page or under one", where, pageName(id))
		return
	}
	for i := 0; i < count; i++ {
		e := uint64(pageHeaderSize + i*elemSize)
		var key []byte
		if flags == flagBranch {
			pos, ksize, child := uint64(native.Uint32(buf[e:])), uint64(native.Uint32(buf[e+4:])), native.Uint64(buf[e+8:])
			if ksize == 0 || e+pos+ksize > size {
				w.problem("%s: %s: element %d: key [%d, +%d) is empty or runs past the page", where, pageName(id), i, e+pos, ksize)
				continue
			}
			key = buf[e+pos : e+pos+ksize]
			w.page(where, child, key, depth+1, path)
		} else {
			eflags, pos := native.Uint32(buf[e:]), uint64(native.Uint32(buf[e+4:]))
			ksize, vsize := uint64(native.Uint32(buf[e+8:])), uint64(native.Uint32(buf[e+12:]))
			if ksize == 0 || e+pos+ksize+vsize > size {
				w.problem("%s: %s: element %d: key and value [%d, +%d) are empty or run past the page", where, pageName(id), i, e+pos, ksize+vsize)
				continue
			}
			key = buf[e+pos : e+pos+ksize]
			v := buf[e+pos+ksize : e+pos+ksize+vsize]
			switch {
			case eflags&1 != 0:
				w.walkBucket(bucketPath(where, key), v, depth+1, append(path[:len(path):len(path)], key))
			case w.leaf != nil:
				w.leaf(path, key, v)
			}
		}
		if i == 0 && first != nil && !bytes.Equal(key, first) {
			w.problem("%s: %s: first key %q differs from its parent's %q", where, pageName(id), key, first)
		}
	}
}

// walkBucket walks a bucket from its value in the parent: a separate root
// page, or an inline leaf page right after the header.
func (w *walker) walkBucket(where string, v []byte, depth int, path [][]byte) {
	if len(v) < bucketHeader {
		w.problem("%s: bucket value is %d bytes, shorter than its %d-byte header", where, len(v), bucketHeader)
		return
	}
	if w.bucket != nil && !w.bucket(path, v) {
		return
	}
	if root := native.Uint64(v); root != 0 {
		w.page(where, root, nil, depth, path)
		return
	}
	inline := v[bucketHeader:]
	if len(inline) < pageHeaderSize {
		w.problem("%s: inline bucket of %d bytes, shorter than a page header", where, len(inline))
		return
	}
	if f := native.Uint16(inline[8:]); f != flagLeaf {
		w.problem("%s: inline bucket page has type flags %#x, want a leaf (%#x)", where, f, flagLeaf)
		return
	}
	w.elements(where, 0, inline, nil, depth, path)
}

func bucketPath(parent string, name []byte) string {
	if parent == "root bucket" {
		return "bucket " + strconv.Quote(string(name))
	}
	return parent + "/" + strconv.Quote(string(name))
}
