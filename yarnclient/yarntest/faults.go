package yarntest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
)

// Fault is a failure the FakeRM injects into the requests of one path.
// Settings combine in this order: Block, then ResetAfter, Reset, Status,
// Malformed (the first set one acts); a Fault with only Block delays the normal answer.
type Fault struct {
	// Method restricts the fault to one HTTP method; "" matches any.
	Method string
	// Block holds each matching request until the channel is closed (or the
	// client goes away, or the fake closes): a slow RM without sleeps.
	Block <-chan struct{}
	// Arrived, when set, receives (without blocking) as each matching
	// request reaches the fault, so a test can wait for it.
	Arrived chan<- struct{}
	// Reset closes the connection without answering (a TCP reset).
	Reset bool
	// ResetAfter serves the request normally (a submission is recorded, a
	// kill happens) and then resets the connection instead of answering: the
	// RM acted but the client never heard back.
	ResetAfter bool
	// Status answers with this status and a RemoteException body (Body, when
	// set, replaces it verbatim, e.g. an HTML error page).
	Status int
	Body   string
	// Malformed answers 200 with a truncated JSON body.
	Malformed bool
	// Times is how many matching requests the fault affects; 0 means all.
	Times int
}

type faultState struct {
	Fault
	used int
}

// InjectFault adds a fault for requests to path (without query, e.g.
// "/ws/v1/cluster/apps"). Faults of one path apply in the order added; a used
// up one gives way to the next.
func (f *FakeRM) InjectFault(path string, ft Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[path] = append(f.faults[path], &faultState{Fault: ft})
}

// ClearFaults removes every fault.
func (f *FakeRM) ClearFaults() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = map[string][]*faultState{}
}

// takeFault returns the fault for r and counts its use. f.mu is held.
func (f *FakeRM) takeFault(r *http.Request) *Fault {
	for _, fs := range f.faults[r.URL.Path] {
		if fs.Method != "" && fs.Method != r.Method {
			continue
		}
		if fs.Times > 0 && fs.used >= fs.Times {
			continue
		}
		fs.used++
		ft := fs.Fault
		return &ft
	}
	return nil
}

// applyFault acts out ft; it reports whether the request was answered.
func (f *FakeRM) applyFault(w http.ResponseWriter, r *http.Request, ft *Fault) bool {
	if ft.Arrived != nil {
		select {
		case ft.Arrived <- struct{}{}:
		default:
		}
	}
	if ft.Block != nil {
		select {
		case <-ft.Block:
		case <-r.Context().Done():
			return true
		case <-f.closing:
			return true
		}
	}
	switch {
	case ft.ResetAfter:
		f.answer(httptest.NewRecorder(), r)
		resetConn(w)
		return true
	case ft.Reset:
		resetConn(w)
		return true
	case ft.Status != 0:
		if ft.Body != "" {
			w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
			w.WriteHeader(ft.Status)
			fmt.Fprint(w, ft.Body)
			return true
		}
		exc := map[int]string{500: "WebApplicationException", 503: "ServiceUnavailableException"}[ft.Status]
		if exc == "" {
			exc = "WebApplicationException"
		}
		f.remoteException(w, ft.Status, exc, "javax.ws.rs."+exc, fmt.Sprintf("injected fault %d", ft.Status))
		return true
	case ft.Malformed:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apps":{"app":[{"id":"application_1700000000000_0001","state":"RUN`)
		return true
	}
	return false
}

// resetConn hijacks the connection and closes it with SO_LINGER 0, which
// sends a TCP RST.
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
