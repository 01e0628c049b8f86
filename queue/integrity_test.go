package queue_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// Tests of what the store does with a damaged file: here a damaged bbolt
// meta page and a short file; damaged records and indexes in
// quarantine_test.go, Check and random damage anywhere in check_test.go.
// Every file is a real bbolt file written by the store and then damaged on
// disk.

// writeStore creates a store at dir/colocd.db holding n pending jobs, each
// submitted in its own transaction, and closes it.
func writeStore(tb testing.TB, n int, edit func(j *queue.Job, i int)) (string, []queue.Job) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "colocd.db")
	clk := queuetest.NewClock(queuetest.Start)
	s, err := queue.Open(path, queue.Options{NoSync: true, Now: clk.Now, Entropy: rand.NewChaCha8([32]byte{3})})
	if err != nil {
		tb.Fatal(err)
	}
	var js []queue.Job
	for i := 0; i < n; i++ {
		j := queuetest.Job(fmt.Sprintf("k%d", i%3))
		if edit != nil {
			edit(&j, i)
		}
		js = append(js, submit(tb, s, j))
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return path, js
}

// metas reads the page size and both meta pages' txids of a bbolt file, in
// the machine's byte order as bbolt writes them.
func metas(tb testing.TB, path string) (ps int64, txid [2]uint64) {
	ps, txid, _ = metasHWM(tb, path)
	return ps, txid
}

// metasHWM is metas with the high water mark (pages in use) of each page.
func metasHWM(tb testing.TB, path string) (ps int64, txid, hwm [2]uint64) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	ps = int64(binary.NativeEndian.Uint32(b[16+8:]))
	for p := range 2 {
		hwm[p] = binary.NativeEndian.Uint64(b[int64(p)*ps+16+40:])
		txid[p] = binary.NativeEndian.Uint64(b[int64(p)*ps+16+48:])
	}
	return ps, txid, hwm
}

func flipBit(tb testing.TB, path string, off int64, bit uint) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	b[off] ^= 1 << bit
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// logRecorder is a slog.Handler that keeps every record.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }
func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r.Clone())
	h.mu.Unlock()
	return nil
}

// at returns the records logged at level, each as its message and attrs.
func (h *logRecorder) at(level slog.Level) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, r := range h.recs {
		if r.Level != level {
			continue
		}
		m := map[string]any{"msg": r.Message}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Resolve().Any(); return true })
		out = append(out, m)
	}
	return out
}

func sameFile(tb testing.TB, path string, before []byte) {
	tb.Helper()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		tb.Errorf("%s was modified", path)
	}
}

// The meta page of the newest transaction gets one bit flipped, in each of
// the fields bbolt validates or checksums: Open refuses the file with a
// *MetaError naming the file, the page and the transaction lost; with
// AcceptMetaFallback it opens at the older page, says which transaction is
// lost, and the last job is indeed gone.
func TestMetaPageBitFlip(t *testing.T) {
	fields := map[string]int64{ // offset in the page
		"magic": 16, "version": 20, "page size": 24, "root": 32, "freelist": 48,
		"high water": 56, "txid": 64, "checksum": 72,
	}
	for name, off := range fields {
		t.Run(name, func(t *testing.T) {
			path, js := writeStore(t, 5, nil)
			ps, txid := metas(t, path)
			newer := 0
			if txid[1] > txid[0] {
				newer = 1
			}
			lost := txid[newer]
			flipBit(t, path, int64(newer)*ps+off, 3)
			before, _ := os.ReadFile(path)

			_, err := queue.Open(path, queue.Options{})
			var me *queue.MetaError
			if !errors.As(err, &me) || !errors.Is(err, queue.ErrCorrupt) {
				t.Fatalf("Open: %v, want a *MetaError", err)
			}
			if me.Path != path || me.Page != newer || me.LostTxid != lost || me.ValidTxid != lost-1 || me.Meta[newer].Damage == "" {
				t.Errorf("MetaError = %+v, want file %s, page %d, lost txid %d", me, path, newer, lost)
			}
			sameFile(t, path, before)

			// Accepting the fallback: the last job's transaction is gone.
			logs := &logRecorder{}
			s, err := queue.Open(path, queue.Options{AcceptMetaFallback: true, Logger: slog.New(logs)})
			if err != nil {
				t.Fatalf("Open with AcceptMetaFallback: %v", err)
			}
			if fb := s.MetaFallback(); fb == nil || fb.LostTxid != lost || fb.Page != newer {
				t.Errorf("MetaFallback = %+v, want page %d, lost txid %d", fb, newer, lost)
			}
			warn := logs.at(slog.LevelWarn)
			if len(warn) != 1 || warn[0]["lost_txid"] != lost || warn[0]["damaged_page"] != int64(newer) {
				t.Errorf("warnings %v, want one naming lost_txid %d and damaged_page %d", warn, lost, newer)
			}
			if _, err := s.Get(js[4].ID); !errors.Is(err, queue.ErrNotFound) {
				t.Errorf("last job after the fallback: %v, want ErrNotFound (its transaction %d is lost)", err, lost)
			}
			if p, err := s.Pending(0); err != nil || len(p) != 4 {
				t.Errorf("Pending after the fallback: %d jobs, %v; want the 4 before", len(p), err)
			}
			s.Close()
			// The fallback was made final: the next Open finds a clean file.
			rep, err := queue.Check(path, queue.CheckOptions{})
			if err != nil || !rep.Clean() {
				t.Errorf("Check after the fallback: %v, %s", err, rep.Summary())
			}
			s, err = queue.Open(path, queue.Options{})
			if err != nil {
				t.Fatalf("reopen after the fallback: %v", err)
			}
			s.Close()
		})
	}
}

func TestMetaPageDamageOther(t *testing.T) {
	t.Run("older page", func(t *testing.T) {
		path, js := writeStore(t, 5, nil)
		ps, txid := metas(t, path)
		older := 0
		if txid[0] > txid[1] {
			older = 1
		}
		flipBit(t, path, int64(older)*ps+72, 0)
		_, err := queue.Open(path, queue.Options{})
		var me *queue.MetaError
		if !errors.As(err, &me) || me.Page != older {
			t.Fatalf("Open: %v, want a *MetaError on page %d", err, older)
		}
		// bbolt opens at the newer page: accepting loses nothing.
		s, err := queue.Open(path, queue.Options{AcceptMetaFallback: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if p, _ := s.Pending(0); len(p) != len(js) {
			t.Errorf("Pending: %d jobs, want %d", len(p), len(js))
		}
	})
	t.Run("both pages", func(t *testing.T) {
		path, _ := writeStore(t, 5, nil)
		ps, _ := metas(t, path)
		flipBit(t, path, 72, 0)
		flipBit(t, path, ps+72, 0)
		for _, accept := range []bool{false, true} {
			_, err := queue.Open(path, queue.Options{AcceptMetaFallback: accept})
			var me *queue.MetaError
			if !errors.As(err, &me) || me.Page != -1 || me.Path != path {
				t.Errorf("Open(accept=%v): %v, want a *MetaError on both pages", accept, err)
			}
		}
	})
}

// An existing empty or short file is refused with a *TruncatedError; a
// missing file is a new store.
func TestShortFiles(t *testing.T) {
	path, _ := writeStore(t, 30, nil)
	good, _ := os.ReadFile(path)
	ps, txid, hwm := metasHWM(t, path)
	inUse := int64(hwm[0]) * ps // the bytes the newer meta page says are in use
	if txid[1] > txid[0] {
		inUse = int64(hwm[1]) * ps
	}
	if inUse <= 3*ps || inUse > int64(len(good)) {
		t.Fatalf("test store: %d bytes in use of %d, want more than 3 pages", inUse, len(good))
	}
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		bytes []byte
		want  int64 // TruncatedError.Want
	}{
		"empty":               {nil, 0},
		"one page":            {good[:ps], 2 * ps},
		"one and a half page": {good[:ps+ps/2], 2 * ps},
		"last page missing":   {good[:inUse-ps], inUse},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".db")
			if err := os.WriteFile(p, tc.bytes, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, skip := range []bool{false, true} {
				_, err := queue.Open(p, queue.Options{SkipCheck: skip, AcceptMetaFallback: true})
				var te *queue.TruncatedError
				if !errors.As(err, &te) || !errors.Is(err, queue.ErrCorrupt) {
					t.Fatalf("Open(skip_check=%v): %v, want a *TruncatedError", skip, err)
				}
				if te.Path != p || te.Size != int64(len(tc.bytes)) || te.Want != tc.want {
					t.Errorf("TruncatedError = %+v, want size %d, want %d", te, len(tc.bytes), tc.want)
				}
			}
			sameFile(t, p, tc.bytes)
			rep, err := queue.Check(p, queue.CheckOptions{})
			if err != nil || rep.Clean() || rep.Problems[0].Kind != "file" {
				t.Errorf("Check: %v, %+v; want a file problem", err, rep.Problems)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		p := filepath.Join(dir, "new.db")
		s, err := queue.Open(p, queue.Options{})
		if err != nil {
			t.Fatalf("Open(missing file): %v", err)
		}
		submit(t, s, queuetest.Job("k"))
		s.Close()
		if st, err := os.Stat(p); err != nil || st.Size() < 2*ps {
			t.Errorf("new store: %v, %v", st, err)
		}
	})
}

// Damage that bbolt's tx.Check does not see but its next commit trips on
// (freelist.Free panics on a page it already holds): the page walk refuses
// the file instead.
func TestPageWalkFreelist(t *testing.T) {
	good, err := damageFixture()
	if err != nil {
		t.Fatal(err)
	}
	ps := int64(binary.NativeEndian.Uint32(good[16+8:]))
	// pageTypes reads each page's type with bbolt, freelist loaded.
	pageTypes := func(path string) map[int]string {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		types := map[int]string{}
		db.View(func(tx *bolt.Tx) error {
			for i := 0; ; i++ {
				p, err := tx.Page(i)
				if err != nil || p == nil {
					return nil
				}
				types[i] = p.Type
			}
		})
		return types
	}
	for name, edit := range map[string]func(b []byte, types map[int]string) bool{
		// A leaf or branch page's overflow count grows over the free page after it.
		"overflow over a free page": func(b []byte, types map[int]string) bool {
			for i := 2; i < len(types)-1; i++ {
				if (types[i] == "leaf" || types[i] == "branch") && types[i+1] == "free" &&
					binary.NativeEndian.Uint32(b[int64(i)*ps+12:]) == 0 {
					binary.NativeEndian.PutUint32(b[int64(i)*ps+12:], 1)
					return true
				}
			}
			return false
		},
		// The freelist lists its own page as well.
		"freelist lists itself": func(b []byte, types map[int]string) bool {
			for i := 2; i < len(types); i++ {
				off := int64(i) * ps
				if n := int64(binary.NativeEndian.Uint16(b[off+10:])); types[i] == "freelist" && 16+8*(n+1) <= ps {
					binary.NativeEndian.PutUint64(b[off+16+8*n:], uint64(i))
					binary.NativeEndian.PutUint16(b[off+10:], uint16(n+1))
					return true
				}
			}
			return false
		},
	} {
		t.Run(name, func(t *testing.T) {
			// About one fixture in fifty has no leaf before a free page
			// (bbolt's hashmap freelist places pages at random): build
			// another until one has the page to damage.
			path := filepath.Join(t.TempDir(), "colocd.db")
			fixture := good
			var b []byte
			for try := 0; ; try++ {
				if err := os.WriteFile(path, fixture, 0o600); err != nil {
					t.Fatal(err)
				}
				b = bytes.Clone(fixture)
				if edit(b, pageTypes(path)) {
					break
				}
				if try == 20 {
					t.Fatalf("%d fixtures, none with a page to damage this way", try+1)
				}
				if fixture, err = buildDamageFixture(); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := queue.BoltCheck(path); err != nil {
				t.Errorf("bbolt's tx.Check sees it (%v); this test is for what only the page walk sees", err)
			}
			_, err := queue.Open(path, queue.Options{})
			if !errors.Is(err, queue.ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt from the page walk", err)
			}
			sameFile(t, path, b)
		})
	}
}
