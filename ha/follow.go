package ha

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/queue"
)

// readAhead is how many entries a follower asks for at once (the client
// pipelines them on one connection), and applies in one transaction.
const readAhead = 64

// follow applies the log to the store from its applied index on, in
// batches, until ctx ends; when the entry it needs was truncated behind a
// snapshot, it installs the snapshot first. Only a store that cannot
// apply ends it with an error (the replica then starts over).
func (r *Replica) follow(ctx context.Context, s *session) error {
	ahead := 1 // grows while entries are waiting, so a follower that keeps up reads one at a time
	for ctx.Err() == nil {
		applied, err := r.store.Applied()
		if err != nil {
			return err
		}
		entries, err := r.readEntries(s, applied+1, ahead)
		if len(entries) == ahead {
			ahead = min(2*ahead, readAhead)
		} else {
			ahead = max(1, len(entries))
		}
		if err != nil {
			if !r.retryable(ctx, s, err, "read the log") {
				return err
			}
			continue
		}
		if len(entries) > 0 {
			if _, err := r.store.Apply(entries...); err != nil {
				r.log.Error("cannot apply the log to the store; retrying", "index", entries[0].Index, "err", err)
				if !sleepCtx(ctx, time.Second) {
					return nil
				}
			}
			continue
		}
		if err := r.awaitEntry(ctx, s, applied+1); err != nil {
			if !r.retryable(ctx, s, err, "wait for the log") {
				return err
			}
		}
	}
	return nil
}

// awaitEntry returns once entry i exists (or a snapshot beyond it does,
// which it installs), or ctx or the session ends.
func (r *Replica) awaitEntry(ctx context.Context, s *session, i uint64) error {
	ok, _, ch, err := s.conn.ExistsW(r.p.entry(i))
	if err != nil || ok {
		return err
	}
	m, have, err := r.manifest(s)
	if err != nil {
		return err
	}
	if have && m.Index >= i { // the leader applied i and truncated it
		return r.install(s, m)
	}
	select {
	case <-ch:
	case <-ctx.Done():
	case <-s.ended:
	}
	return nil
}

// retryable logs err and waits a little when the session can go on with
// it (a lost connection, a read to retry), and reports false when not.
func (r *Replica) retryable(ctx context.Context, s *session, err error, what string) bool {
	if ctx.Err() != nil || s.Err() != nil {
		return false
	}
	if uncertain(err) {
		return s.waitConnected(ctx) == nil
	}
	r.log.Warn("follower: cannot "+what+"; retrying", "err", err)
	return sleepCtx(ctx, time.Second)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// readEntries reads up to n consecutive entries from index from on,
// stopping at the first that does not exist. The reads are issued
// together (pipelined on the connection).
func (r *Replica) readEntries(s *session, from uint64, n int) ([]queue.Entry, error) {
	type got struct {
		e   queue.Entry
		ok  bool
		err error
	}
	res := make([]got, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, ok, err := r.readEntry(s, from+uint64(k))
			res[k] = got{e, ok, err}
		}()
	}
	wg.Wait()
	var out []queue.Entry
	for k, g := range res {
		if g.err != nil {
			if len(out) > 0 {
				return out, nil
			}
			return nil, g.err
		}
		if !g.ok {
			break
		}
		if g.e.Index != from+uint64(k) {
			return nil, fmt.Errorf("%w: %s holds entry %d", errBadEntry, r.p.entry(from+uint64(k)), g.e.Index)
		}
		out = append(out, g.e)
	}
	return out, nil
}

// readEntry reads log entry i; ok is false when it does not exist.
func (r *Replica) readEntry(s *session, i uint64) (queue.Entry, bool, error) {
	data, _, err := s.conn.Get(r.p.entry(i))
	if errors.Is(err, zk.ErrNoNode) {
		return queue.Entry{}, false, nil
	}
	if err != nil {
		return queue.Entry{}, false, err
	}
	e, err := decodeEntry(data, func(ref blobRef) ([]byte, error) {
		return getChunks(s, r.p, r.p.blob(i), ref.Chunks, ref.Bytes)
	})
	if err != nil {
		return queue.Entry{}, false, fmt.Errorf("entry %d: %w", i, err)
	}
	return e, true, nil
}
