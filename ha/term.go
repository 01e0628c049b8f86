package ha

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/queue"
)

// Term is one leadership of this replica: from the win, after the store
// has applied the whole log, until the session ends, an append is fenced
// or the replica hands over. The daemon runs the engine within Context.
type Term struct {
	r     *Replica
	sess  *session
	epoch uint64
	start time.Time

	ctx    context.Context
	cancel context.CancelCauseFunc

	sem     chan struct{} // bounds the appends in flight
	mu      sync.Mutex
	next    uint64 // the next index to append
	applied chan *op

	snapMu      sync.Mutex
	snapshot    uint64 // index of the last snapshot taken (or found)
	snapping    bool
	lastApplied uint64 // the highest index maybeSnapshot was told of
}

// op is one commit in flight.
type op struct {
	entry queue.Entry
	res   []queue.Result
	err   error
	done  chan struct{}
}

// Context ends when the term does.
func (t *Term) Context() context.Context { return t.ctx }

// Epoch is the term's fencing epoch.
func (t *Term) Epoch() uint64 { return t.epoch }

// Started is when the replica won.
func (t *Term) Started() time.Time { return t.start }

// end ends the term with cause (first cause wins).
func (t *Term) end(cause error) { t.cancel(cause) }

// lead takes over as leader with epoch: it applies the whole log (filling
// the holes an old leader's failed appends left), then serves commits
// until the term ends, and returns why it ended.
func (r *Replica) lead(ctx context.Context, s *session, epoch uint64) error {
	t := &Term{r: r, sess: s, epoch: epoch, start: time.Now(), sem: make(chan struct{}, r.cfg.MaxInFlight),
		applied: make(chan *op, r.cfg.MaxInFlight)}
	t.ctx, t.cancel = context.WithCancelCause(ctx)
	defer t.cancel(nil)
	go t.watch()
	r.log.Info("elected leader; applying the log to its end", "epoch", epoch)
	if err := t.catchUp(); err != nil {
		return fmt.Errorf("ha: take over: %w", err)
	}
	first := t.next // the applier's first index: commits may take it as soon as r.term is set
	r.mu.Lock()
	r.term, r.epoch, r.role = t, epoch, roleLeader
	r.leader = leader{ID: r.cfg.ID, URL: r.cfg.Advertise}
	r.mu.Unlock()
	r.wins.Add(1)
	r.event(EventElected)
	r.log.Info("leading", "epoch", epoch, "next_index", first, "took", time.Since(t.start).Round(time.Millisecond))
	applierDone := make(chan struct{})
	go func() { defer close(applierDone); t.applier(first) }()
	select {
	case r.terms <- t:
	default: // the daemon has not taken the last one: it ended before it was taken
		select {
		case <-r.terms:
		default:
		}
		r.terms <- t
	}
	<-t.ctx.Done()
	cause := context.Cause(t.ctx)
	r.mu.Lock()
	r.term, r.role = nil, roleFollower
	r.mu.Unlock()
	<-applierDone
	r.event(eventSteppedDown)
	r.log.Warn("no longer leading", "epoch", epoch, "cause", cause)
	return cause
}

// watch ends the term when the session ends, or when this replica has
// not heard from ZooKeeper for so long that the session may have expired
// without its knowing (cut off by a partition, go-zk cannot tell it):
// another replica may lead by now.
func (t *Term) watch() {
	s := t.sess
	tick := time.NewTicker(min(s.Timeout()/10, 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.ended:
			t.end(fmt.Errorf("ZooKeeper session ended: %w", s.Err()))
			return
		case <-t.ctx.Done():
			return
		case <-tick.C:
			if time.Now().After(s.validUntil()) {
				t.end(fmt.Errorf("no reply from ZooKeeper for longer than the session may live (%v): another replica may lead", s.Timeout()))
				return
			}
		}
	}
}

// catchUp applies every entry the log holds, installing the snapshot
// first when the log no longer starts where the store is, and writes a
// no-op entry in every hole below the log's last index; then next is the
// index after the last. A cluster that never had an entry but whose
// leader's store has a history (it seeded the cluster) starts after it.
func (t *Term) catchUp() error {
	r, s := t.r, t.sess
	names, _, err := s.conn.Children(r.p.log())
	if err != nil {
		return fmt.Errorf("list %s: %w", r.p.log(), err)
	}
	idx := make([]uint64, 0, len(names))
	for _, n := range names {
		if i, err := strconv.ParseUint(n, 10, 64); err == nil {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	m, have, err := r.manifest(s)
	if err != nil {
		return err
	}
	t.snapshot = m.Index
	applied, err := r.store.Applied()
	if err != nil {
		return err
	}
	first := applied + 1
	if have && m.Index > applied && (len(idx) == 0 || idx[0] > first) {
		if err := r.install(s, m); err != nil {
			return err
		}
		applied = m.Index
	}
	last := applied
	if len(idx) > 0 && idx[len(idx)-1] > last {
		last = idx[len(idx)-1]
	}
	for i := applied + 1; i <= last; {
		n := min(readAhead, int(last-i+1))
		batch, err := r.readEntries(s, i, n)
		if err != nil {
			return err
		}
		if len(batch) == 0 { // a hole: an old leader's append that never landed
			if batch, err = t.fill(i); err != nil {
				return err
			}
		}
		if _, err := r.store.Apply(batch...); err != nil {
			return fmt.Errorf("apply the log from %d: %w", i, err)
		}
		i += uint64(len(batch))
	}
	t.next = last + 1
	return nil
}

// fill writes a no-op at hole i, or reads what got there first.
func (t *Term) fill(i uint64) ([]queue.Entry, error) {
	noop := queue.Entry{Index: i, Epoch: t.epoch}
	data, _, err := encodeEntry(noop)
	if err != nil {
		return nil, err
	}
	err = t.create(i, data)
	if err != nil && !errors.Is(err, errTaken) {
		return nil, err
	}
	e, ok, err := t.r.readEntry(t.sess, i)
	if err != nil || !ok {
		return nil, fmt.Errorf("read entry %d after filling it: %v", i, err)
	}
	t.r.log.Warn("filled a hole in the log with a no-op entry (an old leader's append that never landed)", "index", i)
	return []queue.Entry{e}, nil
}

// errTaken: the index was taken by another append.
var errTaken = errors.New("ha: log index taken")

// fenced is the multi's checks: this term's epoch and leader znode.
func (t *Term) fenced(ops ...any) []any {
	return append([]any{
		&zk.CheckVersionRequest{Path: t.r.p.epoch(), Version: int32(t.epoch)},
		&zk.CheckVersionRequest{Path: t.r.p.leader(), Version: 0},
	}, ops...)
}

// create appends data at index i, fenced. A lost answer is resolved by
// asking again once connected: the znode holding exactly data is success;
// another's data is errTaken; a failed check is the end of the term.
func (t *Term) create(i uint64, data []byte) error {
	s, path := t.sess, t.r.p.entry(i)
	for {
		_, err := s.conn.Multi(t.fenced(&zk.CreateRequest{Path: path, Data: data, Acl: s.acl})...)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNodeExists):
			got, _, gerr := s.conn.Get(path)
			if gerr == nil && bytes.Equal(got, data) {
				return nil // an earlier try went through
			}
			if gerr != nil && uncertain(gerr) {
				continue
			}
			return errTaken
		case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
			err = fmt.Errorf("%w: fenced at entry %d (another replica leads now): %v", ErrNotLeader, i, err)
			t.end(err)
			return err
		case uncertain(err):
			if werr := s.waitConnected(t.ctx); werr != nil {
				return fmt.Errorf("%w: entry %d: %v", errUncertain, i, werr)
			}
		default:
			return fmt.Errorf("append entry %d: %w", i, err)
		}
	}
}

// commit appends cmds as the next entry and waits until it is applied.
func (t *Term) commit(ctx context.Context, cmds []queue.Command) ([]queue.Result, error) {
	if t.sess.conn.State() != zk.StateHasSession {
		return nil, errUnreachable // nothing sent: a definite refusal, and no index used
	}
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-t.ctx.Done():
		return nil, &notLeaderError{}
	}
	defer func() { <-t.sem }()
	t.mu.Lock()
	o := &op{entry: queue.Entry{Index: t.next, Epoch: t.epoch, Commands: cmds}, done: make(chan struct{})}
	t.next++
	t.mu.Unlock()
	if err := t.append(o); err != nil {
		// This index stays a hole until the next leader fills it, so no
		// later entry of this term can be applied: the term is over.
		t.end(err)
		switch {
		case errors.Is(err, ErrNotLeader) || errors.Is(err, errTaken):
			return nil, &notLeaderError{}
		case errors.Is(err, errUncertain):
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", errUncertain, err)
	}
	select {
	case t.applied <- o:
	case <-t.ctx.Done():
		return nil, errUncertain
	}
	select {
	case <-o.done:
		return o.res, o.err
	case <-t.ctx.Done():
		return nil, errUncertain
	}
}

// append writes o's entry (its chunks first, when large).
func (t *Term) append(o *op) error {
	data, chunks, err := encodeEntry(o.entry)
	if err != nil {
		return err
	}
	if len(chunks) > 0 {
		if err := putChunks(t.sess, t.r.p, t.r.p.blob(o.entry.Index), chunks); err != nil {
			return err
		}
	}
	return t.create(o.entry.Index, data)
}

// applier applies the term's appended entries in index order, as many as
// are ready in one transaction, and answers their commits.
func (t *Term) applier(nextApply uint64) {
	ready := map[uint64]*op{}
	for {
		select {
		case o := <-t.applied:
			ready[o.entry.Index] = o
		case <-t.ctx.Done():
			return
		}
	drain:
		for {
			select {
			case o := <-t.applied:
				ready[o.entry.Index] = o
			default:
				break drain
			}
		}
		var batch []*op
		for o, ok := ready[nextApply]; ok; o, ok = ready[nextApply] {
			batch = append(batch, o)
			delete(ready, nextApply)
			nextApply++
		}
		if len(batch) == 0 {
			continue
		}
		if !t.apply(batch) {
			return
		}
		t.maybeSnapshot(nextApply - 1)
	}
}

// apply applies batch (consecutive entries) to the store; a store that
// fails ends the term: the entries are in the log, and the next leader
// applies them.
func (t *Term) apply(batch []*op) bool {
	entries := make([]queue.Entry, len(batch))
	for i, o := range batch {
		entries[i] = o.entry
	}
	res, err := t.r.store.Apply(entries...)
	if err != nil {
		err = fmt.Errorf("the leader cannot apply the log to its store: %w", err)
		t.r.log.Error("stepping down", "err", err)
		t.end(err)
		return false
	}
	for i, o := range batch {
		o.res = res[i]
		close(o.done)
	}
	return true
}
