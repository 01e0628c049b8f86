package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeSystemd: under a service manager (NOTIFY_SOCKET), `colocd serve`
// notifies it, ending with STOPPING=1; a malformed WATCHDOG_USEC is a
// runtime error naming it. daemon's TestServeNotifiesSystemd covers the
// messages themselves.
func TestServeSystemd(t *testing.T) {
	isolate(t)
	t.Run("notifies", func(t *testing.T) {
		serveEnv(t)
		path := filepath.Join(t.TempDir(), "notify")
		conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		t.Setenv("NOTIFY_SOCKET", path)
		t.Setenv("WATCHDOG_USEC", "")
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // start, stop at once
		if code, stderr := runServe(ctx, "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0"); code != exitOK {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		// serve has returned: everything it sent is queued.
		if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		var got []string
		for len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "STOPPING=1\n") {
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("datagrams %q, then %v; want STOPPING=1", got, err)
			}
			got = append(got, string(buf[:n]))
		}
	})
	t.Run("bad watchdog", func(t *testing.T) {
		serveEnv(t)
		t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "notify"))
		t.Setenv("WATCHDOG_USEC", "soon")
		code, stderr := runServe(context.Background(), "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0")
		if code != exitRuntime || !strings.Contains(stderr, "WATCHDOG_USEC") {
			t.Errorf("exit %d, stderr %q; want %d naming WATCHDOG_USEC", code, stderr, exitRuntime)
		}
	})
}
