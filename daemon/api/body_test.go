package api

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// exchange sends raw on a new connection to the harness, reads one
// response, then reads on until the server closes the connection. Within
// deadline, so that a server that waits for the rest of an announced body
// fails the test instead of hanging it; the harness server has no read
// timeout, so only the API's own handling can close such a connection.
func exchange(t *testing.T, h *harness, raw string) (res *http.Response, body []byte, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", h.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const deadline = 10 * time.Second
	if err := c.SetDeadline(time.Now().Add(deadline)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	res, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response within %v: %v", deadline, err)
	}
	body, err = io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("reading the response body: %v", err)
	}
	var ne net.Error
	switch _, err := br.ReadByte(); {
	case err == nil:
		t.Fatalf("the server sent more after the response")
	case errors.As(err, &ne) && ne.Timeout():
		closed = false
	default: // EOF, or a reset: closed either way
		closed = true
	}
	return res, body, closed
}

// TestUnreadBodyIsNotDrained: a request announcing a 200 kB body and
// sending one byte gets its answer at once and its connection closed; the
// server never waits for the rest of the body (net/http would, to reuse the
// connection, with no deadline here).
func TestUnreadBodyIsNotDrained(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, method, path, headers string
		want                        int
	}{
		{"no token", "POST", "/v1/jobs", "Content-Type: application/json\r\n", 401},
		{"bad token", "POST", "/v1/jobs", "Authorization: Bearer nope\r\nContent-Type: application/json\r\n", 401},
		{"reader may not submit", "POST", "/v1/jobs", "Authorization: Bearer " + readerTok + "\r\nContent-Type: application/json\r\n", 403},
		{"wrong content type", "POST", "/v1/jobs", "Authorization: Bearer " + submitterTok + "\r\nContent-Type: text/plain\r\n", 415},
		{"method not allowed", "PATCH", "/v1/jobs", "Authorization: Bearer " + submitterTok + "\r\n", 405},
		{"endpoint takes no body", "GET", "/healthz", "", 200},
		{"expect 100-continue", "POST", "/v1/jobs", "Content-Type: application/json\r\nExpect: 100-continue\r\n", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: colocd\r\n%sContent-Length: 200000\r\n\r\n{", tc.method, tc.path, tc.headers)
			res, body, closed := exchange(t, h, raw)
			if res.StatusCode != tc.want {
				t.Fatalf("got %d, want %d: %s", res.StatusCode, tc.want, body)
			}
			if !res.Close {
				t.Errorf("response does not say Connection: close")
			}
			if !closed {
				t.Errorf("connection still open after the response: the server is reading the rest of the body")
			}
		})
	}
	t.Run("a read body keeps the connection", func(t *testing.T) {
		body := jobBody("kmeans")
		raw := fmt.Sprintf("POST /v1/jobs HTTP/1.1\r\nHost: colocd\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			submitterTok, len(body), body)
		c, err := net.Dial("tcp", h.srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for i := range 2 { // twice on one connection
			if _, err := io.WriteString(c, raw); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 201 || res.Close {
				t.Fatalf("request %d: %d, close %v", i, res.StatusCode, res.Close)
			}
		}
	})
}
