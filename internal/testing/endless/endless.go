// Package endless is a hostile HTTP server for tests of answer caps: it
// answers every request with a status, a head and then one unit repeated
// until the client goes away, counting the requests and the bytes it
// wrote; and Allocated, the bytes a function allocates.
package endless

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
)

// Server is a running endless server; URL is its address.
type Server struct {
	URL      string
	Requests atomic.Int64
	Written  atomic.Int64
}

// Options shape the answer: Status (0: 200), ContentType, Head written
// first, Unit repeated forever (it must not be empty), and extra Header.
type Options struct {
	Status      int
	ContentType string
	Head, Unit  string
	Header      map[string]string
}

// Start runs a server on 127.0.0.1 until the test ends.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	if o.Unit == "" {
		tb.Fatal("endless: empty unit")
	}
	if o.Status == 0 {
		o.Status = http.StatusOK
	}
	e := &Server{}
	block := bytes.Repeat([]byte(o.Unit), max(1, (32<<10)/len(o.Unit)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.Requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		if o.ContentType != "" {
			w.Header().Set("Content-Type", o.ContentType)
		}
		for k, v := range o.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(o.Status)
		n, err := io.WriteString(w, o.Head)
		e.Written.Add(int64(n))
		for err == nil {
			n, err = w.Write(block)
			e.Written.Add(int64(n))
		}
	}))
	tb.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// Allocated runs f and returns the bytes allocated meanwhile, by every
// goroutine (the server's writes too).
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
