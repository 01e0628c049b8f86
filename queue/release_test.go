package queue_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// quarantinedStore writes a store of n jobs (job i with idempotency key
// "key-i"), admits job 1, damages the records of jobs 2 (pending) and 1
// (admitted) and opens it once, which quarantines them. It returns the
// path, the jobs and each job's record as it was stored.
func quarantinedStore(t *testing.T, n int) (string, []queue.Job, map[string][]byte) {
	t.Helper()
	path, js := writeStore(t, n, func(j *queue.Job, i int) {
		j.User, j.IdempotencyKey = "alice", "key-"+string(rune('a'+i))
	})
	s, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(js[1].ID, "application_1_0001", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if js[1], err = s.Get(js[1].ID); err != nil {
		t.Fatal(err)
	}
	s.Close()
	records := map[string][]byte{}
	for _, j := range js {
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		records[j.ID] = b
	}
	putRaw(t, path, "jobs", []byte(js[2].ID), []byte("{garbage"))
	putRaw(t, path, "jobs", []byte(js[1].ID), []byte("{garbage"))
	s, err = queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := s.Quarantined(); len(q) != 2 {
		t.Fatalf("%d quarantined, want 2", len(q))
	}
	s.Close()
	return path, js, records
}

// A quarantined pending job, released from its repaired record, is back
// where it was in the FIFO, with its idempotency key; the store's
// invariants hold and the quarantine no longer lists it.
func TestRelease(t *testing.T) {
	path, js, records := quarantinedStore(t, 5)
	got, err := queue.Release(path, js[2].ID, records[js[2].ID], queue.ReleaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != js[2].ID || got.Seq != js[2].Seq || got.State != queue.StatePending {
		t.Errorf("released %+v", got)
	}
	s, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckInvariants(); err != nil {
		t.Error(err)
	}
	pending, err := s.Pending(0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{js[0].ID, js[2].ID, js[3].ID, js[4].ID}
	if got := ids(pending); !slices.Equal(got, want) {
		t.Errorf("pending %v, want %v (the released job in its place)", got, want)
	}
	retry := queuetest.Job(js[2].Kind)
	retry.User, retry.IdempotencyKey = "alice", js[2].IdempotencyKey
	if j, created, err := s.Submit(context.Background(), retry); err != nil || created || j.ID != js[2].ID {
		t.Errorf("a retry of the released job's key: %s, created %v, %v; want the job", j.ID, created, err)
	}
	q, _ := s.Quarantined()
	if len(q) != 1 || q[0].Key != js[1].ID {
		t.Errorf("quarantined %+v, want only the admitted job", q)
	}
}

func TestReleaseRefuses(t *testing.T) {
	path, js, records := quarantinedStore(t, 5)
	other := func(edit func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(records[js[2].ID], &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		return b
	}
	for _, tc := range []struct {
		name, id string
		record   []byte
		want     string
	}{
		{"an admitted job", js[1].ID, records[js[1].ID], "admitted, not pending"},
		{"a job not quarantined", js[0].ID, records[js[0].ID], "not quarantined"},
		{"an unknown job", "01NOSUCHJOB", records[js[2].ID], "not quarantined"},
		{"another job's record", js[2].ID, records[js[3].ID], "the record is job " + js[3].ID},
		{"an unknown field", js[2].ID, other(func(m map[string]any) { m["colour"] = "red" }), "unknown field"},
		{"another sequence number", js[2].ID, other(func(m map[string]any) { m["seq"] = 99 }), "sequence number 99"},
		{"a running state", js[2].ID, other(func(m map[string]any) { m["state"] = "running" }), "released as pending"},
		{"an invalid job", js[2].ID, other(func(m map[string]any) { m["kind"] = "" }), "not a valid job"},
		{"a key another job holds", js[2].ID, other(func(m map[string]any) { m["idempotency_key"] = js[0].IdempotencyKey }), "held by job " + js[0].ID},
		{"two values", js[2].ID, append(append([]byte{}, records[js[2].ID]...), "{}"...), "more than one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(path)
			_, err := queue.Release(path, tc.id, tc.record, queue.ReleaseOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Release: %v, want an error saying %q", err, tc.want)
			}
			s, err := queue.Open(path, queue.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			q, _ := s.Quarantined()
			s.Close()
			if len(q) != 2 {
				t.Errorf("after a refused release %d quarantined, want 2 (file was %d bytes)", len(q), len(before))
			}
		})
	}
	t.Run("a replica's store", func(t *testing.T) {
		putRaw(t, path, "meta", []byte("cluster"), []byte("c-1"))
		if _, err := queue.Release(path, js[2].ID, records[js[2].ID], queue.ReleaseOptions{}); err == nil || !strings.Contains(err.Error(), "replica") {
			t.Errorf("Release in a replica's store: %v, want a refusal naming the replica", err)
		}
	})
	t.Run("an open store", func(t *testing.T) {
		s, err := queue.Open(path, queue.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := queue.Release(path, js[2].ID, records[js[2].ID], queue.ReleaseOptions{Timeout: 100 * time.Millisecond}); !errors.Is(err, queue.ErrLocked) {
			t.Errorf("Release while the store is open: %v, want ErrLocked", err)
		}
	})
}

// A job a salvage lost (its record on a broken page) comes back from the
// job as its submitter sent it, with the sequence number the salvage
// recorded.
func TestReleaseLostBySalvage(t *testing.T) {
	to, lost, orig := lostBySalvage(t)
	j := orig
	j.Seq = 0 // the submitter's copy has none: the quarantine entry gives it
	b, _ := json.Marshal(j)
	got, err := queue.Release(to, lost.ID, b, queue.ReleaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != lost.Seq {
		t.Errorf("released at seq %d, the salvage recorded %d", got.Seq, lost.Seq)
	}
	s, err := queue.Open(to, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckInvariants(); err != nil {
		t.Error(err)
	}
	if g, err := s.Get(lost.ID); err != nil || g.Kind != orig.Kind {
		t.Errorf("the released job: %+v, %v", g, err)
	}
}

// lostBySalvage salvages a store whose first job's leaf page is broken and
// returns the new file, the first job lost and that job as it was.
func lostBySalvage(t *testing.T) (string, queue.LostJob, queue.Job) {
	t.Helper()
	from, ps, file, js := compactedStore(t, 200)
	marker := []byte(`{"id":"` + js[0].ID + `"`)
	for p := 2; (p+1)*ps <= len(file); p++ {
		if buf := file[p*ps : (p+1)*ps]; binary.NativeEndian.Uint16(buf[8:]) == 0x02 && strings.Contains(string(buf), string(marker)) {
			binary.NativeEndian.PutUint64(buf, 1<<40) // its header names another page
		}
	}
	to, rep := salvageRefused(t, from, file)
	if len(rep.Lost) == 0 || rep.Lost[0].ID != js[0].ID {
		t.Fatalf("lost %v, want %s first", rep.Lost, js[0].ID)
	}
	return to, rep.Lost[0], js[0]
}
