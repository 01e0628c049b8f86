package apiclienttest

import (
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// The server's tokens, one per role, and their users.
const (
	ReaderToken    = "test-reader-token"
	SubmitterToken = "test-submitter-token"
	AdminToken     = "test-admin-token"

	ReaderUser    = "rita"
	SubmitterUser = "sam"
	AdminUser     = "ada"
)

// DefaultLimits are the nodes' maxima the server converts profiles with
// unless Options.Limits is set.
var DefaultLimits = goodness.Limits{DiskRead: 200e6, DiskWrite: 100e6, NetRecv: 125e6, NetSent: 125e6}

// Options change the server from its defaults.
type Options struct {
	// MaxBodyBytes caps request bodies (api.Deps.MaxBodyBytes); zero:
	// the API's default.
	MaxBodyBytes int64
	// Limits replace DefaultLimits when any field is set.
	Limits goodness.Limits
	// NoProfiles runs the server without a profile model (GET
	// /v1/profiles is 404).
	NoProfiles bool
	// Now is the clock of the store and the API; nil: the fixed Epoch, so
	// that replies are the same from one request to the next.
	Now func() time.Time
	// Queues serves GET /v1/queues; nil: fairness reported off.
	Queues api.QueueSource
	// Clock serves GET /v1/clock (api.Deps.Clock); nil: the wall clock
	// Now.
	Clock func() v1.Clock
	// Cluster serves GET /v1/nodes and /v1/cluster (api.Deps.Cluster);
	// nil: no view ("available": false).
	Cluster api.ClusterView
	// Kerberos, when set, accepts SPNEGO besides the tokens (api.Deps.Auth
	// both), every Kerberos user a submitter (api.DefaultACLs).
	Kerberos *api.Kerberos
}

// Epoch is the time of the server's default clock.
var Epoch = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// Server is a running API server. Its fields are what it serves from.
type Server struct {
	URL      string // http://127.0.0.1:port
	Store    *queue.Store
	Learner  *bandit.Learner
	Profiles *profile.Model // nil with Options.NoProfiles
	Journal  *journal.Journal
	Limits   goodness.Limits
}

// Start runs a server until the end of t; the cleanup closes it and fails
// t if the store or the journal does not close cleanly.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	dir := t.TempDir()
	now := o.Now
	if now == nil {
		now = func() time.Time { return Epoch }
	}
	store, err := queue.Open(filepath.Join(dir, "q.db"), queue.Options{NoSync: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	jr, err := journal.Open(filepath.Join(dir, "journal"), 100, 1000)
	if err != nil {
		_ = store.Close()
		t.Fatal(err)
	}
	s := &Server{Store: store, Learner: bandit.New(bandit.Config{}), Journal: jr, Limits: o.Limits}
	if s.Limits == (goodness.Limits{}) {
		s.Limits = DefaultLimits
	}
	d := api.Deps{
		Store: store, Learner: s.Learner, Journal: jr, Controller: controller{store, s.Learner},
		Limits: s.Limits, MaxBodyBytes: o.MaxBodyBytes, Now: now, Queues: o.Queues, Clock: o.Clock, Cluster: o.Cluster,
		Tokens: []api.Token{
			{Secret: ReaderToken, User: ReaderUser, Role: api.RoleReader},
			{Secret: SubmitterToken, User: SubmitterUser, Role: api.RoleSubmitter},
			{Secret: AdminToken, User: AdminUser, Role: api.RoleAdmin},
		},
	}
	if o.Kerberos != nil {
		d.Auth, d.Kerberos, d.ACLs = api.AuthBoth, o.Kerberos, api.DefaultACLs()
	}
	if !o.NoProfiles {
		s.Profiles = profile.New(profile.Config{})
		d.Profiles = s.Profiles
	}
	h, err := api.New(d)
	if err != nil {
		_, _ = store.Close(), jr.Close()
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	if srv.Listener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		_, _ = store.Close(), jr.Close()
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		if err := store.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
		if err := jr.Close(); err != nil {
			t.Errorf("closing the journal: %v", err)
		}
	})
	s.URL = srv.URL
	return s
}

// controller is the engine side the API needs: Prepare fills nothing, Kill
// marks the job killed, the preference writes go to the learner.
type controller struct {
	store   *queue.Store
	learner *bandit.Learner
}

var _ api.Controller = controller{}

func (controller) Kick()                       {}
func (controller) Prepare(*queue.Job) error    { return nil }
func (controller) Ready(context.Context) error { return nil }

func (c controller) Kill(_ context.Context, id string) (queue.Job, error) {
	return c.store.Finish(id, queue.StateKilled, "killed")
}

func (c controller) AddKind(kind string)                       { c.learner.Add(kind) }
func (c controller) ImportPreferences(s bandit.Snapshot) error { return c.learner.Restore(s) }
func (c controller) ResetPreferences() error                   { c.learner.Reset(); return nil }

// FixedCluster is a cluster view read once, at At (Options.Cluster).
type FixedCluster struct {
	State cluster.State
	At    time.Time
}

// ClusterView implements api.ClusterView.
func (f FixedCluster) ClusterView() (cluster.State, time.Time, bool) { return f.State, f.At, true }
