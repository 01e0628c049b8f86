package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/engine"
)

// notifySocket is a fake service manager: a unixgram socket in a temporary
// directory, whose datagrams arrive on msgs in order.
type notifySocket struct {
	path string
	conn *net.UnixConn
	msgs chan string
}

// listenNotify binds the fake service manager; it is closed at cleanup.
func listenNotify(tb testing.TB) *notifySocket {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		tb.Fatal(err)
	}
	s := &notifySocket{path: path, conn: conn, msgs: make(chan string, 4096)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			s.msgs <- string(buf[:n])
		}
	}()
	tb.Cleanup(func() {
		conn.Close()
		<-done
	})
	return s
}

// next returns the next datagram, failing after deadline.
func (s *notifySocket) next(tb testing.TB, what string, deadline time.Duration) string {
	tb.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-time.After(deadline):
		tb.Fatalf("no sd_notify datagram within %v waiting for %s", deadline, what)
		return ""
	}
}

// has reports whether datagram msg carries the assignment kv (one per line).
func has(msg, kv string) bool {
	for l := range strings.SplitSeq(msg, "\n") {
		if l == kv {
			return true
		}
	}
	return false
}

// TestNotifyTransition: READY=1 once, with the first reading whatever it
// says (the API serves: an RM down at boot must not hold start-up);
// STATUS= only when the reading changes, naming the public reason.
func TestNotifyTransition(t *testing.T) {
	stalled := fmt.Errorf("%w: no loop iteration completed for 2m0s (the bound is 1m0s)", engine.ErrStalled)
	syncing := fmt.Errorf("%w: the last sync failed: rm1.example.org:8088: connection refused", engine.ErrClusterSync)
	starting := fmt.Errorf("%w: %w: not reconciled with the cluster yet", engine.ErrStarting, engine.ErrNotReady)
	type step struct {
		err  error
		deg  string // the degraded dependencies
		want string // the message; "" none
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"start then ready", []step{
			{starting, "", "READY=1\nSTATUS=starting: serving on 127.0.0.1:8080; reconciling with the cluster"},
			{starting, "", ""},
			{nil, "", "STATUS=ready: serving on 127.0.0.1:8080"},
			{nil, "", ""},
		}},
		{"degraded and back", []step{
			{nil, "", "READY=1\nSTATUS=ready: serving on 127.0.0.1:8080"},
			{syncing, "", "STATUS=degraded: serving on 127.0.0.1:8080; cannot sync with the cluster"},
			{syncing, "", ""},
			{stalled, "", "STATUS=degraded: serving on 127.0.0.1:8080; admission loop stalled"},
			{nil, "", "STATUS=ready: serving on 127.0.0.1:8080"},
		}},
		{"metrics store down: ready, degraded", []step{
			{nil, "", "READY=1\nSTATUS=ready: serving on 127.0.0.1:8080"},
			{nil, "metrics since 2026-11-28 10:00:00 UTC", "STATUS=ready: serving on 127.0.0.1:8080; degraded: metrics since 2026-11-28 10:00:00 UTC"},
			{nil, "metrics since 2026-11-28 10:00:00 UTC", ""},
			{nil, "", "STATUS=ready: serving on 127.0.0.1:8080"},
		}},
		{"RM down at boot", []step{
			{syncing, "", "READY=1\nSTATUS=starting: serving on 127.0.0.1:8080; cannot sync with the cluster"},
			{errors.New("something else"), "", "STATUS=starting: serving on 127.0.0.1:8080; not ready"},
			{nil, "", "STATUS=ready: serving on 127.0.0.1:8080"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st notifyState
			var got, want []string
			for _, s := range tc.steps {
				var msg string
				st, msg = notifyTransition(st, s.err, s.deg, "127.0.0.1:8080")
				got, want = append(got, msg), append(want, s.want)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("messages (-want,+got):\n%s", d)
			}
			if strings.Contains(strings.Join(got, "\n"), "rm1.example.org") {
				t.Errorf("a STATUS= line names the RM host: %q", got)
			}
		})
	}
}

// TestNotifyWatchdogOK: only a stalled loop withholds the watchdog ping.
func TestNotifyWatchdogOK(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, true},
		{fmt.Errorf("%w: %w: not reconciled", engine.ErrStarting, engine.ErrNotReady), true},
		{fmt.Errorf("%w: boom", engine.ErrClusterSync), true},
		{fmt.Errorf("%w: disk full", engine.ErrStoreWrites), true},
		{fmt.Errorf("%w: closed", engine.ErrStoreUnavailable), true},
		{fmt.Errorf("%w: no loop iteration completed for 2m0s", engine.ErrStalled), false},
	} {
		if got := watchdogOK(tc.err); got != tc.want {
			t.Errorf("watchdogOK(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestNotifyWatchdogStalled drives watch with a scripted readiness: ready,
// then a stalled loop, then moving again. Every reading and message is
// recorded in the order watch made them: no WATCHDOG=1 follows a stalled
// reading, and the pings resume with the loop.
func TestNotifyWatchdogStalled(t *testing.T) {
	stalled := fmt.Errorf("%w: no loop iteration completed for 2m0s", engine.ErrStalled)
	var (
		mu     sync.Mutex
		events []string
		reads  int
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const last = 12
	ready := func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		reads++
		var err error
		if reads >= 4 && reads <= 9 {
			err = stalled
		}
		if reads <= last {
			events = append(events, fmt.Sprintf("read %v", err != nil))
		}
		if reads == last {
			cancel()
		}
		return err
	}
	s := &systemd{
		send: func(msg string) error {
			mu.Lock()
			defer mu.Unlock()
			if reads <= last {
				events = append(events, msg)
			}
			return nil
		},
		// The pings alone drive the readings after the first.
		watchdog: 20 * time.Millisecond, startPoll: time.Hour, poll: time.Hour,
	}
	done := make(chan struct{})
	go func() { defer close(done); s.watch(ctx, ready, nil, "127.0.0.1:8080", slog.New(slog.DiscardHandler)) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not return after the scripted readings")
	}
	const (
		readyMsg = "READY=1\nSTATUS=ready: serving on 127.0.0.1:8080"
		ping     = "WATCHDOG=1"
		ok, bad  = "read false", "read true"
	)
	want := []string{
		ok, readyMsg, // the first reading, at once
		ok, ping, ok, ping,
		bad, "STATUS=degraded: serving on 127.0.0.1:8080; admission loop stalled",
		bad, bad, bad, bad, bad, // no pings: systemd restarts the daemon
		ok, "STATUS=ready: serving on 127.0.0.1:8080", ping,
		ok, ping, ok, ping,
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("readings and messages (-want,+got):\n%s", d)
	}
}

// TestSystemdFromEnv: nothing without NOTIFY_SOCKET; the watchdog only for
// this process; a malformed WATCHDOG_USEC is an error.
func TestSystemdFromEnv(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		name              string
		socket, usec, pid string
		wantNil, wantErr  bool
		wantWatchdog      time.Duration
	}{
		{name: "no socket", usec: "200000", wantNil: true},
		{name: "no watchdog", socket: "/run/notify"},
		{name: "watchdog", socket: "/run/notify", usec: "200000", wantWatchdog: 200 * time.Millisecond},
		{name: "watchdog for this pid", socket: "@notify", usec: "60000000", pid: self, wantWatchdog: time.Minute},
		{name: "watchdog for another pid", socket: "/run/notify", usec: "200000", pid: "1"},
		{name: "bad usec", socket: "/run/notify", usec: "200ms", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NOTIFY_SOCKET", tc.socket)
			t.Setenv("WATCHDOG_USEC", tc.usec)
			t.Setenv("WATCHDOG_PID", tc.pid)
			s, err := SystemdFromEnv()
			switch {
			case tc.wantErr:
				if err == nil || !strings.Contains(err.Error(), "WATCHDOG_USEC") {
					t.Fatalf("err = %v, want one naming WATCHDOG_USEC", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.wantNil:
				if s != nil {
					t.Fatalf("SystemdFromEnv = %+v, want nil", s)
				}
				// A nil notifier sends nothing and returns at once.
				s.watch(context.Background(), func(context.Context) error { return nil }, nil, "", slog.New(slog.DiscardHandler))
				s.stopping(slog.New(slog.DiscardHandler))
				return
			}
			if s.watchdog != tc.wantWatchdog {
				t.Errorf("watchdog = %v, want %v", s.watchdog, tc.wantWatchdog)
			}
		})
	}
}

// TestServeNotifiesSystemd runs Serve on the simulator under a fake service
// manager with a 200 ms watchdog: READY=1 comes once the API answers
// /healthz, STATUS=ready when /readyz does, WATCHDOG=1 repeatedly while
// the loop moves, STOPPING=1 at shutdown and nothing after it.
func TestServeNotifiesSystemd(t *testing.T) {
	sock := listenNotify(t)
	t.Setenv("NOTIFY_SOCKET", sock.path)
	t.Setenv("WATCHDOG_USEC", "200000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	systemd, err := SystemdFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{File: "../configs/demo.yaml", LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Sim.Workload = "../configs/workloads/paper-queue-a.yaml"
	cfg.ShutdownTimeout = 5 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, cfg, ServeOptions{Listener: ln, Systemd: systemd, Logger: slog.New(slog.DiscardHandler)})
	}()

	// READY=1 first, with the API served; then STATUS= up to ready.
	msg := sock.next(t, "READY=1", 30*time.Second)
	if !has(msg, "READY=1") {
		t.Fatalf("first datagram %q: want READY=1", msg)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if res, err := client.Get("http://" + addr + "/healthz"); err != nil {
		t.Fatalf("GET /healthz after READY=1: %v", err)
	} else {
		res.Body.Close()
	}
	for ; !has(msg, "STATUS=ready: serving on "+addr); msg = sock.next(t, "STATUS=ready", 30*time.Second) {
		if !strings.HasPrefix(msg, "READY=1\nSTATUS=starting: ") && !strings.HasPrefix(msg, "STATUS=starting: ") && msg != "WATCHDOG=1" {
			t.Fatalf("before STATUS=ready: %q", msg)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		res, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s after STATUS=ready: %v", path, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s after STATUS=ready: %d, want 200", path, res.StatusCode)
		}
	}

	// The watchdog, every 100 ms.
	for pings := 0; pings < 3; {
		switch msg := sock.next(t, "WATCHDOG=1", 10*time.Second); {
		case msg == "WATCHDOG=1":
			pings++
		case strings.HasPrefix(msg, "STATUS="):
		default:
			t.Fatalf("while serving: %q", msg)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	for msg = sock.next(t, "STOPPING=1", 5*time.Second); !has(msg, "STOPPING=1"); msg = sock.next(t, "STOPPING=1", 5*time.Second) {
		if has(msg, "READY=1") {
			t.Fatalf("a second READY=1: %q", msg)
		}
	}
	if !strings.Contains(msg, "STATUS=stopping") {
		t.Errorf("STOPPING=1 datagram %q: want a STATUS=stopping line", msg)
	}
	// Serve has returned: whatever it sent is queued before this marker.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("END")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if msg := sock.next(t, "the END marker", 5*time.Second); msg != "END" {
		t.Errorf("after STOPPING=1: %q, want nothing", msg)
	}
}
