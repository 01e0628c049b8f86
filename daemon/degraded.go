package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/yarnclient/kerberos"
)

// dependencyOf names the KDC as the dependency of a Kerberos failure on a
// call to the RM (engine.Options.DependencyOf): the RM may be fine.
func dependencyOf(err error) string {
	for _, k := range []error{kerberos.ErrKDCUnreachable, kerberos.ErrExchange, kerberos.ErrClockSkew,
		kerberos.ErrNoTicket, kerberos.ErrKeytab, kerberos.ErrNoSuchPrincipal, kerberos.ErrReplyTooLarge} {
		if errors.Is(err, k) {
			return engine.DepKDC
		}
	}
	return ""
}

// wireDegraded is the engine's list as the API serves it.
func wireDegraded(eng *engine.Engine) func() []apiclient.Degraded {
	return func() []apiclient.Degraded {
		ds := eng.Degraded()
		out := make([]apiclient.Degraded, 0, len(ds))
		for _, d := range ds {
			w := apiclient.Degraded{Dependency: d.Dependency, Since: d.Since.UTC(), Op: d.Op}
			if d.Err != nil {
				w.Error = d.Err.Error()
			}
			out = append(out, w)
		}
		return out
	}
}

// degradedSince is the engine's list for colocd_dependency_degraded.
func degradedSince(eng *engine.Engine) func() map[string]time.Time {
	return func() map[string]time.Time {
		out := map[string]time.Time{}
		for _, d := range eng.Degraded() {
			out[d.Dependency] = d.Since
		}
		return out
	}
}

// degradedText is the list for STATUS=, with no error details (every
// local user reads them): "metrics since 10:04:05 UTC, kdc since …".
func degradedText(eng *engine.Engine) func() string {
	return func() string {
		var parts []string
		for _, d := range eng.Degraded() {
			parts = append(parts, fmt.Sprintf("%s since %s", d.Dependency, d.Since.UTC().Format("2006-01-02 15:04:05 UTC")))
		}
		return strings.Join(parts, ", ")
	}
}

// pinger is a dependency the start-up probe can ask.
type pinger interface {
	Ping(ctx context.Context) error
}

// probeAtStart asks the cluster and the metrics store whether they answer,
// each within timeout, records the outcome as the dependencies' state, and
// logs what it could not reach: the line an operator reads after a start
// (the loop goes on and retries whatever failed).
func probeAtStart(ctx context.Context, eng *engine.Engine, b backend, timeout time.Duration, log *slog.Logger) {
	type probe struct {
		dep, what string
		call      func(context.Context) error
	}
	var probes []probe
	if b.sim == nil {
		probes = append(probes, probe{engine.DepCluster, "the cluster (ResourceManager)", func(ctx context.Context) error {
			_, err := b.cluster.State(ctx)
			return err
		}})
		if p, ok := b.metrics.(pinger); ok {
			probes = append(probes, probe{engine.DepMetrics, "the metrics store", p.Ping})
		}
	}
	if len(probes) == 0 {
		return
	}
	errs := make([]error, len(probes))
	done := make(chan int, len(probes))
	for i, p := range probes {
		go func() {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			errs[i] = p.call(pctx)
			done <- i
		}()
	}
	for range probes {
		<-done
	}
	if ctx.Err() != nil {
		return
	}
	var reached []string
	var failed []any
	for i, p := range probes {
		op := "ping"
		if p.dep == engine.DepCluster {
			op = "state"
		}
		dep := p.dep
		if d := dependencyOf(errs[i]); d != "" {
			dep = d
		}
		eng.Probed(dep, op, errs[i])
		if errs[i] != nil {
			failed = append(failed, p.dep, errs[i].Error())
		} else {
			reached = append(reached, p.what)
		}
	}
	if len(failed) == 0 {
		log.Info("start-up: reached every dependency", "reached", strings.Join(reached, ", "))
		return
	}
	log.Warn("start-up: could not reach some dependencies; serving on and retrying (see /readyz)",
		append([]any{"reached", strings.Join(reached, ", ")}, failed...)...)
}
