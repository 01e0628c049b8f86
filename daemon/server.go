package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/ha"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/telemetry"
)

// ServeOptions are Serve's inputs besides the configuration.
type ServeOptions struct {
	Logger *slog.Logger // nil: discard
	// Listener, when set, is used instead of listening on cfg.Listen.
	Listener net.Listener
	// Version is reported in the start log line.
	Version string
	// AcceptStoreRollback opens a store whose newest bbolt meta page is
	// damaged by falling back to the older one, losing the last committed
	// transaction (queue.Options.AcceptMetaFallback). For one start, after
	// an operator has read the refusal: `colocd serve --accept-store-rollback`.
	AcceptStoreRollback bool
	// Build labels colocd_build_info (version, revision); an empty field
	// is read from the binary's build information (the module version,
	// the VCS revision stamp).
	Build telemetry.BuildInfo
	// Systemd, when set, is told of readiness, status, shutdown and the
	// loop's liveness (SystemdFromEnv; nil: nothing is sent).
	Systemd *systemd
	// Reloaded, with Reload, asks for a reload at each receive (SIGHUP,
	// the unit's ExecReload): Reload loads the configuration again, and
	// what a reload can change (reloadedConfig: the log level, tokens and
	// token_file, TLS certificates and client CAs, the API's identity
	// settings) is applied without a restart; the other keys that changed
	// are logged as needing one.
	Reloaded <-chan struct{}
	Reload   func() (Config, error)
	// LogLevel, when set, is the level of Logger's handler, set again at
	// each reload from log_level.
	LogLevel *slog.LevelVar

	reloadDone func(error) // tests: called after each reload
	fifoDone   func()      // tests: called after each FIFO comparison
}

// build is o.Build with its empty fields filled from the binary.
func (o ServeOptions) build() telemetry.BuildInfo {
	b := o.Build
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if b.Version == "" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && b.Revision == "" {
			b.Revision = s.Value
		}
	}
	return b
}

// Serve runs the daemon until ctx is cancelled (SIGTERM/SIGINT in `colocd
// serve`), then shuts down gracefully within cfg.ShutdownTimeout: stop
// accepting HTTP requests, stop the loop after the pass in flight, close
// the journal and the store. It returns nil after a clean shutdown.
//
// Start-up order: data_dir's lock (before anything in data_dir is opened:
// a second colocd on it exits with *dataDirLockedError), backend (the
// simulator is rebuilt from data_dir first), store, learner (restored; a
// stored state that does not restore is quarantined and learned afresh), journal, metrics, engine, HTTP server; the loop
// reconciles before it admits anything. With opts.Systemd, READY=1 is sent
// once Engine.Ready succeeds (the notifier's comment).
func Serve(ctx context.Context, cfg Config, opts ServeOptions) (err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Tokens) == 0 && cfg.API.Auth != api.AuthKerberos {
		return cfgErr("tokens", "at least one API token is required to serve with api.auth %s (tokens or token_file)", cfg.API.Auth)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("create data_dir: %w", err)
	}
	var closers []func() error
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if cerr := closers[i](); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	unlockDir, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	closers = append(closers, unlockDir) // released last
	b, err := openBackend(cfg, log)
	if err != nil {
		return err
	}
	closers = append(closers, b.close)
	store, err := openStore(cfg, b, opts.AcceptStoreRollback, log)
	if err != nil {
		return err
	}
	closers = append(closers, store.Close)
	var repl *replication
	if cfg.HA.Enabled() {
		if repl, err = openReplica(cfg, store, log); err != nil {
			return err
		}
	}
	c, err := openCore(cfg, b, store, repl, log)
	if c.journal != nil {
		closers = append(closers, c.journal.Close)
	}
	if err != nil {
		return err
	}
	c.prom.Build(opts.build())
	repl.watch(c.prom)
	if b.replayFIFO != nil && b.clockInfo != nil {
		c.fifo = &fifoReport{store: store, started: func() time.Time { return b.clockInfo().Started }, replay: b.replayFIFO,
			log: log.With("component", "demo"), done: opts.fifoDone}
	}
	srv, ln, sv, err := newHTTPServer(cfg, opts.Listener, c, store, b, repl, log)
	if err != nil {
		return err
	}
	if opts.Reload != nil && opts.Reloaded != nil {
		r := &reloader{running: cfg, load: opts.Reload, level: opts.LogLevel, srv: sv, log: log.With("component", "reload"),
			build: func(cfg Config) (http.Handler, http.Handler, *tls.Config, error) {
				return buildServed(cfg, c, store, b, repl, log, *sv.api.Load())
			}, done: opts.reloadDone}
		rctx, stopReload := context.WithCancel(ctx)
		defer stopReload()
		go r.run(rctx, opts.Reloaded)
	}
	log.Info("colocd serving", "version", opts.Version, "addr", ln.Addr().String(), "tls", cfg.TLS.CertFile != "",
		"backend", cfg.Backend, "seed", b.seed, "data_dir", cfg.DataDir, "mode", cfg.Admission.Mode,
		"preferences_restored", c.restored, "profiles_restored", c.profilesRestored, "kinds", len(c.learner.Kinds()), "limits", c.limits,
		"replicated", repl != nil)
	return run(ctx, cfg, b, c, srv, sv.fresh, ln, opts.Systemd, repl, log)
}

// openStore opens the job store of data_dir; with the simulator it checks
// that the store and the simulator's log describe the same history.
func openStore(cfg Config, b backend, acceptRollback bool, log *slog.Logger) (*queue.Store, error) {
	opts := queue.Options{
		Timeout: 5 * time.Second, Now: b.clock.Now, Logger: log.With("component", "store"),
		AcceptMetaFallback: acceptRollback, Reserve: uint64(cfg.DataDirReserveBytes),
	}
	if cfg.HA.Enabled() { // every append to the log is a quorum round: larger groups
		opts.CommitsInFlight, opts.GroupWait = ha.StoreInFlight, ha.StoreGroupWait
	}
	if b.sim == nil { // the wall clock: time runs on the monotonic one
		origin := time.Now()
		opts.Elapsed = func() time.Duration { return time.Since(origin) }
	}
	store, err := queue.Open(StorePath(cfg), opts)
	if err != nil {
		var me *queue.MetaError
		if errors.As(err, &me) && !acceptRollback {
			return nil, fmt.Errorf("open store: %w (to open it anyway at the older transaction, losing the newer one, start once with --accept-store-rollback)", err)
		}
		return nil, fmt.Errorf("open store: %w", err)
	}
	if b.sim != nil {
		submitted, err := store.Submitted()
		if err != nil {
			store.Close()
			return nil, fmt.Errorf("open store: %w", err)
		}
		if err := b.sim.CheckStore(submitted, store.Path()); err != nil {
			store.Close()
			return nil, err
		}
	}
	return store, nil
}

// core is what Serve builds over the store: the learner and the profile
// model (restored), the journal, the Prometheus series and the engine.
type core struct {
	learner                    *bandit.Learner
	restored, profilesRestored bool
	journal                    *journal.Journal
	prom                       *telemetry.Metrics
	limits                     goodness.Limits
	eng                        *engine.Engine
	fifo                       *fifoReport // the simulator demo's comparison with FIFO; nil on YARN
}

// openCore builds the core; the journal, when set, must be closed even on
// error.
func openCore(cfg Config, b backend, store *queue.Store, repl *replication, log *slog.Logger) (c core, err error) {
	bcfg, err := cfg.Learning.BanditConfig()
	if err != nil {
		return c, err
	}
	c.prom = telemetry.New(prometheus.NewRegistry(), store)
	c.learner = bandit.New(bcfg)
	if c.restored, err = restoreOrQuarantine(store, c.prom, repl, log, func() (bool, error) {
		return engine.RestoreLearner(store, c.learner, bcfg)
	}); err != nil {
		return c, err
	}
	eo, err := cfg.EngineOptions()
	if err != nil {
		return c, err
	}
	profiles := profile.New(eo.Profile)
	if c.profilesRestored, err = restoreOrQuarantine(store, c.prom, repl, log, func() (bool, error) {
		return engine.RestoreProfiles(store, profiles)
	}); err != nil {
		return c, err
	}
	if c.journal, err = journal.Open(filepath.Join(cfg.DataDir, "journal"), cfg.Journal.MaxDecisions, cfg.Journal.MaxGoodness); err != nil {
		return c, fmt.Errorf("open journal: %w", err)
	}
	if b.usage != nil {
		b.usage.SetUnmatched(c.prom.UnmatchedHosts)
	}
	c.limits = cfg.Goodness.limits(b.limits)
	eo.Store, eo.Learner, eo.Profiles, eo.Cluster, eo.Metrics, eo.Clock = store, c.learner, profiles, b.cluster, b.metrics, b.clock
	if b.parts != nil {
		eo.ContainerUsage = b.parts
	}
	if b.placement != nil { // learning.placement influx: the tick reads which kinds ran where from it
		if eo.Placement, err = engine.NewPlacer(b.placement, cfg.Learning.PlacementConfig()); err != nil {
			return c, err
		}
	}
	eo.Kinds = b.kinds
	eo.Journal, eo.Prom, eo.Rand = c.journal, c.prom, mrand.New(mrand.NewPCG(b.seed, b.seed^0x5851f42d4c957f2d))
	// The backoff's jitter: a stream of its own from the logged seed, so
	// that a backoff never shifts the admission sampler's draws.
	eo.BackoffRand = mrand.New(mrand.NewPCG(b.seed^0x9e3779b97f4a7c15, b.seed))
	eo.Logger, eo.Limits, eo.StallAfter = log.With("component", "engine"), c.limits, stallBound(cfg)
	eo.ReferenceVCores, eo.NodeLimits = cfg.Goodness.referenceVCores(b.refVCores), cfg.Goodness.nodeLimits(c.limits, engine.LimitsByNode(b.nodeLimits))
	eo.SimulatedClock = b.clockInfo != nil
	eo.DependencyOf = dependencyOf
	if repl != nil {
		eo.Fence = repl
	}
	c.eng, err = engine.New(eo)
	if err == nil {
		c.prom.WatchQueues(c.eng)                  // colocd_queue_* at scrape time
		c.prom.WatchDegraded(degradedSince(c.eng)) // colocd_dependency_degraded*
		c.prom.WatchPending(store)                 // colocd_pending_jobs{queue,kind}, the oldest's age
		c.prom.WatchDataDir(dataDirSpace(cfg))     // colocd_data_dir_{free,reserve}_bytes
		c.prom.WatchTicket(b.ticketEnd)            // colocd_kerberos_ticket_expiry_timestamp_seconds
		c.prom.ClientCertExpiry(b.certEnd)         // colocd_yarn_client_certificate_expiry_timestamp_seconds
		b.outbound.set(c.prom)                     // colocd_outbound_request_duration_seconds
	}
	return c, err
}

// restoreOrQuarantine restores a learned model; a stored state that does not
// restore is quarantined (the store logs it at ERROR) and counted in
// colocd_learned_state_quarantined_total, and the daemon starts with that
// model fresh rather than not at all. A replica leaves the quarantine to
// the leader, which restores the state again when its term begins
// (engine.Resume): a follower writes nothing.
func restoreOrQuarantine(store *queue.Store, prom *telemetry.Metrics, repl *replication, log *slog.Logger, restore func() (bool, error)) (bool, error) {
	if repl != nil {
		restored, err := restore()
		var lse *engine.LearnedStateError
		switch {
		case errors.As(err, &lse):
			log.Warn("learned state does not restore; the leader quarantines it when its term begins", "section", lse.Section, "err", err)
			return false, nil
		case errors.Is(err, ha.ErrNotLeader):
			log.Info("learned state in the layout before rows: the leader migrates it when its term begins", "err", err)
			return false, nil
		}
		return restored, err
	}
	restored, quarantined, err := engine.RestoreOrQuarantine(store, restore)
	if quarantined != nil {
		prom.LearnedStateQuarantined(string(quarantined.Section))
	}
	return restored, err
}

// newHTTPServer builds the API's server on listener ln (nil: listen on
// cfg.Listen).
//
// Hostile or broken clients hold a connection for a bounded time: a whole
// request must arrive within api.read_timeout (headers within 10 s of it)
// and its response leave within api.write_timeout; the API closes the
// connection rather than read a body it did not take. At most
// api.max_connections are open at once; more wait in the backlog. When all
// are open, the idle ones (keep-alive connections between requests, and
// connections silent for 5 s) are closed to make room: clients that only
// hold a connection cannot keep others out.
func newHTTPServer(cfg Config, ln net.Listener, c core, store *queue.Store, b backend, repl *replication, log *slog.Logger) (*http.Server, net.Listener, *served, error) {
	srv0 := &served{fresh: newFreshConns()}
	apiH, h, tlsCfg, err := buildServed(cfg, c, store, b, repl, log, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	srv0.handler.Store(&h)
	srv0.api.Store(&apiH)
	var serverTLS *tls.Config
	if tlsCfg != nil {
		srv0.tls.Store(tlsCfg)
		serverTLS = srv0.serverTLS()
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, nil, nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
		}
	}
	var srv *http.Server
	ln = newLimitListener(ln, cfg.API.MaxConnections, func() {
		srv.SetKeepAlivesEnabled(false) // closes the idle connections
		srv.SetKeepAlivesEnabled(true)
	})
	srv = &http.Server{
		Handler:           srv0,
		TLSConfig:         serverTLS,
		ReadHeaderTimeout: min(10*time.Second, cfg.API.ReadTimeout),
		ReadTimeout:       cfg.API.ReadTimeout,
		WriteTimeout:      cfg.API.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnState:         srv0.fresh.track,
	}
	return srv, ln, srv0, nil
}

// buildServed builds the API's handler (apiH: api.New's; h: what is
// served, apiH behind the replica's forwarding when replicated) and the
// server's TLS configuration (nil: plain HTTP) from cfg: at start, and
// again at each reload, when base is the API handler serving until then
// (api.WithIdentity: only its identity settings are new).
func buildServed(cfg Config, c core, store *queue.Store, b backend, repl *replication, log *slog.Logger, base http.Handler) (apiH, h http.Handler, _ *tls.Config, _ error) {
	deps := api.Deps{
		Store: store, Learner: c.learner, Journal: c.journal, Controller: c.eng, Tokens: apiTokens(cfg.Tokens),
		Profiles: c.eng.Profiles(), Queues: c.eng, Cluster: c.eng, Limits: c.limits, MaxKinds: cfg.API.MaxKinds, Writes: c.eng,
		Metrics: c.prom, Now: b.clock.Now, MaxBodyBytes: cfg.API.MaxBodyBytes, Logger: log.With("component", "api"),
		PublicMetrics: cfg.API.PublicMetrics, Clock: b.clockInfo, Degraded: wireDegraded(c.eng), FIFO: c.fifo.current,
	}
	if err := identityDeps(cfg, &deps, log); err != nil {
		return nil, nil, nil, err
	}
	if repl != nil {
		deps.Replica = repl
	}
	var err error
	if base != nil {
		apiH, err = api.WithIdentity(base, deps)
	} else {
		apiH, err = api.New(deps)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("build API: %w", err)
	}
	h = apiH
	if repl != nil {
		t, err := forwardTransport(cfg)
		if err != nil {
			return nil, nil, nil, err
		}
		h = api.NewReplicated(apiH, repl, repl.id, t, cfg.API.MaxBodyBytes)
	}
	tlsCfg, err := loadServerTLS(cfg.TLS)
	if err != nil {
		return nil, nil, nil, err
	}
	return apiH, h, tlsCfg, nil
}

// run serves HTTP on ln and runs the loop (replicated: the replica, and
// the loop in each term it leads) until ctx is cancelled or either fails,
// then shuts both down within cfg.ShutdownTimeout. systemd watches the
// readiness from when both started until shutdown begins.
func run(ctx context.Context, cfg Config, b backend, c core, srv *http.Server, fresh *freshConns, ln net.Listener,
	systemd *systemd, repl *replication, log *slog.Logger) error {
	eng := c.eng
	srvErr := serveHTTP(srv, ln)

	// The loop: passes run on passCtx, which outlives ctx by up to the
	// shutdown timeout so that the pass in flight can finish its transaction.
	passCtx, cancelPass := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelPass()
	stop := make(chan struct{})
	loopDone := make(chan error, 1)
	mkLoop := func() (*engine.Loop, error) { return newServeLoop(eng, b, cfg, log.With("component", "loop")) }
	ready := eng.Ready
	if repl == nil {
		l, err := mkLoop()
		if err != nil {
			srv.Close()
			return err
		}
		go func() { loopDone <- l.Run(passCtx, stop) }()
	} else {
		if _, err := mkLoop(); err != nil { // the config's schedules, checked before any term
			srv.Close()
			return err
		}
		go func() { loopDone <- repl.run(passCtx, stop, eng, mkLoop, log) }()
		ready = repl.ready(eng)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchersDone := startWatchers(watchCtx, cfg, b, c, ready, systemd, ln.Addr().String(), log)

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	case runErr = <-srvErr:
		log.Error("HTTP server failed", "err", runErr)
	case runErr = <-loopDone:
		log.Error("loop failed", "err", runErr)
		loopDone <- nil
	}
	stopWatch() // no READY=1 or WATCHDOG=1 after STOPPING=1
	watchersDone()
	systemd.stopping(log)
	shCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := shutdownHTTP(shCtx, srv, fresh); err != nil {
		log.Warn("HTTP shutdown", "err", err)
		srv.Close()
	}
	close(stop)
	select {
	case <-loopDone:
	case <-shCtx.Done():
		cancelPass()
		<-loopDone
		if runErr == nil {
			runErr = fmt.Errorf("shutdown: the pass in flight did not finish within shutdown_timeout %v", cfg.ShutdownTimeout)
		}
	}
	if err := b.checkpoint(); err != nil {
		log.Warn("simulator checkpoint", "err", err)
	}
	if runErr == nil {
		log.Info("stopped")
	}
	return runErr
}

// serveHTTP serves srv on ln (TLS when srv has a TLS config) in a
// goroutine; the channel gets its error, nil after a shutdown.
func serveHTTP(srv *http.Server, ln net.Listener) <-chan error {
	srvErr := make(chan error, 1)
	go func() {
		var err error
		if srv.TLSConfig != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		srvErr <- err
	}()
	return srvErr
}

// startWatchers starts what runs beside the loop until ctx ends: systemd's
// readiness and watchdog, the probe of the dependencies at start, and the
// simulator demo's comparison with FIFO. wait returns once all three have
// stopped.
func startWatchers(ctx context.Context, cfg Config, b backend, c core, ready func(context.Context) error,
	systemd *systemd, addr string, log *slog.Logger) (wait func()) {
	watched, probed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		systemd.watch(ctx, ready, degradedText(c.eng), addr, log.With("component", "systemd"))
	}()
	go func() {
		defer close(probed)
		probeAtStart(ctx, c.eng, b, cfg.Yarn.Timeout, log.With("component", "probe"))
	}()
	demoDone := make(chan struct{})
	go func() {
		defer close(demoDone)
		if c.fifo != nil {
			c.fifo.run(ctx)
		}
	}()
	return func() {
		<-watched
		<-probed
		<-demoDone
	}
}

// stallBound is how long /readyz tolerates the loop completing no
// iteration (engine.Options.StallAfter, wall time). The loop starts an
// iteration at least every admission.tick of its clock, and an iteration is
// expected to end within shutdown_timeout (Serve waits that long for the
// pass in flight at shutdown); three ticks leave room for a late timer and
// an iteration that overruns its tick. A simulator slower than wall time
// (sim.speed < 1) stretches the tick.
func stallBound(cfg Config) time.Duration {
	tick := cfg.Admission.Tick
	if cfg.Backend == backendSim && cfg.Sim.Speed < 1 {
		tick = time.Duration(float64(tick) / cfg.Sim.Speed)
	}
	return 3*tick + cfg.ShutdownTimeout
}

// referenceVCores is the configured reference node's vcores, falling back
// to the backend's own (sim: the workload's reference node) at zero.
func (g goodnessConfig) referenceVCores(def int64) int64 {
	if g.ReferenceVCores > 0 {
		return g.ReferenceVCores
	}
	return def
}

// nodeLimits is engine.Options.NodeLimits: the node groups' maxima over
// the reference's ref (a field left at zero is ref's), the first group
// whose hosts match a node's name; a node no group matches gets what
// backend gives (the simulator's own node groups), if anything. nil when
// neither has any. The patterns were validated with the config. Each
// node's answer is kept: the learning tick asks for every node every tick,
// and the groups do not change while the daemon runs.
func (g goodnessConfig) nodeLimits(ref goodness.Limits, backend func(string) (goodness.Limits, bool)) func(string) (goodness.Limits, bool) {
	if len(g.NodeGroups) == 0 {
		return backend
	}
	type group struct {
		re  *regexp.Regexp
		lim goodness.Limits
	}
	groups := make([]group, 0, len(g.NodeGroups))
	for _, ng := range g.NodeGroups {
		re, err := hostsPattern(ng.Hosts)
		if err != nil {
			continue // refused by validate
		}
		lim := goodnessConfig{DiskReadMBps: ng.DiskReadMBps, DiskWriteMBps: ng.DiskWriteMBps, NetRecvMBps: ng.NetRecvMBps, NetSentMBps: ng.NetSentMBps}.limits(ref)
		groups = append(groups, group{re, lim})
	}
	type answer struct {
		lim goodness.Limits
		ok  bool
	}
	var (
		mu   sync.Mutex
		seen = map[string]answer{}
	)
	return func(node string) (goodness.Limits, bool) {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := seen[node]; ok {
			return a.lim, a.ok
		}
		a := answer{}
		for _, gr := range groups {
			if gr.re.MatchString(node) {
				a = answer{gr.lim, true}
				break
			}
		}
		if !a.ok && backend != nil {
			a.lim, a.ok = backend(node)
		}
		seen[node] = a
		return a.lim, a.ok
	}
}

// limits is the configured goodness maxima in bytes/s, each falling back
// to the backend's own where the config leaves it at zero.
func (g goodnessConfig) limits(def goodness.Limits) goodness.Limits {
	pick := func(mbps, d float64) float64 {
		if mbps > 0 {
			return mbps * 1e6
		}
		return d
	}
	return goodness.Limits{
		DiskRead: pick(g.DiskReadMBps, def.DiskRead), DiskWrite: pick(g.DiskWriteMBps, def.DiskWrite),
		NetRecv: pick(g.NetRecvMBps, def.NetRecv), NetSent: pick(g.NetSentMBps, def.NetSent),
	}
}

func apiTokens(ts []tokenConfig) []api.Token {
	out := make([]api.Token, 0, len(ts))
	for _, t := range ts {
		out = append(out, api.Token{Secret: t.Token, User: t.User, Role: t.Role, Expires: t.Expires})
	}
	return out
}

var (
	_ api.Controller    = (*engine.Engine)(nil)
	_ api.WriteRecorder = (*engine.Engine)(nil)
)
