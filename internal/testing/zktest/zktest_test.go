package zktest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/internal/testing/zktest"
)

// A quorum of three serves, survives the loss of its leader, and answers
// the client again with a majority.
func TestQuorum(t *testing.T) {
	e := zktest.Start(t, zktest.Options{})
	c, _, err := zk.Connect(e.Addrs(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create("/a", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var leader *zktest.Server
	for _, s := range e.Servers() {
		if s.Mode() == "leader" {
			leader = s
		}
	}
	if leader == nil {
		t.Fatal("no server leads")
	}
	leader.Kill()
	if err := e.WaitServing(); err != nil {
		t.Fatal(err)
	}
	got, _, err := c.Get("/a")
	if err != nil || string(got) != "1" {
		t.Fatalf("get /a after the leader died: %q, %v", got, err)
	}
	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := zktest.FourLetter(leader.ClientAddr, "ruok"); err != nil && !strings.Contains(out, "imok") {
		t.Logf("restarted server: %q, %v", out, err)
	}
}
