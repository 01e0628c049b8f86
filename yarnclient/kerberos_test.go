package yarnclient_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/colocd/colocd/yarnclient"
)

// refreshAuth is a Refresher that counts its calls; what is what Refresh
// returns ("": nothing to refresh).
type refreshAuth struct {
	what string

	mu        sync.Mutex
	auths     int
	refreshed []string // the URLs Refresh was given
}

func (a *refreshAuth) Authenticate(req *http.Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.auths++
	req.Header.Set("Authorization", fmt.Sprintf("Negotiate token-%d", a.auths))
	return nil
}

func (a *refreshAuth) Refresh(u *url.URL) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refreshed = append(a.refreshed, u.Path)
	return a.what
}

// negotiateServer answers 401 Negotiate to the first refusals requests
// (-1: all) and then serves metrics; it records each request's
// Authorization header and body.
type negotiateServer struct {
	*httptest.Server
	mu       sync.Mutex
	refusals int
	header   string
	tokens   []string
	bodies   []string
}

func newNegotiateServer(t *testing.T, refusals int, header string) *negotiateServer {
	s := &negotiateServer{refusals: refusals, header: header}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.tokens = append(s.tokens, r.Header.Get("Authorization"))
		s.bodies = append(s.bodies, string(b))
		refuse := s.refusals != 0
		if s.refusals > 0 {
			s.refusals--
		}
		s.mu.Unlock()
		if refuse {
			if s.header != "" {
				w.Header().Set("WWW-Authenticate", s.header)
			}
			http.Error(w, "Unauthorised.", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"clusterMetrics":{"activeNodes":3},"application-id":"application_1_0001"}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *negotiateServer) seen() ([]string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokens...), append([]string(nil), s.bodies...)
}

// TestRefresherRetry: a 401 asking for Negotiate makes the client refresh
// a Refresher's credentials and send the call once more, authenticated
// afresh — writes too, with their body.
func TestRefresherRetry(t *testing.T) {
	srv := newNegotiateServer(t, 1, "Negotiate")
	auth := &refreshAuth{what: "the ticket"}
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User = ""; cfg.Auth = auth }, srv.URL)
	if m, err := c.ClusterMetrics(ctxT(t)); err != nil || m.ActiveNodes != 3 {
		t.Fatalf("ClusterMetrics: %+v, %v", m, err)
	}
	tokens, _ := srv.seen()
	if len(tokens) != 2 || tokens[0] == tokens[1] || len(auth.refreshed) != 1 || auth.refreshed[0] != yarnclient.PathClusterMetrics {
		t.Errorf("tokens %q, refreshed %q: want two different tokens and one refresh of %s", tokens, auth.refreshed, yarnclient.PathClusterMetrics)
	}

	post := newNegotiateServer(t, 1, "Negotiate")
	c2, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User = ""; cfg.Auth = &refreshAuth{what: "the ticket"} }, post.URL)
	sub := yarnclient.SubmissionContext{ApplicationID: "application_1_0001", ApplicationName: "retried"}
	if _, err := c2.SubmitApp(ctxT(t), sub); err != nil {
		t.Fatalf("SubmitApp: %v", err)
	}
	if _, bodies := post.seen(); len(bodies) != 2 || bodies[0] != bodies[1] || !strings.Contains(bodies[1], `"retried"`) {
		t.Errorf("submission bodies %q: want the same body twice", bodies)
	}
}

// TestRefresherRefusedTwice: a second 401 is the call's error, naming what
// the server refused.
func TestRefresherRefusedTwice(t *testing.T) {
	srv := newNegotiateServer(t, -1, "Negotiate")
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User = ""; cfg.Auth = &refreshAuth{what: "the ticket for HTTP/rm1"} }, srv.URL)
	_, err := c.ClusterMetrics(ctxT(t))
	var re *yarnclient.RemoteError
	if !errors.Is(err, yarnclient.ErrUnauthorized) || !errors.As(err, &re) || !strings.Contains(re.Message, "the ticket for HTTP/rm1") {
		t.Fatalf("err = %v, want a 401 naming the ticket", err)
	}
	if tokens, _ := srv.seen(); len(tokens) != 2 {
		t.Errorf("server saw %d requests, want 2", len(tokens))
	}
}

// TestRefresherNoRetry: no second try when the Auth has nothing to
// refresh, when the 401 does not ask for Negotiate, or when the Auth is no
// Refresher.
func TestRefresherNoRetry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		auth   yarnclient.Auth
	}{
		{"nothing to refresh", "Negotiate", &refreshAuth{}},
		{"not Negotiate", `Basic realm="rm"`, &refreshAuth{what: "the ticket"}},
		{"no Refresher", "Negotiate", yarnclient.SimpleAuth{User: "alice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newNegotiateServer(t, 1, tc.header)
			c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User = ""; cfg.Auth = tc.auth }, srv.URL)
			if _, err := c.ClusterMetrics(ctxT(t)); !errors.Is(err, yarnclient.ErrUnauthorized) {
				t.Errorf("err = %v, want ErrUnauthorized", err)
			}
			if tokens, _ := srv.seen(); len(tokens) != 1 {
				t.Errorf("server saw %d requests, want 1", len(tokens))
			}
		})
	}
}
