package yarncluster

import (
	"testing"
	"time"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
)

// TestSyncReadsWaitingAppsInOneCall: admitted jobs whose applications wait
// in the RM's queues (ACCEPTED) are read with one listing per sync
// (PendingApps), not one request each: ten such jobs over five syncs cost
// the RM ten listings (the running and the waiting applications, each
// sync) and no per-application read, and each job stays admitted.
func TestSyncReadsWaitingAppsInOneCall(t *testing.T) {
	h := newRMHarness(t, nil)
	const jobs = 10
	for range jobs {
		h.submit()
	}
	for range 20 {
		h.step()
		if h.count(queue.StateAdmitted) == jobs {
			break
		}
		h.clk.Advance(10 * time.Second)
	}
	if n := h.count(queue.StateAdmitted); n != jobs {
		t.Fatalf("%d of %d jobs admitted", n, jobs)
	}
	h.front.reset()
	const syncs = 5
	for range syncs {
		h.clk.Advance(10 * time.Second)
		h.step()
	}
	c := h.front.counts()
	t.Logf("requests over %d syncs: %v", syncs, c)
	if n := c["GET app/"]; n != 0 {
		t.Errorf("%d reads of single applications, want 0 (the waiting ones come in one listing)", n)
	}
	if n := c["GET "+yarnclient.PathApps]; n != 2*syncs {
		t.Errorf("%d application listings over %d syncs, want %d (running and waiting, each sync)", n, syncs, 2*syncs)
	}
	if n := h.count(queue.StateAdmitted); n != jobs {
		t.Errorf("%d of %d jobs still admitted after the syncs", n, jobs)
	}
	h.exactlyOnce()
}
