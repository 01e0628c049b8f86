package queue_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// putRaw overwrites one value of the file with bbolt directly.
func putRaw(tb testing.TB, path, bucket string, key, v []byte) {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucket)).Put(key, v) }); err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
}

// One pending job's record is damaged on disk. The damaged job is
// quarantined (at Open, or on the first read with SkipCheck) and logged
// once; everything else goes on: the other jobs are listed, cancelled and
// admitted in order, and the damaged one answers ErrQuarantined.
func TestDamagedRecordQuarantined(t *testing.T) {
	damage := map[string]func(j queue.Job) []byte{
		"not json": func(queue.Job) []byte { return []byte(`{"id":"01`) },
		"other id": func(j queue.Job) []byte {
			j.ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
			b, _ := json.Marshal(j)
			return b
		},
		"bad state": func(j queue.Job) []byte {
			b, _ := json.Marshal(j)
			return bytes.Replace(b, []byte(`"pending"`), []byte(`"pendinf"`), 1)
		},
	}
	for name, bad := range damage {
		for _, skip := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/skip_check=%v", name, skip), func(t *testing.T) {
				path, js := writeStore(t, 6, func(j *queue.Job, i int) {
					j.IdempotencyKey = fmt.Sprintf("key-%d", i)
				})
				raw := bad(js[2])
				putRaw(t, path, "jobs", []byte(js[2].ID), raw)

				logs := &logRecorder{}
				s, err := queue.Open(path, queue.Options{SkipCheck: skip, Logger: slog.New(logs), NoSync: true})
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer s.Close()

				list, err := s.List("", 0)
				if err != nil {
					t.Fatalf("List: %v", err)
				}
				if diff := cmp.Diff(ids([]queue.Job{js[0], js[1], js[3], js[4], js[5]}), ids(list)); diff != "" {
					t.Errorf("List (-want +got):\n%s", diff)
				}
				_, err = s.Get(js[2].ID)
				var qe *queue.QuarantinedError
				if !errors.As(err, &qe) || !errors.Is(err, queue.ErrQuarantined) || qe.ID != js[2].ID || qe.Reason == "" {
					t.Errorf("Get(damaged): %v, want a *QuarantinedError", err)
				}
				if _, err := s.Cancel(js[2].ID); !errors.Is(err, queue.ErrQuarantined) {
					t.Errorf("Cancel(damaged): %v, want ErrQuarantined", err)
				}
				if _, err := s.Cancel(js[4].ID); err != nil {
					t.Errorf("Cancel(another job): %v", err)
				}
				// A retry of the damaged job's submission says what happened.
				retry := queuetest.Job("k2")
				retry.IdempotencyKey = "key-2"
				if _, _, err := s.Submit(context.Background(), retry); !errors.Is(err, queue.ErrQuarantined) {
					t.Errorf("retry of the damaged job's submission: %v, want ErrQuarantined", err)
				}
				var admitted []string
				for {
					head, err := s.Pending(1)
					if err != nil {
						t.Fatalf("Pending: %v", err)
					}
					if len(head) == 0 {
						break
					}
					if _, err := s.Admit(head[0].ID, "app", nil, nil, nil); err != nil {
						t.Fatalf("Admit(%s): %v", head[0].ID, err)
					}
					admitted = append(admitted, head[0].ID)
				}
				if diff := cmp.Diff(ids([]queue.Job{js[0], js[1], js[3], js[5]}), admitted); diff != "" {
					t.Errorf("admission order (-want +got):\n%s", diff)
				}

				q, err := s.Quarantined()
				if err != nil {
					t.Fatal(err)
				}
				want := []queue.QuarantinedRecord{{Bucket: "jobs", Key: js[2].ID, Raw: raw, State: queue.StatePending, Seq: js[2].Seq}}
				if diff := cmp.Diff(want, q, cmpIgnore("Reason", "At")); diff != "" || q[0].Reason == "" {
					t.Errorf("Quarantined (-want +got):\n%s", diff)
				}
				if c, _ := s.Counts(); c[queue.StatePending] != 0 || c[queue.StateAdmitted] != 4 || c[queue.StateCancelled] != 1 {
					t.Errorf("Counts = %v", c)
				}
				if err := s.CheckInvariants(); err != nil {
					t.Error(err)
				}
				errs := logs.at(slog.LevelError)
				if len(errs) != 1 || errs[0]["job"] != js[2].ID || errs[0]["reason"] == "" {
					t.Errorf("ERROR lines %v, want one naming job %s", errs, js[2].ID)
				}
			})
		}
	}
}

func cmpIgnore(fields ...string) cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		for _, f := range fields {
			if p.Last().String() == "."+f {
				return true
			}
		}
		return false
	}, cmp.Ignore())
}

// A damaged FIFO entry (the index, not the record) is found by Open's
// scan, which rebuilds the indexes from the records.
func TestDamagedIndexRebuilt(t *testing.T) {
	path, js := writeStore(t, 6, nil)
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], js[3].Seq)
	putRaw(t, path, "pending", seq[:], []byte("01ARZ3NDEKTSV4RRFFQ69G5FAV"))

	rep, err := queue.Check(path, queue.CheckOptions{})
	if err != nil || rep.Clean() || rep.Problems[0].Kind != "index" {
		t.Fatalf("Check: %v; %+v, want an index problem", err, rep.Problems)
	}
	logs := &logRecorder{}
	s, err := queue.Open(path, queue.Options{Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Pending(0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ids(js), ids(p)); diff != "" {
		t.Errorf("Pending after the rebuild (-want +got):\n%s", diff)
	}
	if pos, err := s.Position(js[3].ID); err != nil || pos != 3 {
		t.Errorf("Position = %d, %v; want 3", pos, err)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Error(err)
	}
	if errs := logs.at(slog.LevelError); len(errs) != 1 || errs[0]["differences"] == nil {
		t.Errorf("ERROR lines %v, want one about the rebuild", errs)
	}
}

// A damaged kind history is quarantined; the kind starts over and its jobs
// still finish.
func TestDamagedKindHistory(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip_check=%v", skip), func(t *testing.T) {
			path, js := writeStore(t, 3, nil)
			putRaw(t, path, "kinds", []byte("k0"), []byte(`{"kind":"k0","runs":`))
			s, err := queue.Open(path, queue.Options{SkipCheck: skip, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if h, err := s.Histories(); err != nil || len(h) != 0 {
				t.Errorf("Histories = %v, %v; want none", h, err)
			}
			s.Admit(js[0].ID, "app", nil, nil, nil)
			if _, err := s.Finish(js[0].ID, queue.StateSucceeded, ""); err != nil {
				t.Fatalf("Finish: %v", err)
			}
			if h, err := s.History("k0"); err != nil || h.Runs != 1 {
				t.Errorf("History(k0) = %+v, %v; want one run", h, err)
			}
			if q, _ := s.Quarantined(); len(q) != 1 || q[0].Bucket != "kinds" || q[0].Key != "k0" {
				t.Errorf("Quarantined = %+v", q)
			}
		})
	}
}
