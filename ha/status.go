package ha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-zookeeper/zk"
)

// errLeaseShort: the leader has not heard from ZooKeeper recently enough
// to act on the cluster now (its session might expire before the action
// ends, and another replica take over).
var errLeaseShort = errors.New("ha: too long since the last ZooKeeper reply to act as the leader")

// minAct is the least time an action on the cluster is given: a leader
// with less left of its lease does not start one (a second, or a tenth of
// a short session timeout).
func minAct(timeout time.Duration) time.Duration { return min(time.Second, timeout/10) }

// Act returns a context within which this replica may act on the cluster
// as the leader: it ends when the term does, and no later than the lease
// the session's last reply gives (session.validUntil): a leader that has
// been cut off from ZooKeeper, or paused, for longer than that may have
// been replaced. Outside a term it is a *notLeaderError; with less than a
// second of lease left, errLeaseShort.
func (r *Replica) Act(ctx context.Context) (context.Context, context.CancelFunc, error) {
	r.mu.Lock()
	t, l := r.term, r.leader
	r.mu.Unlock()
	if t == nil || t.ctx.Err() != nil {
		return nil, nil, &notLeaderError{Leader: l}
	}
	until := t.sess.validUntil()
	if left := time.Until(until); left < minAct(t.sess.Timeout()) {
		return nil, nil, fmt.Errorf("%w: %v of the lease left", errLeaseShort, left.Round(time.Millisecond))
	}
	actx, cancel := context.WithDeadline(ctx, until)
	stop := context.AfterFunc(t.ctx, cancel)
	return actx, func() { stop(); cancel() }, nil
}

// Reassignable reports whether a job admitted under epoch may now get a
// new application id: always when this term admitted it; for an older
// epoch only once a grace period has passed since this term began —
// longer than the session timeout plus submit, the longest an old leader
// could still be submitting it under its old id.
func (r *Replica) Reassignable(epoch uint64, submit time.Duration) bool {
	r.mu.Lock()
	t := r.term
	r.mu.Unlock()
	if t == nil {
		return false
	}
	if epoch >= t.epoch {
		return true
	}
	return time.Since(t.start) > t.sess.Timeout()+submit+time.Second
}

// Status is a replica's view of the replicated colocd.
type Status struct {
	ID             string        `json:"id"`
	URL            string        `json:"url"`
	Role           string        `json:"role"`
	Epoch          uint64        `json:"epoch"`
	Applied        uint64        `json:"applied_index"`
	Leader         leader        `json:"leader"`
	LeaderApplied  uint64        `json:"leader_applied_index"`
	Lag            uint64        `json:"lag"`
	Session        string        `json:"session,omitempty"`
	SessionTimeout time.Duration `json:"session_timeout"`
	Terms          uint64        `json:"terms_won"`
	Root           string        `json:"root"`
	Members        []member      `json:"members,omitempty"`
}

// member is what a replica publishes of itself under <root>/members.
type member struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Role      string    `json:"role"`
	Epoch     uint64    `json:"epoch"`
	Applied   uint64    `json:"applied_index"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Status reads this replica's state; with members, also every replica's
// as published, as the publish loop last read them (it never waits on
// ZooKeeper).
func (r *Replica) Status(members bool) Status {
	r.mu.Lock()
	st := Status{ID: r.cfg.ID, URL: r.cfg.Advertise, Role: r.role, Epoch: r.epoch, Leader: r.leader, Root: r.cfg.Root}
	s := r.sess
	r.mu.Unlock()
	st.Applied, _ = r.store.Applied()
	st.Terms = r.wins.Load()
	st.LeaderApplied = r.leaderApplied.Load()
	if st.Role == roleLeader {
		st.LeaderApplied = st.Applied
	}
	if st.LeaderApplied > st.Applied {
		st.Lag = st.LeaderApplied - st.Applied
	}
	if s != nil {
		st.Session = fmt.Sprintf("0x%x", s.conn.SessionID())
		st.SessionTimeout = s.Timeout()
	}
	if members {
		if m := r.memberList.Load(); m != nil {
			st.Members = *m
		}
	}
	return st
}

func (r *Replica) members(s *session) []member {
	names, _, err := s.conn.Children(r.p.members())
	if err != nil {
		return nil
	}
	sort.Strings(names)
	var out []member
	for _, n := range names {
		b, _, err := s.conn.Get(r.p.member(n))
		var m member
		if err == nil && json.Unmarshal(b, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// publish keeps this replica's member znode (ephemeral) up to date, every
// sixth of the session timeout, reads the leader's applied index for the
// lag, and every replica's member znode for Status (so that a status
// request never waits on ZooKeeper).
func (r *Replica) publish(ctx context.Context, s *session) {
	t := time.NewTicker(max(s.Timeout()/6, 200*time.Millisecond))
	defer t.Stop()
	path := r.p.member(r.cfg.ID)
	for {
		st := r.Status(false)
		b, _ := json.Marshal(member{ID: r.cfg.ID, URL: r.cfg.Advertise, Role: st.Role, Epoch: st.Epoch, Applied: st.Applied, UpdatedAt: time.Now().UTC()})
		if _, err := s.conn.Set(path, b, -1); errors.Is(err, zk.ErrNoNode) {
			_, err = s.conn.Create(path, b, zk.FlagEphemeral, s.acl)
			if errors.Is(err, zk.ErrNodeExists) {
				r.log.Debug("member znode held by another session (a restart within the session timeout, or a second replica with this id)", "path", path)
			}
		}
		members := r.members(s)
		r.memberList.Store(&members)
		for _, m := range members {
			if m.Role == roleLeader && m.ID == st.Leader.ID && st.Role != roleLeader {
				r.leaderApplied.Store(m.Applied)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.ended:
			return
		case <-t.C:
		}
	}
}

// Leader is the leader this replica knows of (zero when none).
func (r *Replica) Leader() leader {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leader
}

// IsLeader reports whether this replica leads now.
func (r *Replica) IsLeader() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.term != nil && r.term.ctx.Err() == nil
}

// Handover ends this replica's term and its session at once, so that a
// standby wins within moments (SIGTERM of the leader): call it once the
// engine has stopped.
func (r *Replica) Handover() {
	r.mu.Lock()
	t, s := r.term, r.sess
	r.mu.Unlock()
	if t != nil {
		t.end(errors.New("handing over"))
	}
	if s != nil {
		s.close()
	}
}
