package ha

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/internal/testing/zktest"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// A leader that takes over finds a hole in the log — an old leader's
// pipelined append that never landed while a later one did — writes a
// no-op there and applies what comes after it.
func TestTakeOverFillsHoles(t *testing.T) {
	e := zktest.Start(t, zktest.Options{Servers: 1})
	cfg := Config{Connect: e.Addrs(), Root: "/colocd/test", SessionTimeout: 2 * time.Second, ID: "b",
		Advertise: "http://b.test:8080"}
	zc, _, err := zk.Connect(e.Addrs(), 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	p := paths{cfg.Root}
	for _, path := range []string{"/colocd", cfg.Root, p.log(), p.epoch()} {
		zc.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
	}
	// Entries 1 and 3 of an old leader; 2 never landed.
	j1, j3 := queuetest.Job("a"), queuetest.Job("a")
	j1.ID, j3.ID = "01JBZ7V7Y5000000000000000A", "01JBZ7V7Y5000000000000000C"
	for i, j := range map[uint64]queue.Job{1: j1, 3: j3} {
		data, _, err := encodeEntry(queue.Entry{Index: i, Epoch: 1, Commands: []queue.Command{queue.CmdSubmit{At: queuetest.Start, Jobs: []queue.Job{j}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zc.Create(p.entry(i), data, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	store, err := queue.Open(filepath.Join(t.TempDir(), "queue.db"), queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r, err := New(store, cfg, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	store.SetLog(r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for !r.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, _ := store.Applied(); n != 3 {
		t.Errorf("applied %d after taking over, want 3", n)
	}
	for _, id := range []string{j1.ID, j3.ID} {
		if _, err := store.Get(id); err != nil {
			t.Errorf("job %s: %v", id, err)
		}
	}
	data, _, err := zc.Get(p.entry(2))
	if err != nil {
		t.Fatalf("the hole: %v", err)
	}
	hole, err := decodeEntry(data, nil)
	if err != nil || hole.Index != 2 || len(hole.Commands) != 0 || hole.Epoch != r.Status(false).Epoch {
		t.Errorf("the hole holds %+v (%v), want a no-op of this term", hole, err)
	}
	if _, _, err := store.Submit(context.Background(), queuetest.Job("b")); err != nil {
		t.Fatalf("a submission after the take-over: %v", err)
	}
	if _, _, err := zc.Get(fmt.Sprintf("%s/%020d", p.log(), 4)); err != nil {
		t.Errorf("the next submission is not entry 4: %v", err)
	}
}
