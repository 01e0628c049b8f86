package ha

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/queue"
)

// Errors a Replica returns.
var (
	// ErrNotLeader: this replica does not lead now; the write was not
	// applied (a *notLeaderError names the leader, when known).
	ErrNotLeader = errors.New("ha: not the leader")
	// errUncertain: the write was appended, or may have been, but this
	// replica lost its leadership before it could apply it: the next
	// leader applies it if it is in the log.
	errUncertain error = &retryError{"ha: leadership lost during the write; it may or may not have been applied"}
	// errUnreachable: the leader has no connection to ZooKeeper now
	// (quorum lost, or the network): nothing was appended.
	errUnreachable error = &retryError{"ha: ZooKeeper is unreachable (no quorum, or no connection): nothing was written"}
	// errOtherCluster: the store follows another cluster's log, or holds
	// a history the cluster's log does not.
	errOtherCluster = errors.New("ha: the store belongs to another history")
)

// notLeaderError is ErrNotLeader with the leader this replica knows of.
type notLeaderError struct {
	Leader leader // zero when no leader is known
}

func (e *notLeaderError) Error() string {
	if e.Leader.ID == "" {
		return "ha: not the leader, and no leader is elected now"
	}
	return fmt.Sprintf("ha: not the leader; the leader is %s at %s", e.Leader.ID, e.Leader.URL)
}

// Unwrap makes errors.Is(err, ErrNotLeader) true.
func (e *notLeaderError) Unwrap() error { return ErrNotLeader }

// RetryAfter says when to try again: an election takes moments.
func (e *notLeaderError) RetryAfter() time.Duration { return time.Second }

// retryError is a refusal worth retrying soon (the API's 503).
type retryError struct{ msg string }

func (e *retryError) Error() string             { return e.msg }
func (e *retryError) RetryAfter() time.Duration { return time.Second }

// leader is what the leader's znode says of it.
type leader struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// Options are a Replica's collaborators.
type Options struct {
	Logger *slog.Logger // nil: discard
	// Dir is a directory for snapshot files (the data directory).
	Dir string
	// OnEvent, when set, is told of leadership changes and failures
	// (metrics); it must not block.
	OnEvent func(Event)
}

// Event is something a Replica did, for metrics.
type Event int

// The events.
const (
	EventElected Event = iota
	eventSteppedDown
	eventSessionLost
	eventSnapshotTaken
	eventSnapshotInstalled
)

// Replica is one colocd replica's side of the replicated store. Run holds
// the session; Commit is the store's Log.
type Replica struct {
	cfg   Config
	p     paths
	store *queue.Store
	log   *slog.Logger
	opts  Options
	terms chan *Term

	mu     sync.Mutex
	sess   *session
	term   *Term
	leader leader
	epoch  uint64
	role   string

	leaderApplied atomic.Uint64
	wins          atomic.Uint64
	memberList    atomic.Pointer[[]member] // as publish last read them
}

var _ queue.Log = (*Replica)(nil)

// New builds a replica over store; it does no I/O (Run connects). The
// daemon sets it as the store's log (store.SetLog).
func New(store *queue.Store, cfg Config, opts Options) (*Replica, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Replica{cfg: cfg, p: paths{cfg.Root}, store: store, log: opts.Logger, opts: opts,
		terms: make(chan *Term, 1), role: RoleDisconnected}, nil
}

// Roles, as Status and colocd_ha_role report them.
const (
	RoleDisconnected = "disconnected" // no session
	roleFollower     = "follower"     // applying the log, not leading
	roleLeader       = "leader"       // leading: the daemon admits
)

// Terms delivers each leadership term this replica wins; the daemon runs
// the engine until the term's context ends.
func (r *Replica) Terms() <-chan *Term { return r.terms }

func (r *Replica) event(ev Event) {
	if r.opts.OnEvent != nil {
		r.opts.OnEvent(ev)
	}
}

// Run holds a session and, through it, follows the log and competes for
// leadership, until ctx ends. A session that ends (expired, or the term it
// led ended) is closed and a new one started.
func (r *Replica) Run(ctx context.Context) error {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, 2*r.cfg.SessionTimeout)
		s, err := dial(dctx, r.cfg, r.log)
		cancel()
		if err != nil {
			r.log.Warn("no ZooKeeper session; retrying", "err", err, "in", backoff)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		err = r.runSession(ctx, s)
		s.close()
		r.setRole(RoleDisconnected, nil)
		if ctx.Err() != nil {
			break
		}
		if errors.Is(err, errOtherCluster) {
			return err
		}
		r.event(eventSessionLost)
		r.log.Warn("ZooKeeper session over; starting a new one", "err", err)
	}
	return nil
}

// runSession follows the log and campaigns until this replica wins, then
// leads until the term ends. It returns why the session is over.
func (r *Replica) runSession(ctx context.Context, s *session) error {
	r.setRole(roleFollower, s)
	if err := r.prepare(s); err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go s.heartbeat(sctx, r.p.root)
	go r.publish(sctx, s)
	fctx, stopFollow := context.WithCancel(sctx)
	// followed is closed when the follower has returned, with its error in
	// followErr: the campaign and this function both wait for it, so it
	// must be a close, not a value only one receiver gets (a shutdown that
	// ended both at once could otherwise leave this wait forever).
	var followErr error
	followed := make(chan struct{})
	go func() {
		followErr = r.follow(fctx, s)
		close(followed)
	}()
	epoch, err := r.campaign(sctx, s, followed, func() error { return followErr })
	stopFollow()
	<-followed
	if err != nil {
		return err
	}
	return r.lead(sctx, s, epoch)
}

// prepare makes the cluster's znodes and checks that this store follows
// the cluster's history.
func (r *Replica) prepare(s *session) error {
	for _, p := range []string{r.p.log(), r.p.blobs(), r.p.snapshots(), r.p.members(), r.p.epoch()} {
		if err := s.ensure(p); err != nil {
			return err
		}
	}
	id, err := r.clusterID(s)
	if err != nil {
		return err
	}
	mine, err := r.store.Cluster()
	if err != nil {
		return err
	}
	switch {
	case mine == id:
		return nil
	case mine != "":
		return fmt.Errorf("%w: the store follows cluster %s, ZooKeeper's %s holds cluster %s", errOtherCluster, mine, r.p.root, id)
	}
	return r.join(s, id)
}

// clusterID reads <root>/cluster, creating it with a new id when missing.
func (r *Replica) clusterID(s *session) (string, error) {
	b := make([]byte, 16)
	rand.Read(b)
	_, err := s.conn.Create(r.p.cluster(), []byte(hex.EncodeToString(b)), 0, s.acl)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return "", fmt.Errorf("ha: create %s: %w", r.p.cluster(), err)
	}
	id, _, err := s.conn.Get(r.p.cluster())
	if err != nil {
		return "", fmt.Errorf("ha: read %s: %w", r.p.cluster(), err)
	}
	return string(id), nil
}

// join makes a store that follows no cluster follow this one. An empty
// store simply joins; a store with a history (colocd ran without HA) may
// only seed a cluster whose log is empty: it writes its snapshot as the
// cluster's first, which every other replica then installs.
func (r *Replica) join(s *session, id string) error {
	applied, err := r.store.Applied()
	if err != nil {
		return err
	}
	submitted, err := r.store.Submitted()
	if err != nil {
		return err
	}
	if applied > 0 || submitted > 0 {
		fresh, err := r.freshCluster(s)
		if err != nil {
			return err
		}
		if !fresh {
			return fmt.Errorf("%w: the store holds %d jobs of a colocd that ran without this cluster, and ZooKeeper's %s already holds a history; move the store aside to join as a new replica", errOtherCluster, submitted, r.p.root)
		}
		if err := r.seed(s); err != nil {
			return err
		}
		r.log.Info("seeded the replicated cluster with this store's history", "cluster", id, "applied", applied, "jobs", submitted)
	}
	return r.store.JoinCluster(id)
}

// freshCluster reports that the cluster's log never held an entry.
func (r *Replica) freshCluster(s *session) (bool, error) {
	if m, ok, err := r.manifest(s); err != nil || ok {
		_ = m
		return false, err
	}
	names, _, err := s.conn.Children(r.p.log())
	if err != nil {
		return false, fmt.Errorf("ha: list %s: %w", r.p.log(), err)
	}
	return len(names) == 0, nil
}

func (r *Replica) setRole(role string, s *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.role, r.sess = role, s
	if role == RoleDisconnected {
		r.leader = leader{}
	}
}

func (r *Replica) setLeader(l leader, epoch uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leader = l
	if epoch > 0 {
		r.epoch = epoch
	}
}

// campaign competes for the leader's znode until this replica holds it,
// and returns the epoch it bumped; meanwhile it keeps track of who leads.
// followed is closed at the follower's end, and followErr then says why
// (an error it cannot go on from; nil when the session's context ended).
func (r *Replica) campaign(ctx context.Context, s *session, followed <-chan struct{}, followErr func() error) (uint64, error) {
	me, _ := json.Marshal(leader{ID: r.cfg.ID, URL: r.cfg.Advertise})
	for {
		ok, st, ch, err := s.conn.ExistsW(r.p.leader())
		if err == nil && ok {
			r.readLeader(s, st)
			select {
			case <-ch:
			case <-s.ended:
				return 0, s.Err()
			case <-ctx.Done():
				return 0, context.Cause(ctx)
			case <-followed:
				if err := followErr(); err != nil {
					return 0, err
				}
				return 0, context.Cause(ctx) // the follower stops only when ctx ends

			}
			continue
		}
		if err != nil {
			if !uncertain(err) {
				return 0, fmt.Errorf("ha: watch %s: %w", r.p.leader(), err)
			}
			if err := s.waitConnected(ctx); err != nil {
				return 0, err
			}
			continue
		}
		res, err := s.conn.Multi(
			&zk.CreateRequest{Path: r.p.leader(), Data: me, Acl: s.acl, Flags: zk.FlagEphemeral},
			&zk.SetDataRequest{Path: r.p.epoch(), Data: []byte(r.cfg.ID), Version: -1})
		switch {
		case err == nil:
			return uint64(res[1].Stat.Version), nil
		case errors.Is(err, zk.ErrNodeExists):
		case uncertain(err):
			if err := s.waitConnected(ctx); err != nil {
				return 0, err
			}
			if epoch, won := r.wonAfterAll(s); won {
				return epoch, nil
			}
		default:
			return 0, fmt.Errorf("ha: campaign for %s: %w", r.p.leader(), err)
		}
	}
}

// wonAfterAll checks whether a campaign whose answer was lost won: the
// leader's znode is this session's.
func (r *Replica) wonAfterAll(s *session) (uint64, bool) {
	_, st, err := s.conn.Get(r.p.leader())
	if err != nil || st.EphemeralOwner != s.conn.SessionID() {
		return 0, false
	}
	_, est, err := s.conn.Get(r.p.epoch())
	if err != nil {
		return 0, false
	}
	return uint64(est.Version), true
}

// readLeader records who leads, from the leader's znode and the epoch.
func (r *Replica) readLeader(s *session, _ *zk.Stat) {
	b, _, err := s.conn.Get(r.p.leader())
	if err != nil {
		return
	}
	var l leader
	if json.Unmarshal(b, &l) != nil {
		return
	}
	var epoch uint64
	if _, est, err := s.conn.Get(r.p.epoch()); err == nil {
		epoch = uint64(est.Version)
	}
	r.setLeader(l, epoch)
}

// Commit implements queue.Log: on the leader it appends cmds to the log
// as one entry and returns once they are applied to this store; on any
// other replica it is a *notLeaderError.
func (r *Replica) Commit(ctx context.Context, cmds []queue.Command) ([]queue.Result, error) {
	r.mu.Lock()
	t, l := r.term, r.leader
	r.mu.Unlock()
	if t == nil {
		return nil, &notLeaderError{Leader: l}
	}
	return t.commit(ctx, cmds)
}
