package yarnclient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/endless"
	"github.com/colocd/colocd/yarnclient"
)

func newEndless(t *testing.T, status int, head, unit string, header map[string]string) *endless.Server {
	t.Helper()
	return endless.Start(t, endless.Options{Status: status, ContentType: "application/json", Head: head, Unit: unit, Header: header})
}

// TestEndlessAnswers: an RM, NodeManager, NameNode or Timeline Server
// that never stops answering costs a bounded amount of memory: a
// successful answer over MaxAnswerBytes fails the call with ErrTooLarge
// (not retried), an error answer is read to its first 64 KiB and the
// error says the rest was not read; the status still decides what the
// error means.
func TestEndlessAnswers(t *testing.T) {
	const capBytes = 1 << 20
	ctx := context.Background()
	for name, tc := range map[string]struct {
		status   int
		head     string
		unit     string
		header   map[string]string
		call     func(c *yarnclient.Client, url string) error
		want     error
		text     string
		requests int64
	}{
		"RM answer": {status: 200, head: `{"clusterMetrics":{"appsSubmitted":1,"x":"`, unit: "x",
			call: func(c *yarnclient.Client, _ string) error { _, err := c.ClusterMetrics(ctx); return err },
			want: yarnclient.ErrTooLarge, text: "the 200 answer is over 1048576 bytes (MaxAnswerBytes, yarn.max_answer_bytes)", requests: 1},
		"RM answer declared over the cap": {status: 200, head: `{"apps":`, unit: " ", header: map[string]string{"Content-Length": "2000000"},
			call: func(c *yarnclient.Client, _ string) error { _, err := c.Apps(ctx, yarnclient.AppsFilter{}); return err },
			want: yarnclient.ErrTooLarge, text: "declared Content-Length 2000000", requests: 1},
		"RM RemoteException": {status: 500, head: `{"RemoteException":{"exception":"WebApplicationException","message":"`, unit: "x",
			call: func(c *yarnclient.Client, _ string) error { _, err := c.App(ctx, "application_1_0001"); return err },
			want: yarnclient.ErrUnavailable, text: "the error answer was longer than 65536 bytes", requests: 4}, // retried: a 500
		"RM submission answer": {status: 202, head: "", unit: " ",
			call: func(c *yarnclient.Client, _ string) error {
				_, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: "application_1_0001"})
				return err
			},
			want: yarnclient.ErrTooLarge, text: "the 202 answer is over", requests: 1},
		"NodeManager answer": {status: 200, head: `{"containers":{"container":[`, unit: `{"id":"container_1_0001_01_000001"},`,
			call: func(c *yarnclient.Client, url string) error { _, err := c.NodeContainers(ctx, url); return err },
			want: yarnclient.ErrTooLarge, text: "the 200 answer is over", requests: 1},
		"NameNode answer": {status: 200, head: `{"Token":{"urlString":"`, unit: "A",
			call: func(c *yarnclient.Client, url string) error {
				_, err := c.HDFSDelegationToken(ctx, yarnclient.HDFSTokenRequest{NameNodes: []string{url}, Renewer: "yarn"})
				return err
			},
			want: yarnclient.ErrTooLarge, text: "the 200 answer is over", requests: 1},
		"Timeline Server answer": {status: 200, head: `{"appId":"`, unit: "x",
			call: func(c *yarnclient.Client, _ string) error {
				_, err := c.HistoryApp(ctx, "application_1_0001")
				return err
			},
			want: yarnclient.ErrTooLarge, text: "the 200 answer is over", requests: 1},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEndless(t, tc.status, tc.head, tc.unit, tc.header)
			c, err := yarnclient.New(yarnclient.Config{RMURLs: []string{e.URL}, TimelineURL: e.URL, User: "colocd",
				MaxAnswerBytes: capBytes, Timeout: 5 * time.Second, Sleep: func(time.Duration) {}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)
			var got error
			alloc := endless.Allocated(func() { got = tc.call(c, e.URL) })
			if !errors.Is(got, tc.want) || !strings.Contains(got.Error(), tc.text) {
				t.Errorf("err = %v, want %v naming %q", got, tc.want, tc.text)
			}
			if n := e.Requests.Load(); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			// A 1 MiB cap, read whole (io.ReadAll doubles its buffer),
			// 4 tries of a retried call; and what the sockets buffered.
			t.Logf("%d bytes out, %d allocated", e.Written.Load(), alloc)
			if n := e.Written.Load(); n > 64<<20 {
				t.Errorf("the server got %d bytes out before the client stopped", n)
			}
			if alloc > 32<<20 {
				t.Errorf("%d bytes allocated, want at most 32 MiB", alloc)
			}
		})
	}
}

// TestTrickledAnswer: an answer whose bytes trickle in forever is cut at
// the client's Timeout, which covers reading the body.
func TestTrickledAnswer(t *testing.T) {
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"clusterMetrics":{`)
		tick := time.NewTicker(20 * time.Millisecond) // the server's pace, not the test's
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				if _, err := io.WriteString(w, " "); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				written.Add(1)
			}
		}
	}))
	t.Cleanup(srv.Close)
	c, err := yarnclient.New(yarnclient.Config{RMURLs: []string{srv.URL}, User: "colocd", Timeout: time.Second, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	_, err = c.ClusterMetrics(context.Background())
	var ne interface{ Timeout() bool }
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("err = %v, want a timeout", err)
	}
	if written.Load() == 0 {
		t.Error("the server trickled nothing: the test did not test a slow answer")
	}
}

func TestMaxAnswerBytesValidate(t *testing.T) {
	if _, err := yarnclient.New(yarnclient.Config{RMURLs: []string{"http://rm:8088"}, MaxAnswerBytes: -1}); !errors.Is(err, yarnclient.ErrInvalid) {
		t.Errorf("MaxAnswerBytes -1: %v, want ErrInvalid", err)
	}
}
