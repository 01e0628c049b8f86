package ha_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/ha"
	"github.com/colocd/colocd/internal/testing/zktest"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// node is one replica under test: its store, its Replica and its Run.
type node struct {
	id     string
	store  *queue.Store
	rep    *ha.Replica
	cancel context.CancelFunc
	done   chan error
}

func testConfig(e *zktest.Ensemble, id string) ha.Config {
	return ha.Config{Connect: e.Addrs(), Root: "/colocd/test", SessionTimeout: 2 * time.Second, ID: id,
		Advertise: "http://" + id + ".test:8080", SnapshotEvery: 50, KeepEntries: 10}
}

func logger(t testing.TB, id string) *slog.Logger {
	if os.Getenv("COLOCD_HA_DEBUG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", id)
}

func start(t *testing.T, cfg ha.Config, dir string) *node {
	t.Helper()
	return startWith(t, cfg, dir, nil)
}

func startWith(t *testing.T, cfg ha.Config, dir string, onEvent func(ha.Event)) *node {
	t.Helper()
	store, err := queue.Open(filepath.Join(dir, "queue.db"), queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{id: cfg.ID, store: store}
	startRepWith(t, n, cfg, dir, onEvent)
	t.Cleanup(n.stop)
	return n
}

// startRep runs a replica over n.store.
func startRep(tb testing.TB, n *node, cfg ha.Config, dir string) *ha.Replica {
	tb.Helper()
	rep := startRepWith(tb, n, cfg, dir, nil)
	tb.Cleanup(func() {
		n.cancel()
		<-n.done
	})
	return rep
}

func startRepWith(tb testing.TB, n *node, cfg ha.Config, dir string, onEvent func(ha.Event)) *ha.Replica {
	tb.Helper()
	rep, err := ha.New(n.store, cfg, ha.Options{Dir: dir, Logger: logger(tb, cfg.ID), OnEvent: onEvent})
	if err != nil {
		tb.Fatal(err)
	}
	n.store.SetLog(rep)
	ctx, cancel := context.WithCancel(context.Background())
	n.rep, n.cancel, n.done = rep, cancel, make(chan error, 1)
	go func() { n.done <- rep.Run(ctx) }()
	return rep
}

func eventuallyB(tb testing.TB, rep *ha.Replica) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !rep.IsLeader() {
		if time.Now().After(deadline) {
			tb.Fatal("no leader after 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (n *node) stop() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	<-n.done
	n.cancel = nil
	n.store.Close()
}

// eventually waits, generously, for cond (a busy 2-core CI machine).
// A seen, when given, is what cond last found, for the failure message.
func eventually(t *testing.T, what string, d time.Duration, cond func() bool, seen ...*string) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			if len(seen) > 0 {
				t.Fatalf("%s: not after %v (last seen: %s)", what, d, *seen[0])
			}
			t.Fatalf("%s: not after %v", what, d)
		}
		<-tick.C
	}
}

func leaderOf(nodes ...*node) *node {
	for _, n := range nodes {
		if n.cancel != nil && n.rep.IsLeader() {
			return n
		}
	}
	return nil
}

var keys atomic.Int64

func submit(t *testing.T, n *node, k int) []string {
	t.Helper()
	ids := make([]string, k)
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := queuetest.Job(fmt.Sprintf("k%d", i%3))
			j.IdempotencyKey = fmt.Sprintf("%s-%d-%d", n.id, keys.Add(1), i)
			got, _, err := n.store.Submit(context.Background(), j)
			if err != nil {
				errs <- err
				return
			}
			ids[i] = got.ID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("submit through %s: %v", n.id, err)
	}
	return ids
}

func sameStores(t *testing.T, nodes ...*node) {
	t.Helper()
	eventually(t, "every replica applies the log to the same index and content", 30*time.Second, func() bool {
		i0, d0, err := nodes[0].store.Digest()
		if err != nil {
			return false
		}
		for _, n := range nodes[1:] {
			i, d, err := n.store.Digest()
			if err != nil || i != i0 || d != d0 {
				return false
			}
		}
		return true
	})
}

// Three replicas: one leads, writes through the others are refused with
// the leader's name, and every replica applies the leader's log to the
// same content. When the leader goes, another takes over with a higher
// epoch, from everything acknowledged.
func TestReplicatedStore(t *testing.T) {
	e := zktest.Start(t, zktest.Options{})
	var nodes []*node
	for i := 1; i <= 3; i++ {
		nodes = append(nodes, start(t, testConfig(e, fmt.Sprintf("r%d", i)), t.TempDir()))
	}
	eventually(t, "a leader is elected", 30*time.Second, func() bool { return leaderOf(nodes...) != nil })
	lead := leaderOf(nodes...)
	epoch := lead.rep.Status(false).Epoch
	ids := submit(t, lead, 100)
	for _, n := range nodes {
		if n == lead {
			continue
		}
		eventually(t, n.id+" knows the leader", 30*time.Second, func() bool { return n.rep.Leader().ID == lead.id })
		_, _, err := n.store.Submit(context.Background(), queuetest.Job("x"))
		var nl *ha.NotLeaderError
		if !errors.As(err, &nl) || nl.Leader.ID != lead.id {
			t.Errorf("submit through follower %s: %v, want not-leader naming %s", n.id, err, lead.id)
		}
	}
	sameStores(t, nodes...)

	lead.stop()
	rest := make([]*node, 0, 2)
	for _, n := range nodes {
		if n != lead {
			rest = append(rest, n)
		}
	}
	eventually(t, "another replica takes over", 30*time.Second, func() bool { return leaderOf(rest...) != nil })
	next := leaderOf(rest...)
	if got := next.rep.Status(false).Epoch; got <= epoch {
		t.Errorf("new epoch %d, not above %d", got, epoch)
	}
	for _, id := range ids {
		if _, err := next.store.Get(id); err != nil {
			t.Errorf("acknowledged job %s missing on the new leader: %v", id, err)
		}
	}
	submit(t, next, 30)
	sameStores(t, rest...)
}

// A replica that joins late, after the log was truncated behind a
// snapshot, installs the snapshot and follows from there; ZooKeeper keeps
// only KeepEntries entries behind the snapshot.
func TestJoinFromSnapshot(t *testing.T) {
	e := zktest.Start(t, zktest.Options{Servers: 1})
	first := start(t, testConfig(e, "a"), t.TempDir())
	eventually(t, "a leads", 30*time.Second, first.rep.IsLeader)
	for range 30 {
		submit(t, first, 8) // at least 30 entries: more than snapshot_every 50 with the transitions below
	}
	pending, err := first.store.Pending(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range pending[:40] {
		if _, err := first.store.Cancel(j.ID); err != nil {
			t.Fatal(err)
		}
	}
	logTruncated(t, e)
	var installed atomic.Int64
	late := startWith(t, testConfig(e, "b"), t.TempDir(), func(ev ha.Event) {
		if ev == ha.EventSnapshotInstalled {
			installed.Add(1)
		}
	})
	sameStores(t, first, late)
	if installed.Load() != 1 {
		t.Errorf("the late replica installed %d snapshots, want 1", installed.Load())
	}
}

// logTruncated waits (up to a minute) for the log to have been truncated
// behind a snapshot: its first entry is above 1, and it holds at most
// SnapshotEvery + KeepEntries entries (what is left when no further
// snapshot is due: the last one at S keeps S−KeepEntries…S+SnapshotEvery−1).
// The test wrote more than that, so an untruncated log fails it.
func logTruncated(t *testing.T, e *zktest.Ensemble) {
	t.Helper()
	c, _, err := zkConn(t, e)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := testConfig(e, "")
	most := int(cfg.SnapshotEvery + cfg.KeepEntries)
	var seen string
	eventually(t, "a snapshot is taken and the log truncated behind it", time.Minute, func() bool {
		names, _, err := c.Children("/colocd/test/log")
		if err != nil {
			seen = err.Error()
			return false
		}
		first := uint64(0)
		for _, n := range names {
			if i, err := strconv.ParseUint(n, 10, 64); err == nil && (first == 0 || i < first) {
				first = i
			}
		}
		seen = fmt.Sprintf("%d entries from %d", len(names), first)
		return first > 1 && len(names) <= most
	}, &seen)
}

// Entries applied while a snapshot is being taken count when it ends: a
// burst that crossed the next threshold during it gets the next snapshot
// at once, not at the next append. (The first snapshot is held after it
// packed the store at about entry 50 while 70 more are applied; with
// nothing appended after, only the check at its end can take the second.)
func TestSnapshotAfterABurst(t *testing.T) {
	e := zktest.Start(t, zktest.Options{Servers: 1})
	release, held := make(chan struct{}), make(chan struct{}, 1)
	var calls atomic.Int64
	t.Cleanup(ha.SetSnapshotHook(func() {
		if calls.Add(1) == 1 {
			held <- struct{}{}
			<-release
		}
	})) // registered before the replica's own cleanup: removed after it stopped
	n := start(t, testConfig(e, "a"), t.TempDir())
	var releaseOnce sync.Once
	unhold := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unhold) // a failed test does not leave the snapshot held while the replica stops
	eventually(t, "a leads", 30*time.Second, n.rep.IsLeader)
	for range 55 {
		submit(t, n, 1)
	}
	select {
	case <-held:
	case <-time.After(time.Minute):
		t.Fatal("no snapshot started after 55 entries")
	}
	for range 70 {
		submit(t, n, 1)
	}
	unhold()
	logTruncated(t, e)
	if got := calls.Load(); got < 2 {
		t.Errorf("%d snapshots, want a second after the held one", got)
	}
}

// With digest credentials every znode colocd creates carries a digest
// ACL: a client without them reads nothing of the log, and cannot take
// the leadership.
func TestDigestACL(t *testing.T) {
	e := zktest.Start(t, zktest.Options{Servers: 1})
	cfg := testConfig(e, "a")
	cfg.Auth = &ha.Auth{User: "colocd", Password: "s3cret"}
	n := start(t, cfg, t.TempDir())
	eventually(t, "a leads", 30*time.Second, n.rep.IsLeader)
	submit(t, n, 3)
	c, _, err := zkConn(t, e)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"/colocd/test/log/00000000000000000001", "/colocd/test/cluster", "/colocd/test/epoch"} {
		if _, _, err := c.Get(p); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("get %s without credentials: %v, want %v", p, err, zk.ErrNoAuth)
		}
	}
	if _, err := c.Set("/colocd/test/epoch", nil, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("bump the epoch without credentials: %v, want %v", err, zk.ErrNoAuth)
	}
	if err := c.AddAuth("digest", []byte("colocd:s3cret")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get("/colocd/test/cluster"); err != nil {
		t.Errorf("get with the credentials: %v", err)
	}
}

// An entry larger than a znode holds (a learned state of many kinds, in
// incompressible numbers) goes out of line, in chunks under blobs/, and
// a follower reads it back whole.
func TestLargeEntry(t *testing.T) {
	e := zktest.Start(t, zktest.Options{Servers: 1})
	a := start(t, testConfig(e, "a"), t.TempDir())
	eventually(t, "a leads", 30*time.Second, a.rep.IsLeader)
	b := start(t, testConfig(e, "b"), t.TempDir())
	rng := rand.New(rand.NewPCG(5, 5))
	st := queue.Learned{Meta: json.RawMessage(`{"v":1}`)}
	for i := range 400 {
		st.Names = append(st.Names, fmt.Sprintf("k%d", i))
		row := queue.LearnedRow{Index: i, Floats: make([]float64, 400)}
		for j := range row.Floats {
			row.Floats[j] = rng.NormFloat64()
		}
		st.Rows = append(st.Rows, row)
	}
	if err := a.store.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: st, Full: true}); err != nil {
		t.Fatal(err)
	}
	c, _, err := zkConn(t, e)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	blobs, _, err := c.Children("/colocd/test/blobs")
	if err != nil || len(blobs) == 0 {
		t.Fatalf("no entry went out of line (blobs %v, %v): the test's entry is too small", blobs, err)
	}
	sameStores(t, a, b)
	got, ok, err := b.store.LoadLearned(queue.SectionPreferences)
	if err != nil || !ok || len(got.Rows) != 400 || got.Rows[399].Floats[399] != st.Rows[399].Floats[399] {
		t.Fatalf("the follower's learned state: %d rows, %v, %v", len(got.Rows), ok, err)
	}
}

// A store that ran alone (without ha) seeds an empty cluster: its history
// is the cluster's first snapshot, which a new replica installs. A second
// store with a history of its own cannot join a cluster that has one.
func TestSeedAndRefuseAnotherHistory(t *testing.T) {
	e := zktest.Start(t, zktest.Options{Servers: 1})
	dir := t.TempDir()
	alone, err := queue.Open(filepath.Join(dir, "queue.db"), queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := submit(t, &node{id: "alone", store: alone}, 5)
	alone.Close()
	a := start(t, testConfig(e, "a"), dir) // the same file, now replicated
	eventually(t, "a leads", 30*time.Second, a.rep.IsLeader)
	b := start(t, testConfig(e, "b"), t.TempDir())
	sameStores(t, a, b)
	for _, id := range ids {
		if _, err := b.store.Get(id); err != nil {
			t.Errorf("job %s of the seed missing on the new replica: %v", id, err)
		}
	}
	submit(t, a, 3)
	sameStores(t, a, b)

	other := t.TempDir()
	s, err := queue.Open(filepath.Join(other, "queue.db"), queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	submit(t, &node{id: "other", store: s}, 1)
	s.Close()
	c := start(t, testConfig(e, "c"), other)
	select {
	case err := <-c.done:
		c.done <- err
		if !errors.Is(err, ha.ErrOtherCluster) {
			t.Errorf("a store with another history: %v, want ErrOtherCluster", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a store with another history joined the cluster")
	}
}

// The fence: the leader may act within its lease (a context with a
// deadline no later than it), a follower may not; a job admitted in an
// earlier epoch gets a new application id only after the grace period.
func TestFence(t *testing.T) {
	e := zktest.Start(t, zktest.Options{Servers: 1})
	a := start(t, testConfig(e, "a"), t.TempDir())
	eventually(t, "a leads", 30*time.Second, a.rep.IsLeader)
	b := start(t, testConfig(e, "b"), t.TempDir())
	ctx, cancel, err := a.rep.Act(context.Background())
	if err != nil {
		t.Fatalf("the leader may not act: %v", err)
	}
	deadline, ok := ctx.Deadline()
	if !ok || time.Until(deadline) > 2*time.Second {
		t.Errorf("the leader's act deadline %v (set %v), want within its session timeout", time.Until(deadline), ok)
	}
	cancel()
	var nl *ha.NotLeaderError
	if _, _, err := b.rep.Act(context.Background()); !errors.As(err, &nl) {
		t.Errorf("a follower may act: %v", err)
	}
	epoch := a.rep.Status(false).Epoch
	if !a.rep.Reassignable(epoch, time.Second) {
		t.Error("a job this term admitted is not reassignable")
	}
	if a.rep.Reassignable(epoch-1, time.Second) {
		t.Error("a job an earlier term admitted is reassignable at once")
	}
	if b.rep.Reassignable(epoch, 0) {
		t.Error("a follower says a job is reassignable")
	}
}

// A follower whose follow of the log ends with an error (here: its store
// closed under it, then an entry to apply) while it campaigns still stops
// when its context ends: the follower's end is seen by both the campaign
// and the session, so one of them taking it must not leave the other
// waiting for it forever (a SIGTERM'd replica once hung so).
func TestFollowerErrorThenStop(t *testing.T) {
	e := zktest.Start(t, zktest.Options{Servers: 1})
	lead := start(t, testConfig(e, "a"), t.TempDir())
	eventually(t, "a leads", 30*time.Second, func() bool { return lead.rep.IsLeader() })
	submit(t, lead, 3)
	dir := t.TempDir()
	store, err := queue.Open(filepath.Join(dir, "queue.db"), queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	f := &node{id: "b", store: store}
	startRepWith(t, f, testConfig(e, "b"), dir, nil)
	eventually(t, "b follows a", 30*time.Second, func() bool { return f.rep.Leader().ID == lead.id })
	sameStores(t, lead, f)
	f.store.Close()
	submit(t, lead, 1) // b's follower fails to apply it, then to read its applied index
	time.Sleep(3 * time.Second)
	f.cancel()
	select {
	case <-f.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the follower's Run did not return within 30 s of its context's end")
	}
}
