package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestShutdownClosesFreshConns: a connection on which no request began
// does not hold a shutdown up (http.Server.Shutdown alone waits for it
// until it is 5 s old), while a request in flight is still waited for and
// answered.
func TestShutdownClosesFreshConns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	fresh := newFreshConns()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-release
			io.WriteString(w, "done")
		}),
		ConnState: fresh.track,
	}
	go srv.Serve(ln)

	idle, err := net.Dial("tcp", ln.Addr().String()) // connects, sends nothing
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answer <- string(b)
	}()
	<-started
	// Shutdown's budget is shorter than the 5 s it would wait for the idle
	// connection: without closing it, the shutdown ends in its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- shutdownHTTP(ctx, srv, fresh) }()
	time.Sleep(100 * time.Millisecond) // the shutdown waits for the request in flight
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v (a connection that sent no request held it up)", err)
	}
	if got := <-answer; got != "done" {
		t.Errorf("the request in flight got %q, want its answer", got)
	}
	idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Error("the connection that sent no request is still open")
	}
}
