package apiclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/internal/testing/deadaddr"
)

// With a list of servers (the replicas of a replicated colocd), a server
// that refuses the connection is skipped, and the one that answered is
// asked first next time.
func TestServersSkipARefusedOne(t *testing.T) {
	s := apiclienttest.Start(t, apiclienttest.Options{})
	dead := deadaddr.URL(t)
	c := newClient(t, dead+","+s.URL, apiclienttest.SubmitterToken, apiclient.Options{})
	for range 2 {
		rep, err := c.Submit(t.Context(), v1.JobRequest{Kind: "wordcount", Resources: &v1.ResourcesRequest{Containers: 1, MemoryMB: 512, VCores: 1}}, "")
		if err != nil || rep.Status != http.StatusCreated {
			t.Fatalf("submit through %s,%s: %d, %v", dead, s.URL, rep.Status, err)
		}
	}
	if _, err := apiclient.New(s.URL+",ftp://x", "t", apiclient.Options{}); !errors.Is(err, apiclient.ErrBaseURL) {
		t.Errorf("a bad URL in the list: %v, want ErrBaseURL", err)
	}
}

// A server that takes the request and drops the connection: a write
// without an idempotency key is not sent again elsewhere (it may have been
// applied); with a key, or a read, it is.
func TestServersRepeatOnlyWhatIsSafe(t *testing.T) {
	var dropped atomic.Int64
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dropped.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer drop.Close()
	s := apiclienttest.Start(t, apiclienttest.Options{})
	c := newClient(t, drop.URL+","+s.URL, apiclienttest.SubmitterToken, apiclient.Options{})
	req := v1.JobRequest{Kind: "wordcount", Resources: &v1.ResourcesRequest{Containers: 1, MemoryMB: 512, VCores: 1}}
	if _, err := c.Submit(t.Context(), req, ""); err == nil {
		t.Fatal("a submission without a key was sent again after its connection dropped")
	}
	c = newClient(t, drop.URL+","+s.URL, apiclienttest.SubmitterToken, apiclient.Options{})
	if rep, err := c.Submit(t.Context(), req, "key-1"); err != nil || rep.Status != http.StatusCreated {
		t.Fatalf("a submission with a key: %d, %v, want it sent to the next server", rep.Status, err)
	}
	c = newClient(t, drop.URL+","+s.URL, apiclienttest.SubmitterToken, apiclient.Options{})
	if _, err := c.Jobs(t.Context(), apiclient.ListOptions{}); err != nil {
		t.Fatalf("a read: %v, want it sent to the next server", err)
	}
	if dropped.Load() != 3 {
		t.Errorf("the dropping server saw %d requests, want 3", dropped.Load())
	}
}
