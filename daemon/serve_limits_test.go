package daemon

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveForTest runs Serve in-process on the simulator (configs/demo.yaml,
// its tokens demo-submitter and demo-admin) on 127.0.0.1, with the config
// changed by mod, and returns its address once /readyz answers. Serve is
// stopped at cleanup.
func serveForTest(t *testing.T, mod func(*Config)) string {
	t.Helper()
	cfg, err := Load(LoadOptions{File: "../configs/demo.yaml", LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	mod(&cfg)
	return serveLoaded(t, cfg)
}

// serveLoaded is serveForTest on a loaded cfg: the simulator runs queue A,
// with data in t.TempDir().
func serveLoaded(t *testing.T, cfg Config) string {
	t.Helper()
	cfg.DataDir = t.TempDir()
	cfg.Sim.Workload = "../configs/workloads/paper-queue-a.yaml"
	cfg.ShutdownTimeout = 5 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg, ServeOptions{Listener: ln, Logger: slog.New(slog.DiscardHandler)}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return after cancel")
		}
	})
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	addr := ln.Addr().String()
	poll(t, "readyz", 30*time.Second, func() bool {
		select {
		case err := <-done:
			t.Fatalf("Serve returned early: %v", err)
		default:
		}
		res, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return addr
}

// rawConn dials addr; every read and write must finish within deadline.
func rawConn(t *testing.T, addr string, deadline time.Duration) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(deadline)); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// readResponse reads one response and its body from br.
func readResponse(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("reading the response body: %v", err)
	}
	return res, string(b)
}

// requireClosed fails unless the server closed the connection behind br.
func requireClosed(t *testing.T, br *bufio.Reader) {
	t.Helper()
	var ne net.Error
	switch _, err := br.ReadByte(); {
	case err == nil:
		t.Fatal("the server sent more after the response")
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatal("the connection is still open after the response")
	}
}

// TestServeCutsOffSlowBody: a client that sends an announced body one byte
// at a time is answered 408 and cut off once api.read_timeout (1 s here)
// has passed, not held for as long as it keeps trickling.
func TestServeCutsOffSlowBody(t *testing.T) {
	addr := serveForTest(t, func(c *Config) { c.API.ReadTimeout = time.Second })
	c, br := rawConn(t, addr, 20*time.Second)
	if _, err := io.WriteString(c, "POST /v1/jobs HTTP/1.1\r\nHost: colocd\r\nAuthorization: Bearer demo-submitter\r\n"+
		"Content-Type: application/json\r\nContent-Length: 200000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // 10 bytes a second: the whole body would take 5.5 hours
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	})
	defer wg.Wait()
	defer close(stop)
	res, body := readResponse(t, br)
	if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "read timeout") {
		t.Fatalf("got %d %s, want 408 naming the read timeout", res.StatusCode, body)
	}
	requireClosed(t, br)
}

// TestServeUnauthenticatedBigBody: a POST without a token that announces
// 200 kB and sends one byte gets its 401 and its connection closed at once,
// long before api.read_timeout (30 s): the body is never read.
func TestServeUnauthenticatedBigBody(t *testing.T) {
	addr := serveForTest(t, func(*Config) {})
	c, br := rawConn(t, addr, 10*time.Second)
	if _, err := io.WriteString(c, "POST /v1/jobs HTTP/1.1\r\nHost: colocd\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	if res, body := readResponse(t, br); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %d %s, want 401", res.StatusCode, body)
	}
	requireClosed(t, br)
}

// TestServeMaxConnections: with api.max_connections = 8, all taken by
// clients in the middle of a request (a body on its way), a ninth client is
// not served (it waits in the listen backlog) until one of them hangs up;
// then it is. Idle clients cannot keep it out: once all 8 connections are
// open, the idle ones are closed to make room.
func TestServeMaxConnections(t *testing.T) {
	const limit = 8
	addr := serveForTest(t, func(c *Config) { c.API.MaxConnections = limit })
	const get = "GET /healthz HTTP/1.1\r\nHost: colocd\r\n\r\n"

	t.Run("busy clients", func(t *testing.T) {
		busy := make([]net.Conn, limit)
		for i := range busy {
			c, _ := rawConn(t, addr, 30*time.Second)
			if _, err := io.WriteString(c, "POST /v1/jobs HTTP/1.1\r\nHost: colocd\r\nAuthorization: Bearer demo-submitter\r\n"+
				"Content-Type: application/json\r\nContent-Length: 200000\r\n\r\n{"); err != nil {
				t.Fatal(err)
			}
			busy[i] = c
		}
		extra, br := rawConn(t, addr, 30*time.Second)
		if _, err := io.WriteString(extra, get); err != nil {
			t.Fatal(err)
		}
		// While every slot is held the request cannot be served, however
		// long we wait; 300 ms is only how long we look.
		if err := extra.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		var ne net.Error
		if _, err := br.Peek(1); !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("a connection beyond api.max_connections was served (read: %v)", err)
		}
		busy[0].Close()
		if err := extra.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if res, body := readResponse(t, br); res.StatusCode != http.StatusOK {
			t.Fatalf("after a slot freed: %d %s", res.StatusCode, body)
		}
		for _, c := range busy {
			c.Close()
		}
	})

	t.Run("idle clients", func(t *testing.T) {
		type client struct {
			conn net.Conn
			br   *bufio.Reader
		}
		idle := make([]client, limit)
		for i := range idle {
			c, br := rawConn(t, addr, 30*time.Second)
			if _, err := io.WriteString(c, get); err != nil {
				t.Fatal(err)
			}
			if res, _ := readResponse(t, br); res.StatusCode != http.StatusOK {
				t.Fatalf("idle client %d: %d", i, res.StatusCode)
			}
			idle[i] = client{c, br} // served, and now idle (or closed already, if the server was full)
		}
		extra, br := rawConn(t, addr, 30*time.Second)
		if _, err := io.WriteString(extra, get); err != nil {
			t.Fatal(err)
		}
		if res, body := readResponse(t, br); res.StatusCode != http.StatusOK {
			t.Fatalf("beside %d idle clients: %d %s", limit, res.StatusCode, body)
		}
		// Some of them were closed: look until one reads as closed.
		poll(t, "an idle connection closed to make room", 30*time.Second, func() bool {
			for _, c := range idle {
				if err := c.conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
					t.Fatal(err)
				}
				if _, err := c.br.ReadByte(); err != nil && !isTimeout(err) {
					return true
				}
			}
			return false
		})
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
