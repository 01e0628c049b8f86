package queue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"
	"time"
)

// The bbolt file format colocd reads itself, before bbolt does (bbolt
// v1.5.0, go.etcd.io/bbolt/internal/common). Every integer is in the
// machine's byte order, as bbolt writes it.
//
// A page starts with a 16-byte header (page.go, Page):
//
//	id u64 | flags u16 | count u16 | overflow u32
//
// Pages 0 and 1 are the two meta pages; after the header comes the meta
// (meta.go, Meta):
//
//	magic u32 | version u32 | pageSize u32 | flags u32 | root {pgid u64, sequence u64} |
//	freelist u64 | pgid u64 | txid u64 | checksum u64
//
// Meta.Validate accepts a meta when magic is 0xED0CDAED, version is 2 and
// checksum equals Meta.Sum64: FNV-64a over the meta's bytes up to the
// checksum field (the 56 bytes from offset 16 of the page). A commit with
// txid t writes its meta to page t%2, so the two pages hold consecutive
// txids, and DB.meta opens at the valid page with the higher txid.
const (
	pageHeaderSize = 16
	metaMagicOff   = pageHeaderSize + 0
	metaVersionOff = pageHeaderSize + 4
	metaPageSzOff  = pageHeaderSize + 8
	metaRootOff    = pageHeaderSize + 16
	metaFreeOff    = pageHeaderSize + 32
	metaPgidOff    = pageHeaderSize + 40
	metaTxidOff    = pageHeaderSize + 48
	metaSumOff     = pageHeaderSize + 56
	metaEnd        = pageHeaderSize + 64 // bytes of a meta page that bbolt reads

	boltVersion = 2
	noFreelist  = ^uint64(0) // bbolt's PgidNoFreelist
	minPageSize = 1 << 10    // the page sizes bbolt probes for page 1 (db.go, getPageSizeFromSecondMeta)
	maxPageSize = 1 << 24
)

var native = binary.NativeEndian

// metaPage is what colocd read of one bbolt meta page.
type metaPage struct {
	Page      int    `json:"page"`   // 0 or 1
	Offset    int64  `json:"offset"` // byte offset of the page in the file
	PageSize  uint32 `json:"page_size"`
	Txid      uint64 `json:"txid"`       // as stored: not to be trusted when Damage is set
	HighWater uint64 `json:"high_water"` // pages in use (bbolt's meta pgid)
	Root      uint64 `json:"root"`       // page of the root bucket
	Freelist  uint64 `json:"freelist"`   // page of the freelist
	// Damage says why bbolt would reject the page: bad magic, format
	// version, checksum, page size, or a file that ends inside it. Empty on
	// a valid page.
	Damage string `json:"damage,omitempty"`
}

// metaSum is bbolt's Meta.Sum64 (go.etcd.io/bbolt@v1.5.0,
// internal/common/meta.go): FNV-64a over the meta up to its checksum field.
func metaSum(page []byte) uint64 {
	h := fnv.New64a()
	h.Write(page[pageHeaderSize:metaSumOff])
	return h.Sum64()
}

// readMeta reads and validates meta page n at off, as bbolt's Meta.Validate
// does, plus the page size (a valid page 1 must sit at its own page size).
func readMeta(r io.ReaderAt, n int, off int64) metaPage {
	m := metaPage{Page: n, Offset: off}
	var b [metaEnd]byte
	if got, err := r.ReadAt(b[:], off); got < len(b) {
		m.Damage = fmt.Sprintf("the file ends at byte %d, inside the page (%v)", off+int64(got), err)
		return m
	}
	m.PageSize = native.Uint32(b[metaPageSzOff:])
	m.Root = native.Uint64(b[metaRootOff:])
	m.Freelist = native.Uint64(b[metaFreeOff:])
	m.HighWater = native.Uint64(b[metaPgidOff:])
	m.Txid = native.Uint64(b[metaTxidOff:])
	magic, version := native.Uint32(b[metaMagicOff:]), native.Uint32(b[metaVersionOff:])
	stored, sum := native.Uint64(b[metaSumOff:]), metaSum(b[:])
	switch {
	case magic != boltMagic:
		m.Damage = fmt.Sprintf("magic %#08x, want %#08x", magic, boltMagic)
	case version != boltVersion:
		m.Damage = fmt.Sprintf("format version %d, want %d", version, boltVersion)
	case stored != sum:
		m.Damage = fmt.Sprintf("checksum %016x, computed %016x", stored, sum)
	case m.PageSize < minPageSize || m.PageSize > maxPageSize || m.PageSize&(m.PageSize-1) != 0:
		m.Damage = fmt.Sprintf("page size %d is not a power of two in [%d, %d]", m.PageSize, minPageSize, maxPageSize)
	case n == 1 && int64(m.PageSize) != off:
		m.Damage = fmt.Sprintf("page size %d, but the page sits at offset %d", m.PageSize, off)
	}
	return m
}

// inspection is what colocd reads of a store file before bbolt reads it.
type inspection struct {
	size     int64
	pageSize int64
	meta     [2]metaPage
	use      int      // the meta page bbolt opens at; -1 when neither is valid
	pages    []string // what the page walk found (nil when it did not run or found nothing)
	walked   bool
}

// inspect reads the size and both meta pages of f. Page 1 sits at the page
// size, which page 0 gives; when page 0 is damaged, page 1 is looked for
// where bbolt looks (1 KiB << i) and must hold its own offset as page size.
func inspect(f *os.File) (inspection, error) {
	st, err := f.Stat()
	if err != nil {
		return inspection{}, fmt.Errorf("queue: stat %s: %w", f.Name(), err)
	}
	in := inspection{size: st.Size(), use: -1}
	if in.size == 0 {
		return in, nil
	}
	in.meta[0] = readMeta(f, 0, 0)
	if in.meta[0].Damage == "" {
		in.pageSize = int64(in.meta[0].PageSize)
	} else {
		for off := int64(minPageSize); off <= maxPageSize && off+metaEnd <= in.size; off <<= 1 {
			if m := readMeta(f, 1, off); m.Damage == "" {
				in.pageSize = off
				break
			}
		}
	}
	if in.pageSize == 0 {
		in.pageSize = int64(os.Getpagesize()) // what bbolt assumes when it cannot tell
	}
	in.meta[1] = readMeta(f, 1, in.pageSize)
	switch ok0, ok1 := in.meta[0].Damage == "", in.meta[1].Damage == ""; {
	case ok0 && ok1 && in.meta[0].PageSize != in.meta[1].PageSize:
		in.meta[1].Damage = fmt.Sprintf("page size %d, page 0 says %d", in.meta[1].PageSize, in.meta[0].PageSize)
		in.use = 0
	case ok0 && ok1 && in.meta[1].Txid > in.meta[0].Txid:
		in.use = 1
	case ok0:
		in.use = 0
	case ok1:
		in.use = 1
	}
	return in, nil
}

// fileError reports what no option lets Open get past: an empty or short
// file, or two damaged meta pages.
func (in *inspection) fileError(path string) error {
	switch {
	case in.size == 0:
		return &truncatedError{Path: path, Size: 0,
			Why: "an existing store is never empty (bbolt would silently start a new, empty queue in it)"}
	case in.size < 2*in.pageSize:
		return &truncatedError{Path: path, Size: in.size, Want: 2 * in.pageSize,
			Why: fmt.Sprintf("shorter than bbolt's two meta pages (%d bytes at page size %d)", 2*in.pageSize, in.pageSize)}
	case in.use < 0:
		return &MetaError{Path: path, Page: -1, Meta: in.meta}
	}
	m := in.meta[in.use]
	if want := int64(m.HighWater) * in.pageSize; m.HighWater > uint64(in.size) || in.size < want {
		return &truncatedError{Path: path, Size: in.size, Want: want,
			Why: fmt.Sprintf("shorter than the %d pages of %d bytes that meta page %d (txid %d) says are in use", m.HighWater, in.pageSize, m.Page, m.Txid)}
	}
	return nil
}

// metaError is the damaged meta page when the other one is valid, or nil.
func (in *inspection) metaError(path string) *MetaError {
	if in.use < 0 || in.meta[1-in.use].Damage == "" {
		return nil
	}
	valid := in.meta[in.use].Txid
	return &MetaError{Path: path, Page: 1 - in.use, Meta: in.meta, ValidTxid: valid, LostTxid: valid + 1}
}

// pagesError reports what the page walk found.
func (in *inspection) pagesError(path string) error {
	if len(in.pages) == 0 {
		return nil
	}
	shown := in.pages
	if len(shown) > 5 {
		shown = shown[:5]
	}
	return fmt.Errorf("%w: %s: its bbolt pages are damaged (%d problem(s) from txid %d: %s); bbolt would read garbage or crash on them. "+
		"Restore the file from a backup, or copy what it still holds into a new file with `colocd store salvage --to NEW` "+
		"(colocd stopped); `colocd store check` lists every problem",
		ErrCorrupt, path, len(in.pages), in.meta[in.use].Txid, strings.Join(shown, "; "))
}

// opener is bbolt's Options.OpenFile hook: it opens the file, takes the lock
// bbolt is about to take (exclusive, or shared for read-only) on the same
// descriptor — so bbolt's own flock then succeeds at once — and inspects the
// file under that lock, before bbolt reads a byte of it.
type opener struct {
	path     string
	readOnly bool
	timeout  time.Duration // 0: wait forever
	// accept lets a damaged meta page through when the other is valid
	// (Options.AcceptMetaFallback; always for Check).
	accept bool
	walk   bool // run the page walk (not with Options.SkipCheck)

	file     *os.File // the descriptor handed to bbolt, for unlocking after a panic
	created  bool     // this call created the file: bbolt initialises it
	in       inspection
	fallback *MetaError // a damaged meta page that accept let through
}

func (o *opener) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag&^os.O_CREATE, perm)
	if errors.Is(err, os.ErrNotExist) && flag&os.O_CREATE != 0 {
		// Only a file this call creates may be empty.
		if f, err = os.OpenFile(name, flag|os.O_EXCL, perm); err == nil {
			o.created = true
		} else if errors.Is(err, os.ErrExist) {
			f, err = os.OpenFile(name, flag&^os.O_CREATE, perm)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, !o.readOnly, o.timeout); err != nil {
		f.Close()
		if errors.Is(err, errLockTimeout) {
			return nil, o.lockedError()
		}
		return nil, fmt.Errorf("queue: lock %s: %w", o.path, err)
	}
	if !o.created {
		if err := o.check(f); err != nil {
			unlockFile(f)
			f.Close()
			return nil, err
		}
	}
	o.file = f
	return f, nil
}

func (o *opener) lockedError() error {
	if o.readOnly {
		return fmt.Errorf("%w: %s (waited %v): a process (a running colocd?) holds it for writing, and a check needs it still: "+
			"stop colocd first (systemctl stop colocd), or check a copy made while it was stopped", errLocked, o.path, o.timeout)
	}
	return fmt.Errorf("%w: %s (waited %v): is another colocd running on it?", errLocked, o.path, o.timeout)
}

// check inspects f and decides, in order: a short file or two damaged meta
// pages stop everything; one damaged meta page stops Open unless accepted;
// then the page walk.
func (o *opener) check(f *os.File) error {
	var err error
	if o.in, err = inspect(f); err != nil {
		return err
	}
	if err := o.in.fileError(o.path); err != nil {
		return err
	}
	if me := o.in.metaError(o.path); me != nil {
		if !o.accept {
			return me
		}
		o.fallback = me
	}
	if o.walk {
		o.in.pages, o.in.walked = walkPages(f, &o.in), true
		return o.in.pagesError(o.path)
	}
	return nil
}
