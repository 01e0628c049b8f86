package queue_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

func TestCheck(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		path, js := writeStore(t, 5, nil)
		before, _ := os.ReadFile(path)
		_, txid := metas(t, path)
		rep, err := queue.Check(path, queue.CheckOptions{})
		if err != nil || !rep.Clean() {
			t.Fatalf("Check: %v, %s", err, rep.Summary())
		}
		if rep.Txid != max(txid[0], txid[1]) || rep.Jobs[queue.StatePending] != len(js) || rep.Kinds != 0 || !rep.Scanned {
			t.Errorf("report %+v", rep)
		}
		sameFile(t, path, before)
	})
	t.Run("meta page", func(t *testing.T) {
		path, _ := writeStore(t, 5, nil)
		ps, _ := metas(t, path)
		flipBit(t, path, ps+60, 1)
		rep, err := queue.Check(path, queue.CheckOptions{})
		if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Where != "meta page 1" || !rep.Scanned {
			t.Errorf("Check: %v, %+v; want one problem on meta page 1 and the records read", err, rep.Problems)
		}
	})
	t.Run("record", func(t *testing.T) {
		path, js := writeStore(t, 5, nil)
		putRaw(t, path, "jobs", []byte(js[1].ID), []byte("garbage"))
		before, _ := os.ReadFile(path)
		rep, err := queue.Check(path, queue.CheckOptions{})
		if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Where != "jobs/"+js[1].ID {
			t.Fatalf("Check: %v, %+v; want one problem naming jobs/%s", err, rep.Problems, js[1].ID)
		}
		sameFile(t, path, before)
		// Once a colocd quarantined it, the file is clean and lists it.
		s, err := queue.Open(path, queue.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		rep, err = queue.Check(path, queue.CheckOptions{})
		if err != nil || !rep.Clean() || len(rep.Quarantined) != 1 || rep.Quarantined[0].Key != js[1].ID {
			t.Errorf("Check after quarantine: %v, %s, %+v", err, rep.Summary(), rep.Quarantined)
		}
	})
	t.Run("locked", func(t *testing.T) {
		s, _ := openStore(t, queue.Options{})
		if _, err := queue.Check(s.Path(), queue.CheckOptions{Timeout: 100 * time.Millisecond}); !errors.Is(err, queue.ErrLocked) {
			t.Errorf("Check of an open store: %v, want ErrLocked", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := queue.Check(filepath.Join(t.TempDir(), "none.db"), queue.CheckOptions{}); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Check of a missing file: %v", err)
		}
	})
}

// damageSeed is the base of TestRandomDamage's seeds; set
// COLOCD_QUEUE_DAMAGE_SEED to replay a failure.
func damageSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("COLOCD_QUEUE_DAMAGE_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	t.Logf("seed %d (set COLOCD_QUEUE_DAMAGE_SEED to replay)", seed)
	return seed
}

// damageFixture is a small store with jobs in every state, a kind history,
// preferences and a quarantined record.
var damageFixture = sync.OnceValues(buildDamageFixture)

// buildDamageFixture builds damageFixture's store. Its page layout varies
// from one build to the next (bbolt's hashmap freelist allocates from a map).
func buildDamageFixture() ([]byte, error) {
	dir, err := os.MkdirTemp("", "colocd-damage")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "colocd.db")
	clk := queuetest.NewClock(queuetest.Start)
	s, err := queue.Open(path, queue.Options{NoSync: true, Now: clk.Now, Entropy: rand.NewChaCha8([32]byte{4})})
	if err != nil {
		return nil, err
	}
	for i := 0; i < 40; i++ {
		j := queuetest.Job(fmt.Sprintf("k%d", i%4))
		j.IdempotencyKey = fmt.Sprintf("key-%d", i)
		j.Labels = map[string]string{"team": "db"}
		got, _, err := s.Submit(context.Background(), j)
		if err != nil {
			return nil, err
		}
		switch i % 5 {
		case 1:
			s.Admit(got.ID, "app", json.RawMessage(`{"chosen":"x"}`), nil, nil)
		case 2:
			s.Admit(got.ID, "app", nil, nil, nil)
			s.Start(got.ID)
			s.Finish(got.ID, queue.StateSucceeded, "ok")
		case 3:
			s.Cancel(got.ID)
		}
	}
	s.SavePreferences(bytes.Repeat([]byte("p"), 3000))
	s.Close()
	return os.ReadFile(path)
}

// damage flips random bytes of b: half the time 1–4 bytes, half of them in
// the meta pages; otherwise 1–32 bytes of the other pages, a third of them
// in page headers and element tables.
func damage(r *rand.Rand, b []byte, ps int) {
	if r.IntN(2) == 0 {
		for n := 1 + r.IntN(4); n > 0; n-- {
			i := r.IntN(len(b))
			if r.IntN(2) == 0 {
				i = r.IntN(2)*ps + r.IntN(80)
			}
			b[i] ^= byte(1 + r.IntN(255))
		}
		return
	}
	for n := 1 + r.IntN(32); n > 0; n-- {
		i := 2*ps + r.IntN(len(b)-2*ps)
		if r.IntN(3) == 0 {
			i = i/ps*ps + r.IntN(64)
		}
		b[i] ^= byte(1 + r.IntN(255))
	}
}

// exercise checks and opens a damaged file (refusing a damaged meta page,
// then accepting the fallback) and uses the store when it opens. Each may
// fail; none may panic or hang. It reports whether some open succeeded, and
// an error when a store that opened then failed a new submission with
// anything but a named corruption, or failed to close.
func exercise(path string) (opened bool, err error) {
	_, _ = queue.Check(path, queue.CheckOptions{})
	for i, accept := range []bool{false, true} {
		clk := queuetest.NewClock(queuetest.Start.Add(time.Hour))
		// Each open draws other ids: the first one's job may be in the file.
		s, oerr := queue.Open(path, queue.Options{NoSync: true, Now: clk.Now, Entropy: rand.NewChaCha8([32]byte{5, byte(i)}), AcceptMetaFallback: accept})
		if oerr != nil {
			continue
		}
		opened = true
		s.Pending(0)
		s.List("", 0)
		s.Recent(queue.StateSucceeded, 5)
		s.Histories()
		s.Quarantined()
		s.LoadPreferences()
		if p, _ := s.Pending(1); len(p) == 1 {
			s.Admit(p[0].ID, "app", nil, nil, nil)
			s.Requeue(p[0].ID, "again")
			s.Cancel(p[0].ID)
		}
		if _, _, serr := s.Submit(context.Background(), queuetest.Job("new")); serr != nil &&
			!errors.Is(serr, queue.ErrCorrupt) && !errors.Is(serr, queue.ErrQuarantined) && err == nil {
			err = fmt.Errorf("a store that opened refused a new job without naming the damage: %w", serr)
		}
		s.Compact(clk.Now())
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}
	return opened, err
}

// TestRandomDamage flips random bytes of a small store file, many times:
// Open and Check must return an error or succeed (and the store then
// work), never panic, crash or hang. The store's page layout depends on
// bbolt's map freelist, so a seed replays the damage but not always the
// same file: each round's file is $TMPDIR/colocd-damage-<seed>.db while it
// runs, left behind by a crash, and COLOCD_QUEUE_DAMAGE_FILE=<that file>
// replays it exactly.
func TestRandomDamage(t *testing.T) {
	if path := os.Getenv("COLOCD_QUEUE_DAMAGE_FILE"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		replay := filepath.Join(t.TempDir(), "colocd.db")
		if err := os.WriteFile(replay, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := exercise(replay); err != nil {
			t.Fatal(err)
		}
		return
	}
	good, err := damageFixture()
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.NativeEndian.Uint32(good[16+8:]))
	rounds := 400
	if testing.Short() {
		rounds = 50
	}
	base := damageSeed(t)
	opened := 0
	for i := 0; i < rounds; i++ {
		seed := base + uint64(i)
		b := bytes.Clone(good)
		damage(rand.New(rand.NewPCG(seed, 0)), b, ps)
		path := filepath.Join(os.TempDir(), fmt.Sprintf("colocd-damage-%d.db", seed))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			ok, err := exercise(path)
			if ok {
				opened++
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("seed %d (file kept: %s): %v", seed, path, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("seed %d: Open/Check did not return in 30 s (file kept: %s)", seed, path)
		}
		os.Remove(path)
	}
	// Both outcomes occur, or the damage exercised only one of them.
	if opened == 0 || opened == rounds {
		t.Errorf("%d of %d damaged files opened: want some refused and some opened", opened, rounds)
	}
}

// FuzzDamage is TestRandomDamage for `go test -fuzz FuzzDamage ./queue/`:
// the fuzzer picks the seed of the damage.
func FuzzDamage(f *testing.F) {
	good, err := damageFixture()
	if err != nil {
		f.Fatal(err)
	}
	ps := int(binary.NativeEndian.Uint32(good[16+8:]))
	for _, s := range []uint64{1, 2, 3, 42} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		b := bytes.Clone(good)
		damage(rand.New(rand.NewPCG(seed, 0)), b, ps)
		path := filepath.Join(t.TempDir(), "colocd.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := exercise(path); err != nil {
			t.Fatal(err)
		}
	})
}
