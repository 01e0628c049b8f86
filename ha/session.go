package ha

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// maxReply bounds what the client reads of one ZooKeeper reply: the
// largest znode colocd writes is under 1 MiB (the servers' default
// jute.maxbuffer), a listing of the log's children a few hundred KiB.
const maxReply = 8 << 20

// session is one ZooKeeper session and the connection that holds it. It
// ends for good when the server expires it: go-zk would open a new
// session on the same connection by itself, and a leader must never act
// on that one's behalf, so the connection is closed and the replica
// starts over with a new session.
type session struct {
	conn    *zk.Conn
	acl     []zk.ACL
	log     *slog.Logger
	timeout time.Duration // granted by the server

	mu      sync.Mutex
	id      int64     // the session's id, once established
	lastOK  time.Time // when the last request that got a reply was sent (monotonic)
	endOnce sync.Once
	ended   chan struct{} // closed when the session expired or the connection closed
	cause   error
	ready   chan struct{} // closed once the session is established
	readyOK sync.Once
}

// dial connects and waits until the session is established (ctx bounds
// the wait).
func dial(ctx context.Context, cfg Config, log *slog.Logger) (*session, error) {
	s := &session{log: log, ended: make(chan struct{}), ready: make(chan struct{}), timeout: cfg.SessionTimeout}
	s.acl = zk.WorldACL(zk.PermAll)
	if cfg.Auth != nil {
		s.acl = zk.DigestACL(zk.PermAll, cfg.Auth.User, cfg.Auth.Password)
	}
	conn, _, err := zk.Connect(cfg.Connect, cfg.SessionTimeout, zk.WithLogger(zkLogger{s}),
		zk.WithEventCallback(s.event), zk.WithMaxBufferSize(maxReply))
	if err != nil {
		return nil, fmt.Errorf("ha: connect to ZooKeeper %v: %w", cfg.Connect, err)
	}
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	select {
	case <-s.ready:
		s.mu.Lock()
		s.id = conn.SessionID()
		s.mu.Unlock()
	case <-s.ended:
		conn.Close()
		return nil, fmt.Errorf("ha: ZooKeeper session ended before it was established: %w", s.cause)
	case <-ctx.Done():
		conn.Close()
		return nil, fmt.Errorf("ha: no ZooKeeper session with %v: %w", cfg.Connect, context.Cause(ctx))
	}
	if cfg.Auth != nil {
		if err := conn.AddAuth("digest", []byte(cfg.Auth.User+":"+cfg.Auth.Password)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("ha: authenticate to ZooKeeper as %s: %w", cfg.Auth.User, err)
		}
	}
	s.touch(time.Now())
	return s, nil
}

// event is go-zk's callback; it must not block. A connection that comes
// back with another session than the first is the end of this one.
func (s *session) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		s.mu.Lock()
		conn, id := s.conn, s.id
		s.mu.Unlock()
		if conn != nil && id != 0 && conn.SessionID() != id {
			s.end(errors.New("ZooKeeper gave the connection a new session"))
			return
		}
		s.readyOK.Do(func() { close(s.ready) })
	case zk.StateExpired:
		s.end(zk.ErrSessionExpired)
	case zk.StateAuthFailed:
		s.end(zk.ErrAuthFailed)
	}
}

// end marks the session over (first cause wins).
func (s *session) end(cause error) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		s.cause = cause
		s.mu.Unlock()
		close(s.ended)
	})
}

// Err is why the session ended, nil while it lives.
func (s *session) Err() error {
	select {
	case <-s.ended:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.cause
	default:
		return nil
	}
}

// close ends the session on the server (its ephemeral znodes go at once)
// and the connection.
func (s *session) close() {
	s.end(errors.New("closed"))
	s.conn.Close()
}

// touch records that a request sent at t got a reply.
func (s *session) touch(t time.Time) {
	s.mu.Lock()
	if t.After(s.lastOK) {
		s.lastOK = t
	}
	s.mu.Unlock()
}

// validUntil is the last moment this replica may still act as the
// session's holder: the server heard from it at or after lastOK, and
// expires a session no sooner than its timeout after that. A margin of a
// fifth of the timeout (at least 500 ms) covers the two clocks' rates.
func (s *session) validUntil() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	margin := max(s.timeout/5, 500*time.Millisecond)
	return s.lastOK.Add(s.timeout - margin)
}

// heartbeat keeps lastOK fresh while the session lives: a request every
// tenth of the timeout.
func (s *session) heartbeat(ctx context.Context, path string) {
	t := time.NewTicker(max(s.Timeout()/10, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ended:
			return
		case <-t.C:
			sent := time.Now()
			if _, _, err := s.conn.Exists(path); err == nil {
				s.touch(sent)
			}
		}
	}
}

// zkLogger routes go-zk's log lines to slog at DEBUG, and learns the
// session timeout the server granted from the line go-zk writes when a
// session is established (it has no accessor for it).
type zkLogger struct{ s *session }

func (l zkLogger) Printf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if strings.HasPrefix(format, "authenticated: id=%d, timeout=%d") && len(args) == 2 {
		if ms, ok := args[1].(int32); ok && ms > 0 {
			l.s.mu.Lock()
			if granted := time.Duration(ms) * time.Millisecond; granted != l.s.timeout {
				l.s.log.Warn("ZooKeeper granted another session timeout than asked", "asked", l.s.timeout, "granted", granted)
				l.s.timeout = granted
			}
			l.s.mu.Unlock()
		}
	}
	l.s.log.Debug("zookeeper client: " + msg)
}

// Timeout is the session timeout the server granted.
func (s *session) Timeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timeout
}

// uncertain reports whether err leaves a request's outcome unknown (the
// connection went while it was in flight), as opposed to a definite
// answer from the server.
func uncertain(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrClosing) || errors.Is(err, zk.ErrSessionMoved)
}

// waitConnected waits until the connection has its session again, the
// session ends or ctx ends.
func (s *session) waitConnected(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for s.conn.State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-s.ended:
			return s.Err()
		case <-t.C:
		}
	}
	return nil
}

// ensure creates path (and its parents) if missing, with the session's ACL.
func (s *session) ensure(path string) error {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		_, err := s.conn.Create(p, nil, 0, s.acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("ha: create %s: %w", p, err)
		}
	}
	return nil
}
