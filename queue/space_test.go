package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/colocd/colocd/queue"
)

// TestSpaceReserve: below Options.Reserve every new job of a group commit
// is refused with a *SpaceError (ErrLowSpace and ENOSPC) and nothing is
// written, while a retry of an accepted key in the same commit gets its
// job, and transitions of accepted jobs go on; an unreadable free space
// refuses nothing.
func TestSpaceReserve(t *testing.T) {
	var free atomic.Uint64
	var statErr atomic.Bool
	free.Store(10 << 20)
	s, _ := openStore(t, queue.Options{Reserve: 4 << 20, FreeSpace: func() (uint64, error) {
		if statErr.Load() {
			return 0, syscall.EIO
		}
		return free.Load(), nil
	}})
	ctx := context.Background()
	first, _, err := s.Submit(ctx, spaceJob("k0"))
	if err != nil {
		t.Fatal(err)
	}

	free.Store(3<<20 + 512<<10)
	if err := s.CheckSpace(); err == nil || !strings.Contains(err.Error(), "3.5 MiB free, below the reserve of 4.0 MiB") {
		t.Fatalf("CheckSpace below the reserve = %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = s.Submit(ctx, spaceJob(fmt.Sprintf("k%d", i+1)))
		}()
	}
	got, created, err := s.Submit(ctx, spaceJob("k0"))
	wg.Wait()
	if err != nil || created || got.ID != first.ID {
		t.Errorf("a retry of an accepted key below the reserve: %s created=%v %v, want %s back", got.ID, created, err, first.ID)
	}
	for i, err := range errs {
		var se *queue.SpaceError
		if !errors.As(err, &se) || !errors.Is(err, queue.ErrLowSpace) || !errors.Is(err, syscall.ENOSPC) || se.Reserve != 4<<20 {
			t.Errorf("new job %d below the reserve: %v, want a *SpaceError matching ErrLowSpace and ENOSPC", i, err)
		}
	}
	if n, err := s.Submitted(); err != nil || n != 1 {
		t.Errorf("jobs ever stored: %d %v, want 1", n, err)
	}
	if _, err := s.Admit(first.ID, "application_1_0001", nil, nil, nil); err != nil {
		t.Errorf("a transition below the reserve: %v", err)
	}

	statErr.Store(true)
	if err := s.CheckSpace(); err != nil {
		t.Errorf("CheckSpace when the free space cannot be read = %v, want nil", err)
	}
	if _, _, err := s.Submit(ctx, spaceJob("")); err != nil {
		t.Errorf("a submission when the free space cannot be read: %v", err)
	}
}

// TestSpaceReserveStatfs: without Options.FreeSpace the store reads its
// directory's file system: an impossible reserve refuses a submission.
func TestSpaceReserveStatfs(t *testing.T) {
	s, _ := openStore(t, queue.Options{Reserve: 1 << 62})
	_, _, err := s.Submit(context.Background(), spaceJob(""))
	var se *queue.SpaceError
	if !errors.As(err, &se) || se.Free == 0 {
		t.Fatalf("a 4 EiB reserve: %v, want a *SpaceError with the directory's free space", err)
	}
	t.Logf("%v", err)
}

func spaceJob(key string) queue.Job {
	return queue.Job{Kind: "cpu", User: "ana", Queue: "q", IdempotencyKey: key, Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}}
}
