package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/ha"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/telemetry"
)

// haConfig runs colocd as one of several replicas on the cluster's
// ZooKeeper (package ha): one leads and admits, the others keep warm
// copies of its store and take over when it fails. With no
// zookeeper.connect, colocd runs alone on its own disk.
type haConfig struct {
	// ID names this replica among the others; "" is the host name.
	ID string `mapstructure:"id"`
	// AdvertiseURL is where clients and the other replicas reach this
	// replica's API (followers forward writes to the leader's); "" is
	// http(s)://<host name>:<listen port>.
	AdvertiseURL string          `mapstructure:"advertise_url"`
	ZooKeeper    zooKeeperConfig `mapstructure:"zookeeper"`
	// SnapshotEvery and KeepEntries size the log in ZooKeeper (ha.Config).
	SnapshotEvery uint64 `mapstructure:"snapshot_every"`
	KeepEntries   uint64 `mapstructure:"keep_entries"`
	// ForwardKeyFile holds the key (at least 32 bytes) the replicas share
	// to sign the identity a follower authenticated when it forwards a
	// request to the leader; the same file on every replica, readable by
	// colocd only. Needed with api.auth kerberos or both, or client
	// certificates; without it a follower passes a bearer token on as is.
	ForwardKeyFile string `mapstructure:"forward_key_file"`
}

// zooKeeperConfig is the ensemble and where colocd keeps its znodes, in
// the shapes of Hadoop's hadoop.zk.* keys.
type zooKeeperConfig struct {
	// Connect is host:port,host:port,... (hadoop.zk.address).
	Connect string `mapstructure:"connect"`
	// Root is this colocd cluster's znode (a chroot per colocd cluster).
	Root string `mapstructure:"root"`
	// SessionTimeout: a leader silent for longer loses its leadership.
	SessionTimeout time.Duration `mapstructure:"session_timeout"`
	// Auth is hadoop.zk.auth's shape: "digest:user:password", or
	// "@/path/to/file" holding that line; "" for none. With it every znode
	// colocd creates carries a digest ACL for that identity only.
	Auth string `mapstructure:"auth"`
}

// Enabled reports whether colocd runs replicated.
func (c haConfig) Enabled() bool { return c.ZooKeeper.Connect != "" }

func defaultHA() haConfig {
	return haConfig{ZooKeeper: zooKeeperConfig{Root: ha.DefaultRoot, SessionTimeout: ha.DefaultSessionTimeout},
		SnapshotEvery: ha.DefaultSnapshotEvery, KeepEntries: ha.DefaultKeepEntries}
}

// haConfig is the replica's configuration, with its defaults resolved.
func (c Config) haConfig() (ha.Config, error) {
	h := c.HA
	out := ha.Config{Root: h.ZooKeeper.Root, SessionTimeout: h.ZooKeeper.SessionTimeout, ID: h.ID,
		Advertise: h.AdvertiseURL, SnapshotEvery: h.SnapshotEvery, KeepEntries: h.KeepEntries}
	for _, s := range strings.Split(h.ZooKeeper.Connect, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out.Connect = append(out.Connect, s)
		}
	}
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	if out.ID == "" {
		out.ID = host
	}
	if out.Advertise == "" {
		scheme := "http"
		if c.TLS.CertFile != "" {
			scheme = "https"
		}
		_, port, _ := net.SplitHostPort(c.Listen)
		out.Advertise = scheme + "://" + net.JoinHostPort(host, port)
	}
	auth, err := parseZKAuth(h.ZooKeeper.Auth)
	if err != nil {
		return out, err
	}
	out.Auth = auth
	return out, nil
}

// parseZKAuth reads hadoop.zk.auth's shape.
func parseZKAuth(s string) (*ha.Auth, error) {
	const key = "ha.zookeeper.auth"
	if s == "" {
		return nil, nil
	}
	if file, ok := strings.CutPrefix(s, "@"); ok {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, cfgErr(key, "read %s: %v", file, err)
		}
		s = strings.TrimSpace(string(b))
	}
	scheme, rest, _ := strings.Cut(s, ":")
	user, password, ok := strings.Cut(rest, ":")
	if scheme != "digest" || !ok || user == "" || password == "" {
		return nil, cfgErr(key, "must be digest:user:password or @/path/to/a/file holding it")
	}
	return &ha.Auth{User: user, Password: password}, nil
}

// validateHA checks the ha section: only the yarn backend with REST
// submission runs replicated (the simulator's state is one replica's;
// the RM deduplicates submissions by application id only, which a
// command's submission does not carry).
func (c Config) validateHA() error {
	if !c.HA.Enabled() {
		return nil
	}
	if c.Backend != backendYarn {
		return cfgErr("ha.zookeeper.connect", "replicas need backend yarn: the simulator's cluster lives in one replica's data_dir")
	}
	if c.Yarn.Submit != yarncluster.SubmitREST {
		return cfgErr("yarn.submit", "must be rest with ha: the RM deduplicates submissions by application id, which only REST submission carries, so a replica taking over could run a command-submitted job twice")
	}
	hc, err := c.haConfig()
	if err != nil {
		return err
	}
	if err := hc.Validate(); err != nil {
		var field string
		if _, rest, ok := strings.Cut(err.Error(), ha.ErrConfig.Error()+": "); ok {
			field, _, _ = strings.Cut(rest, ":")
		}
		return cfgErr("ha."+haKey(field), "%v", err)
	}
	return nil
}

// haKey is the config key of an ha.Config field named in its error.
func haKey(field string) string {
	switch field {
	case "connect", "root", "session_timeout", "auth":
		return "zookeeper." + field
	case "":
		return "zookeeper.connect"
	}
	return field
}

// replication is the replica as the daemon uses it: the store's log, the
// engine's fence, the API's view, and the terms in which the loop runs.
type replication struct {
	rep    *ha.Replica
	id     string
	submit time.Duration // yarn.timeout: how long an old leader's submit can take
	prom   atomic.Pointer[telemetry.Metrics]
}

// openReplica builds the replica and makes it the store's log; nothing
// connects until run.
func openReplica(cfg Config, store *queue.Store, log *slog.Logger) (*replication, error) {
	hc, err := cfg.haConfig()
	if err != nil {
		return nil, err
	}
	r := &replication{id: hc.ID, submit: cfg.Yarn.Timeout}
	onEvent := func(ev ha.Event) {
		if ev == ha.EventElected {
			r.prom.Load().HAFailover()
		}
	}
	if r.rep, err = ha.New(store, hc, ha.Options{Logger: log.With("component", "ha"), Dir: cfg.DataDir, OnEvent: onEvent}); err != nil {
		return nil, err
	}
	store.SetLog(r.rep)
	return r, nil
}

// watch registers the replication series on prom (nil r: nothing).
func (r *replication) watch(prom *telemetry.Metrics) {
	if r == nil || prom == nil {
		return
	}
	r.prom.Store(prom)
	prom.WatchHA(r.metrics)
}

// run holds the replica's session and runs the engine's loop in every
// term it leads, until stop: it stops the loop of a term that ends (its
// pass is cut short: its writes would be fenced anyway) and, at stop,
// lets the pass in flight finish (passes run on ctx), then ends the
// session, so that a standby takes over at once.
func (r *replication) run(ctx context.Context, stop <-chan struct{}, eng *engine.Engine, mkLoop func() (*engine.Loop, error), log *slog.Logger) error {
	rctx, cancel := context.WithCancel(ctx)
	repDone := make(chan error, 1)
	go func() { repDone <- r.rep.Run(rctx) }()
	defer func() {
		cancel()
		<-repDone
	}()
	for {
		select {
		case <-stop:
			return nil
		case err := <-repDone:
			repDone <- err
			return fmt.Errorf("replication: %w", err)
		case t := <-r.rep.Terms():
			if err := r.lead(ctx, stop, t, eng, mkLoop, log); err != nil || isClosed(stop) {
				return err
			}
		}
	}
}

// lead runs the loop for one term.
func (r *replication) lead(ctx context.Context, stop <-chan struct{}, t *ha.Term, eng *engine.Engine, mkLoop func() (*engine.Loop, error), log *slog.Logger) error {
	tctx := t.Context()
	if tctx.Err() != nil {
		return nil
	}
	quarantined, err := eng.Resume()
	for _, sec := range quarantined {
		r.prom.Load().LearnedStateQuarantined(string(sec))
	}
	if err != nil {
		log.Error("cannot lead: the learned state does not load from the store; handing over", "err", err)
		r.rep.Handover()
		return nil
	}
	l, err := mkLoop()
	if err != nil {
		return err
	}
	log.Info("leading: reconciling with the cluster, then admitting", "epoch", t.Epoch())
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	loopStop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- l.Run(lctx, loopStop) }()
	select {
	case <-tctx.Done():
		close(loopStop)
		cancel()
		<-done
		log.Warn("the loop stopped: no longer leading", "epoch", t.Epoch(), "cause", context.Cause(tctx))
		return nil
	case <-stop:
		close(loopStop)
		return <-done
	case err := <-done:
		return err
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// ready is readiness for systemd: the engine's on the leader, the
// follower's elsewhere.
func (r *replication) ready(eng *engine.Engine) func(context.Context) error {
	return func(ctx context.Context) error {
		if r.rep.IsLeader() {
			return eng.Ready(ctx)
		}
		return r.FollowerReady()
	}
}

var _ engine.Fence = (*replication)(nil)

// Act implements engine.Fence.
func (r *replication) Act(ctx context.Context) (context.Context, context.CancelFunc, error) {
	return r.rep.Act(ctx)
}

// Reassignable implements engine.Fence.
func (r *replication) Reassignable(epoch uint64) bool {
	return r.rep.Reassignable(epoch, r.submit)
}

// Leading implements api.replica.
func (r *replication) Leading() (bool, string) {
	if r.rep.IsLeader() {
		return true, ""
	}
	return false, r.rep.Leader().URL
}

// Status implements api.replica.
func (r *replication) Status() v1.HAStatus {
	return haStatus(r.rep.Status(true))
}

// Applied implements api.replica.
func (r *replication) Applied() uint64 {
	st := r.rep.Status(false)
	return st.Applied
}

// FollowerReady implements api.replica: a follower is ready while it
// holds a session, knows its leader and is within a snapshot's worth of
// entries of it.
func (r *replication) FollowerReady() error {
	st := r.rep.Status(false)
	switch {
	case st.Role == ha.RoleDisconnected:
		return errors.New("no ZooKeeper session")
	case st.Leader.ID == "":
		return errors.New("no leader elected")
	case st.Lag > 1000:
		return fmt.Errorf("%d log entries behind the leader", st.Lag)
	}
	return nil
}

func (r *replication) metrics() telemetry.HAState {
	st := r.rep.Status(false)
	return telemetry.HAState{Role: st.Role, Epoch: st.Epoch, Applied: st.Applied, Lag: st.Lag}
}

func haStatus(s ha.Status) v1.HAStatus {
	out := v1.HAStatus{ID: s.ID, URL: s.URL, Role: s.Role, Epoch: s.Epoch, Applied: s.Applied,
		LeaderID: s.Leader.ID, LeaderURL: s.Leader.URL, LeaderApplied: s.LeaderApplied, Lag: s.Lag,
		Session: s.Session, SessionTimeoutSeconds: s.SessionTimeout.Seconds(), TermsWon: s.Terms, Root: s.Root}
	for _, m := range s.Members {
		out.Members = append(out.Members, v1.HAMember{ID: m.ID, URL: m.URL, Role: m.Role, Epoch: m.Epoch,
			Applied: m.Applied, UpdatedAt: m.UpdatedAt})
	}
	return out
}

// forwardTransport is how a follower reaches the leader: with the
// daemon's own certificate trusted too when it serves TLS (replicas
// usually share a CA), beside the system's roots.
func forwardTransport(cfg Config) (*http.Transport, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = cfg.API.WriteTimeout
	if cfg.TLS.CertFile == "" {
		return t, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	pem, err := os.ReadFile(cfg.TLS.CertFile)
	if err != nil {
		return nil, cfgErr("tls.cert_file", "read: %v", err)
	}
	pool.AppendCertsFromPEM(pem)
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}
