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
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// compacted writes a compacted copy of the bbolt file b (bbolt's Compact:
// every page live, none stale on the freelist) and returns its path and
// page size. A salvage of it can recover only true records.
func compacted(tb testing.TB, b []byte) (string, int) {
	tb.Helper()
	dir := tb.TempDir()
	src := filepath.Join(dir, "src.db")
	if err := os.WriteFile(src, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	from, err := bolt.Open(src, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer from.Close()
	path := filepath.Join(dir, "colocd.db")
	to, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if err := bolt.Compact(to, from, 0); err != nil {
		tb.Fatal(err)
	}
	if err := to.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.Remove(src); err != nil {
		tb.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return path, int(binary.NativeEndian.Uint32(out[16+8:]))
}

// compactedStore is writeStore(n) compacted (see compacted), with the
// compacted file's bytes.
func compactedStore(t *testing.T, n int) (path string, ps int, file []byte, js []queue.Job) {
	t.Helper()
	src, js := writeStore(t, n, nil)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path, ps = compacted(t, b)
	if file, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	return path, ps, file, js
}

// records reads every key and value of the jobs and kinds buckets of the
// store file at path (closed).
func records(tb testing.TB, path string) map[string]string {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	err = db.View(func(tx *bolt.Tx) error {
		for _, name := range []string{"jobs", "kinds"} {
			if err := tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
				out[name+"/"+string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// sameProblems reports whether two checks found the same problems.
func sameProblems(a, b queue.Report) bool {
	if len(a.Problems) != len(b.Problems) {
		return false
	}
	for i := range a.Problems {
		if a.Problems[i].Kind != b.Problems[i].Kind || a.Problems[i].What != b.Problems[i].What {
			return false
		}
	}
	return true
}

func digestOf(tb testing.TB, path string) [32]byte {
	tb.Helper()
	s, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	_, sum, err := s.Digest()
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.CheckInvariants(); err != nil {
		tb.Errorf("%s: %v", path, err)
	}
	return sum
}

// salvageRefused writes the damaged bytes to path, checks that Open
// refuses them, and salvages them into a new file.
func salvageRefused(t *testing.T, path string, damaged []byte) (string, queue.SalvageReport) {
	t.Helper()
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := queue.Open(path, queue.Options{}); !errors.Is(err, queue.ErrCorrupt) {
		t.Fatalf("Open of the damaged file: %v, want ErrCorrupt", err)
	}
	to := filepath.Join(t.TempDir(), "salvaged.db")
	rep, err := queue.Salvage(path, to, queue.SalvageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return to, rep
}

// A clean file salvages whole: the same content, key for key.
func TestSalvageClean(t *testing.T) {
	good, err := damageFixture()
	if err != nil {
		t.Fatal(err)
	}
	from, _ := compacted(t, good)
	if err := os.Chmod(from, 0o640); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(t.TempDir(), "salvaged.db")
	rep, err := queue.Salvage(from, to, queue.SalvageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(to); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the new file: %v, %v; want the damaged file's mode 0640", fi.Mode(), err)
	}
	// The fixture's legacy preferences are not JSON: a problem of the
	// original too, which the daemon's start handles.
	before, err := queue.Check(from, queue.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete() || !sameProblems(before, rep.Check) || len(rep.Recreated) != 0 || rep.Idem != 0 {
		t.Errorf("report %+v; the original's problems %+v", rep, before.Problems)
	}
	if rep.Keys["jobs"] != 40 || rep.Check.Jobs[queue.StatePending] == 0 {
		t.Errorf("copied %v, checked %v; want the fixture's 40 jobs", rep.Keys, rep.Check.Jobs)
	}
	if digestOf(t, to) != digestOf(t, from) {
		t.Error("the salvaged store's digest differs from the original's")
	}
	// In batches of about a kilobyte (a transaction every few keys): the
	// same content.
	defer queue.SetSalvageBatch(1 << 10)()
	small := filepath.Join(t.TempDir(), "small-batches.db")
	if rep, err := queue.Salvage(from, small, queue.SalvageOptions{}); err != nil || !rep.Complete() {
		t.Fatalf("Salvage in small batches: %v, %+v", err, rep)
	}
	if digestOf(t, small) != digestOf(t, from) {
		t.Error("salvaged in small batches, the digest differs from the original's")
	}
}

// A leaf page of the jobs bucket that does not read (its header broken)
// makes Open refuse the file; Salvage copies the rest, names the jobs
// that were on it (quarantined: a request or a retry for one is told so),
// and the new file opens clean with every other job as it was. A broken
// idempotency page loses no key: they come back from the job records, so
// a retried submission still finds its job.
func TestSalvageBrokenPage(t *testing.T) {
	const n = 400
	clk := queuetest.NewClock(queuetest.Start)
	dir := t.TempDir()
	s, err := queue.Open(filepath.Join(dir, "w.db"), queue.Options{NoSync: true, Now: clk.Now, Entropy: rand.NewChaCha8([32]byte{7})})
	if err != nil {
		t.Fatal(err)
	}
	var js []queue.Job
	for i := range n {
		j := queuetest.Job(fmt.Sprintf("k%d", i%3))
		j.User, j.IdempotencyKey = "alice", fmt.Sprintf("key-%d", i)
		js = append(js, submit(t, s, j))
	}
	s.Close()
	b, err := os.ReadFile(filepath.Join(dir, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		marker func(j queue.Job) []byte // bytes a page of the bucket holds for j
	}{
		{"jobs", func(j queue.Job) []byte { return []byte(`{"id":"` + j.ID + `"`) }},
		{"idem", func(j queue.Job) []byte { return []byte("alice\x00" + j.IdempotencyKey + j.ID) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, ps := compacted(t, b)
			file, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			// The first leaf page holding some of the bucket's entries, and
			// which jobs it holds.
			var page int
			var on []queue.Job
			for p := 2; p*ps < len(file) && on == nil; p++ {
				buf := file[p*ps : (p+1)*ps]
				if binary.NativeEndian.Uint16(buf[8:]) != 0x02 {
					continue
				}
				for _, j := range js {
					if bytes.Contains(buf, tc.marker(j)) {
						page, on = p, append(on, j)
					}
				}
			}
			if on == nil || len(on) == n {
				t.Fatalf("found %d of %d jobs on one page; want a page holding some", len(on), n)
			}
			binary.NativeEndian.PutUint64(file[page*ps:], 1<<40) // its header names another page
			to, rep := salvageRefused(t, from, file)
			if len(rep.Unread) == 0 || rep.Complete() || !rep.Check.Clean() {
				t.Errorf("report: unread %q, check %s", rep.Unread, rep.Check.Summary())
			}
			st, err := queue.Open(to, queue.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.CheckInvariants(); err != nil {
				t.Error(err)
			}
			var lost []string
			for _, l := range rep.Lost {
				lost = append(lost, l.ID)
				if l.State != queue.StatePending || l.Seq == 0 {
					t.Errorf("lost %+v: want its state and sequence number from the indexes", l)
				}
			}
			var want []string
			for _, j := range js {
				got, err := st.Get(j.ID)
				switch {
				case slices.ContainsFunc(on, func(o queue.Job) bool { return o.ID == j.ID }) && tc.name == "jobs":
					want = append(want, j.ID)
					if !errors.Is(err, queue.ErrQuarantined) || !strings.Contains(err.Error(), "salvage") {
						t.Errorf("job %s was on the broken page: Get = %v, want it quarantined by the salvage", j.ID, err)
					}
				case err != nil:
					t.Errorf("job %s: %v", j.ID, err)
				default:
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(j)
					if !bytes.Equal(g, w) {
						t.Errorf("job %s salvaged as\n%s\nwant\n%s", j.ID, g, w)
					}
				}
			}
			if !slices.Equal(lost, want) {
				t.Errorf("lost %v, want %v", lost, want)
			}
			if tc.name == "idem" && rep.Idem != len(on) {
				t.Errorf("%d idempotency keys restored, want the %d on the broken page", rep.Idem, len(on))
			}
			// A retry of a job still here gets that job; a new job gets a
			// sequence number after every old one.
			keep := js[n-1]
			if tc.name == "idem" {
				keep = on[0]
			}
			retry := queuetest.Job(keep.Kind)
			retry.User, retry.IdempotencyKey = "alice", keep.IdempotencyKey
			got, created, err := st.Submit(context.Background(), retry)
			if err != nil || created || got.ID != keep.ID {
				t.Errorf("retry of %s: %s, created %v, %v; want the job", keep.ID, got.ID, created, err)
			}
			if tc.name == "jobs" {
				retry.IdempotencyKey = on[0].IdempotencyKey
				if _, _, err := st.Submit(context.Background(), retry); !errors.Is(err, queue.ErrQuarantined) {
					t.Errorf("retry of the lost %s: %v, want it quarantined", on[0].ID, err)
				}
			}
			fresh, _, err := st.Submit(context.Background(), queuetest.Job("new"))
			if err != nil || fresh.Seq <= js[n-1].Seq {
				t.Errorf("a new job: seq %d, %v; want after %d", fresh.Seq, err, js[n-1].Seq)
			}
		})
	}
}

// Random damage of a compacted store: Salvage returns or fails with an
// error, never panics or hangs; what it returns opens with its invariants
// holding and checks clean but for the fixture's own learned-state
// problem, and every job and kind record in it is one the damaged file
// holds, key and value (nothing invented, nothing moved: no page is stale
// in a compacted file, so nothing read can be an older version either).
func TestSalvageRandomDamage(t *testing.T) {
	good, err := damageFixture()
	if err != nil {
		t.Fatal(err)
	}
	clean, ps := compacted(t, good)
	orig := records(t, clean)
	pristine, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	rounds := 300
	if testing.Short() {
		rounds = 40
	}
	base := damageSeed(t)
	salvaged, partial := 0, 0
	for i := range rounds {
		seed := base + uint64(i)
		b := bytes.Clone(pristine)
		damage(rand.New(rand.NewPCG(seed, 0)), b, ps)
		dir := t.TempDir()
		from, to := filepath.Join(dir, "colocd.db"), filepath.Join(dir, "salvaged.db")
		if err := os.WriteFile(from, b, 0o600); err != nil {
			t.Fatal(err)
		}
		type result struct {
			rep queue.SalvageReport
			err error
		}
		done := make(chan result, 1)
		go func() {
			rep, err := queue.Salvage(from, to, queue.SalvageOptions{})
			done <- result{rep, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("seed %d: Salvage did not return in 30 s", seed)
		}
		if r.err != nil {
			if _, err := os.Stat(to); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("seed %d: Salvage failed (%v) and left %s", seed, r.err, to)
			}
			continue
		}
		salvaged++
		if !r.rep.Complete() {
			partial++
		}
		for _, p := range r.rep.Check.Problems {
			if p.Kind != "learned" {
				t.Errorf("seed %d: the salvaged file: %s: %s", seed, p.Where, p.What)
			}
		}
		for k, v := range records(t, to) {
			_, key, _ := strings.Cut(k, "/")
			if v != orig[k] && !bytes.Contains(b, []byte(v)) || !bytes.Contains(b, []byte(key)) {
				t.Errorf("seed %d: %s = %q is not in the damaged file", seed, k, v)
			}
		}
		s, err := queue.Open(to, queue.Options{NoSync: true})
		if err != nil {
			t.Errorf("seed %d: the salvaged file does not open: %v", seed, err)
			continue
		}
		// A byte flipped inside a job's user or key, or inside an
		// idempotency key, leaves both readable and no longer matching:
		// damage no reader can see, in the original file as in the copy.
		if err := s.CheckInvariants(); err != nil && !strings.Contains(err.Error(), "names job") {
			t.Errorf("seed %d: %v", seed, err)
		}
		// A new job comes after every job salvaged or lost.
		var last uint64
		all, _ := s.List("", 0)
		for _, j := range all {
			last = max(last, j.Seq)
		}
		for _, l := range r.rep.Lost {
			last = max(last, l.Seq)
		}
		if j, _, err := s.Submit(context.Background(), queuetest.Job("new")); err != nil || j.Seq <= last {
			t.Errorf("seed %d: a new job: seq %d, %v; want after %d", seed, j.Seq, err, last)
		}
		s.Close()
	}
	t.Logf("%d of %d damaged files salvaged, %d of them in part", salvaged, rounds, partial)
	if salvaged == 0 || partial == 0 {
		t.Errorf("%d of %d damaged files salvaged, %d of them in part: want both outcomes", salvaged, rounds, partial)
	}
}

func TestSalvageRefuses(t *testing.T) {
	path, _ := writeStore(t, 3, nil)
	t.Run("an existing file", func(t *testing.T) {
		to := filepath.Join(t.TempDir(), "there.db")
		if err := os.WriteFile(to, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := queue.Salvage(path, to, queue.SalvageOptions{}); !errors.Is(err, os.ErrExist) {
			t.Errorf("Salvage into an existing file: %v, want ErrExist", err)
		}
		if b, _ := os.ReadFile(to); string(b) != "keep me" {
			t.Errorf("the existing file now holds %q", b)
		}
	})
	t.Run("itself", func(t *testing.T) {
		if _, err := queue.Salvage(path, path, queue.SalvageOptions{}); err == nil {
			t.Error("Salvage into the damaged file itself succeeded")
		}
	})
	t.Run("locked", func(t *testing.T) {
		s, err := queue.Open(path, queue.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		to := filepath.Join(t.TempDir(), "new.db")
		if _, err := queue.Salvage(path, to, queue.SalvageOptions{Timeout: 100 * time.Millisecond}); !errors.Is(err, queue.ErrLocked) {
			t.Errorf("Salvage of an open store: %v, want ErrLocked", err)
		}
		if _, err := os.Stat(to); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused salvage left %s", to)
		}
	})
	t.Run("a replica's store", func(t *testing.T) {
		path, _ := writeStore(t, 3, nil)
		putRaw(t, path, "meta", []byte("cluster"), []byte("c-1"))
		to := filepath.Join(t.TempDir(), "new.db")
		if _, err := queue.Salvage(path, to, queue.SalvageOptions{}); err == nil || !strings.Contains(err.Error(), "re-joins") {
			t.Errorf("Salvage of a replica's store: %v, want a refusal saying it re-joins", err)
		}
		if _, err := os.Stat(to); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused salvage left %s", to)
		}
	})
	t.Run("not a store", func(t *testing.T) {
		from := filepath.Join(t.TempDir(), "text")
		if err := os.WriteFile(from, bytes.Repeat([]byte("x"), 8192), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := queue.Salvage(from, filepath.Join(t.TempDir(), "new.db"), queue.SalvageOptions{}); err == nil {
			t.Error("Salvage of a text file succeeded")
		}
	})
}

// A job's leaf element with the bucket flag set by damage: Open refuses
// the file (the walk finds no bucket there); Salvage copies the element
// as the key it is, and the job comes back whole.
func TestSalvageBucketFlag(t *testing.T) {
	from, ps, file, js := compactedStore(t, 20)
	victim := js[7]
	set := false
	for p := 2; p*ps < len(file) && !set; p++ {
		buf := file[p*ps : (p+1)*ps]
		if binary.NativeEndian.Uint16(buf[8:]) != 0x02 {
			continue
		}
		for i := range int(binary.NativeEndian.Uint16(buf[10:])) {
			e := 16 + 16*i
			pos, ksize := int(binary.NativeEndian.Uint32(buf[e+4:])), int(binary.NativeEndian.Uint32(buf[e+8:]))
			if string(buf[e+pos:e+pos+ksize]) == victim.ID && bytes.HasPrefix(buf[e+pos+ksize:], []byte("{")) {
				binary.NativeEndian.PutUint32(buf[e:], 1) // the bucket flag
				set = true
			}
		}
	}
	if !set {
		t.Fatal("the job's leaf element was not found")
	}
	to, rep := salvageRefused(t, from, file)
	if len(rep.Lost) != 0 || !rep.Check.Clean() || rep.Keys["jobs"] != len(js) {
		t.Errorf("report: lost %v, check %s, keys %v", rep.Lost, rep.Check.Summary(), rep.Keys)
	}
	s, err := queue.Open(to, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(victim.ID)
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(victim)
	if err != nil || !bytes.Equal(g, w) {
		t.Errorf("the flagged job: %v\n%s\nwant\n%s", err, g, w)
	}
}
