package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"

	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/engine"
)

// systemd tells the service manager how Serve is doing, over the sd_notify
// protocol (configs/colocd.service is Type=notify):
//
//   - READY=1 with the first reading, once the API serves: the store is
//     open, the HTTP listener is bound and served, the loop has started.
//     What the cluster answers never holds start-up: an RM that is down at
//     boot leaves colocd started, serving its API, and saying so in
//     STATUS= and /readyz (a start that waits for the RM would block
//     `systemctl start`, then be killed and restarted in a loop);
//   - STATUS= with that reading and on every change of it afterwards:
//     "ready", "starting: " while the loop has not reconciled with the
//     cluster yet, or "degraded: ", with the reason /readyz names without
//     a token; then "; degraded: " and the dependencies that are failing,
//     each with the time its failures began (/readyz's degraded list);
//   - WATCHDOG=1 every half of WATCHDOG_USEC while the admission loop is
//     moving: a stalled loop (engine.ErrStalled, the bound /readyz uses)
//     stops the pings, so that systemd restarts the daemon;
//   - STOPPING=1 when shutdown begins, after which nothing else is sent.
//
// A nil *systemd sends nothing: SystemdFromEnv returns nil outside systemd.
type systemd struct {
	send      func(state string) error
	watchdog  time.Duration // WATCHDOG_USEC; 0: no watchdog
	startPoll time.Duration // how often readiness is read until it is first ready
	poll      time.Duration // and afterwards, for STATUS= lines
}

// Readiness is read every systemdStartPoll until the daemon is ready (so
// that STATUS= says "ready" soon after it is), then every systemdPoll. A
// reading is cheap: Engine.Ready takes a mutex and reads
// the store's counts in one bbolt read transaction.
const (
	systemdStartPoll = 100 * time.Millisecond
	systemdPoll      = time.Second
)

// SystemdFromEnv returns the notifier NOTIFY_SOCKET asks for (a path or an
// abstract "@name" socket), with the watchdog of WATCHDOG_USEC when it is
// set for this process (WATCHDOG_PID unset or equal to its pid). Without
// NOTIFY_SOCKET it returns nil: the daemon was not started by systemd as a
// Type=notify service, and nothing is sent.
func SystemdFromEnv() (*systemd, error) {
	if os.Getenv("NOTIFY_SOCKET") == "" {
		return nil, nil
	}
	wd, err := sd.SdWatchdogEnabled(false)
	if err != nil {
		return nil, fmt.Errorf("read the systemd watchdog: %w", err)
	}
	return &systemd{send: sdNotify, watchdog: wd, startPoll: systemdStartPoll, poll: systemdPoll}, nil
}

// sdNotify sends one datagram to NOTIFY_SOCKET.
func sdNotify(state string) error {
	_, err := sd.SdNotify(false, state)
	return err
}

// notifyState is what the service manager was last told.
type notifyState struct {
	sent   bool   // READY=1 was sent (with the first reading)
	ready  bool   // a reading succeeded once: later failures are "degraded"
	status string // the last STATUS= value
}

// notifyTransition is the state after a readiness reading (err: what
// Engine.Ready returned; degraded: the dependencies failing, "" none) and
// the message that tells it, "" when the service manager knows it
// already. addr is the API's address.
func notifyTransition(prev notifyState, err error, degraded, addr string) (notifyState, string) {
	next := prev
	next.sent = true
	switch {
	case err == nil:
		next.ready, next.status = true, "ready: serving on "+addr
	case !prev.ready:
		next.status = "starting: serving on " + addr + "; " + notReadyReason(err)
	default:
		next.status = "degraded: serving on " + addr + "; " + notReadyReason(err)
	}
	if degraded != "" {
		next.status += "; degraded: " + degraded
	}
	switch {
	case !prev.sent:
		return next, sd.SdNotifyReady + "\nSTATUS=" + next.status
	case next.status != prev.status:
		return next, "STATUS=" + next.status
	}
	return next, ""
}

// notReadyReason is the reason /readyz names without a token: STATUS= is
// shown to every local user by `systemctl status`, and the rest of the
// error can name RM hosts and users (it goes to the log).
func notReadyReason(err error) string {
	if errors.Is(err, engine.ErrStarting) {
		return "reconciling with the cluster"
	}
	var r api.PublicReasoner
	if errors.As(err, &r) {
		return r.PublicReason()
	}
	return "not ready"
}

// watchdogOK reports whether a readiness reading allows a WATCHDOG=1 ping:
// every one but a stalled admission loop. A loop that cannot sync, or a
// store that refuses writes, is reported (STATUS=degraded) but not
// restarted: a restart would not fix the RM or the disk.
func watchdogOK(err error) bool {
	return !errors.Is(err, engine.ErrStalled)
}

// watch reads readiness until ctx is done and tells the service manager
// (the type's comment). A reading that never returns stops the pings too.
func (s *systemd) watch(ctx context.Context, ready func(context.Context) error, degraded func() string, addr string, log *slog.Logger) {
	if s == nil {
		return
	}
	var ping <-chan time.Time
	if s.watchdog > 0 {
		t := time.NewTicker(s.watchdog / 2)
		defer t.Stop()
		ping = t.C
	}
	var st notifyState
	read := func() error {
		err := ready(ctx)
		var deg string
		if degraded != nil {
			deg = degraded()
		}
		next, msg := notifyTransition(st, err, deg, addr)
		if msg != "" {
			s.notify(msg, log)
			if err != nil {
				log.Warn("systemd status", "status", next.status, "err", err)
			} else {
				log.Info("systemd status", "status", next.status)
			}
		}
		st = next
		return err
	}
	next := func() time.Duration {
		if st.ready {
			return s.poll
		}
		return s.startPoll
	}
	read()
	check := time.NewTimer(next())
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-check.C:
			read()
			check.Reset(next())
		case <-ping:
			if watchdogOK(read()) {
				s.notify(sd.SdNotifyWatchdog, log)
			}
		}
	}
}

// stopping tells the service manager that shutdown began; call it after
// watch returned.
func (s *systemd) stopping(log *slog.Logger) {
	if s == nil {
		return
	}
	s.notify(sd.SdNotifyStopping+"\nSTATUS=stopping: finishing the pass in flight, closing the store", log)
}

// notify sends msg; a failure is logged, not returned: the daemon serves
// on without the service manager's view of it.
func (s *systemd) notify(msg string, log *slog.Logger) {
	if err := s.send(msg); err != nil {
		log.Warn("sd_notify failed", "msg", msg, "err", err)
	}
}
