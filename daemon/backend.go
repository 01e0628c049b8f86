package daemon

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/metricsource"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/telemetry"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
)

// openBackend opens the configured cluster side.
func openBackend(cfg Config, log *slog.Logger) (backend, error) {
	switch cfg.Backend {
	case backendSim:
		return openSimBackend(cfg, log, time.Now)
	case backendYarn:
		return openYarnBackend(cfg, log)
	}
	return backend{}, cfgErr("backend", "must be sim or yarn, got %q", cfg.Backend)
}

// backend is the cluster side of the daemon, built from the config.
type backend struct {
	cluster   engine.Cluster
	metrics   engine.UsageSource
	parts     engine.ContainerUsageSource // each application's own usage (learning.container_usage); nil: none
	placement engine.PlacementSource      // learning.placement influx; nil: the cluster syncs say
	usage     *metricsource.Source        // the metrics read on YARN (its unmatched-host counts); nil on the simulator
	clock     engine.Clock
	wake      <-chan struct{} // the cluster's events; nil: none
	kinds     []string
	limits    goodness.Limits // the backend's own (sim: the workload node); zero: none
	// refVCores and nodeLimits describe nodes of other hardware than the
	// reference's (engine.Options.ReferenceVCores and NodeLimits; sim: the
	// workload's node groups); zero and nil: one node type.
	refVCores  int64
	nodeLimits map[string]goodness.Limits
	seed       uint64
	checkpoint func() error
	close      func() error
	sim        *simcluster.State // the simulator's durable state; nil on YARN
	// clockInfo describes a simulated clock for GET /v1/clock; nil: the
	// wall clock.
	clockInfo func() v1.Clock
	// replayFIFO simulates arrivals again under FIFO on a fresh simulator
	// of the workload and seed (the demo's comparison); nil on YARN.
	replayFIFO func(start time.Time, arrivals []sim.Arrival) (sim.FIFOResult, error)
	// outbound times the backend's requests once the metrics exist; nil
	// on the simulator.
	outbound *outboundMetrics
	// ticketEnd is when colocd's Kerberos TGT for YARN expires; nil
	// without Kerberos.
	ticketEnd func() (time.Time, bool)
	// certEnd is when the client certificate colocd presents to YARN
	// (yarn.cert_file, read at start) expires; zero without one.
	certEnd time.Time
}

func openSimBackend(cfg Config, log *slog.Logger, wallNow func() time.Time) (backend, error) {
	raw, err := os.ReadFile(cfg.Sim.Workload)
	if err != nil {
		return backend{}, cfgErr("sim.workload", "%v", err)
	}
	wl, err := sim.ParseWorkload(raw)
	if err != nil {
		return backend{}, cfgErr("sim.workload", "%s: %v", cfg.Sim.Workload, err)
	}
	sum := sha256.Sum256(raw)
	seed := cfg.Sim.Seed
	if seed == 0 {
		seed = randomSeed()
	}
	newSim := func(seed uint64, start time.Time) (*sim.Sim, error) {
		return wl.NewSim(sim.Options{Seed: seed, Start: start, MetricsInterval: cfg.Sim.MetricsInterval,
			Retention: simRetention, Pressure: cfg.Sim.Pressure,
			ContainerMetrics: cfg.Learning.ContainerUsage})
	}
	state, s, err := simcluster.Open(filepath.Join(cfg.DataDir, "sim"), hex.EncodeToString(sum[:]), seed,
		wallNow().Truncate(time.Second), newSim)
	if err != nil {
		return backend{}, err
	}
	if cfg.Sim.Seed != 0 && cfg.Sim.Seed != state.Seed {
		log.Warn("sim.seed differs from the seed this data_dir was started with; keeping the stored one",
			"config", cfg.Sim.Seed, "stored", state.Seed)
	}
	log.Info("simulator ready", "workload", cfg.Sim.Workload, "seed", state.Seed, "speed", cfg.Sim.Speed,
		"replayed", state.Replayed, "virtual_now", s.Now())
	rt := sim.NewRealtime(s, cfg.Sim.Speed, wallNow)
	wake := make(chan struct{}, 1)
	rt.OnEvent(func(sim.Event) {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	if err := rt.Start(ctx); err != nil {
		cancel()
		state.Close()
		return backend{}, fmt.Errorf("start simulator: %w", err)
	}
	c := simcluster.New(rt.Do, state)
	clockInfo := simClock(state, rt, cfg.Sim.Speed, wallNow, log)
	var kinds []string
	for _, k := range wl.Kinds {
		kinds = append(kinds, k.Name)
	}
	var parts engine.ContainerUsageSource
	if cfg.Learning.ContainerUsage {
		parts = c
	}
	return backend{
		cluster: c, metrics: c, parts: parts, clock: rt, wake: wake, kinds: kinds, limits: c.Limits(), seed: state.Seed,
		refVCores: c.ReferenceVCores(), nodeLimits: c.NodeLimits(),
		checkpoint: c.Checkpoint, sim: state, clockInfo: clockInfo,
		replayFIFO: func(start time.Time, arrivals []sim.Arrival) (sim.FIFOResult, error) {
			s, err := newSim(state.Seed, start)
			if err != nil {
				return sim.FIFOResult{}, err
			}
			return sim.ReplayFIFO(s, arrivals)
		},
		close: func() error {
			rt.Stop()
			cancel()
			return state.Close()
		},
	}, nil
}

// simClock records this start of the simulator's clock and describes the
// clock for GET /v1/clock: virtual time at speed × the wall clock, with
// every recorded start.
func simClock(state *simcluster.State, rt *sim.Realtime, speed float64, wallNow func() time.Time, log *slog.Logger) func() v1.Clock {
	started, wallStarted := rt.Now(), wallNow()
	recorded, err := state.AddRun(simcluster.Run{From: started, WallFrom: wallStarted, Speed: speed}, v1.MaxClockRuns)
	if err != nil {
		log.Warn("recording the simulator's start (wall-clock times of earlier runs may be shown wrong)", "err", err)
	}
	runs := make([]v1.ClockRun, len(recorded))
	for i, r := range recorded {
		runs[i] = v1.ClockRun{From: r.From, WallFrom: r.WallFrom, Speed: r.Speed}
	}
	return func() v1.Clock {
		return v1.Clock{Simulated: true, Now: rt.Now(), WallNow: wallNow(), Speed: speed,
			Started: started, WallStarted: wallStarted, Runs: runs}
	}
}

// simRetention keeps enough simulated metrics for learning and the API.
const simRetention = 24 * time.Hour

// certEnd is when c's client certificate expires; zero without one.
func certEnd(c *yarnclient.Client) time.Time {
	if leaf := c.ClientCertificate(); leaf != nil {
		return leaf.NotAfter
	}
	return time.Time{}
}

func openYarnBackend(cfg Config, log *slog.Logger) (backend, error) {
	obs := &outboundMetrics{}
	ycfg := cfg.Yarn.ClientConfig(log)
	ycfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return obs.wrap(telemetry.ServiceYARN, rt) }
	yc, err := yarnclient.New(ycfg)
	if err != nil {
		return backend{}, cfgErr("yarn", "%v", err)
	}
	var ticketEnd func() (time.Time, bool)
	if k, ok := yc.Auth().(*kerberos.Auth); ok {
		ticketEnd = func() (time.Time, bool) {
			st := k.Status()
			return st.TGTEnd, st.LoggedIn
		}
	}
	src, closeSrc, err := openUsage(cfg, log.With("component", "metrics"), obs)
	if err != nil {
		return backend{}, err
	}
	var placement engine.PlacementSource
	var col *collector.Collector // the influx section's reader for placement and container usage; nil: neither
	if cfg.Learning.Placement == placementInflux || cfg.Learning.ContainerUsage {
		// Its own reader of the influx section, whatever metrics.source
		// reads usage from; host names mapped as the usage source maps them.
		if col, err = openInflux(cfg.Influx, obs); err != nil {
			closeSrc()
			return backend{}, err
		}
		closeUsage := closeSrc
		closeSrc = func() { col.Close(); closeUsage() }
	}
	var parts engine.ContainerUsageSource
	if cfg.Learning.ContainerUsage {
		if parts, err = metricsource.NewContainers(col, cfg.Metrics.Hosts); err != nil {
			closeSrc()
			return backend{}, cfgErr("metrics.hosts", "%v", err)
		}
		log.Info("learning reads each application's own CPU and disk from InfluxDB (the colocd-telegraf-yarn plugin's cgroup counters)")
	}
	if cfg.Learning.Placement == placementInflux {
		if placement, err = metricsource.NewPlacements(col, cfg.Metrics.Hosts, cfg.Learning.Foreign.ForeignConfig); err != nil {
			closeSrc()
			var fe *metricsource.FieldError
			if errors.As(err, &fe) && strings.HasPrefix(fe.Field, "foreign.") {
				return backend{}, sectionErr("learning", err)
			}
			return backend{}, cfgErr("metrics.hosts", "%v", err)
		}
		log.Info("learning reads placement from InfluxDB (the colocd-telegraf-yarn plugin's yarn_containers)",
			"tolerance", cfg.Learning.PlacementTolerance, "foreign", cfg.Learning.Foreign.Mode)
	}
	var opts []yarncluster.Option
	if cfg.Yarn.Submit == yarncluster.SubmitCommand {
		key, err := commandTagKey(cfg.DataDir)
		if err != nil {
			closeSrc()
			return backend{}, err
		}
		opts = append(opts, yarncluster.WithTagKey(key))
	}
	c := yarncluster.New(yc, cfg.Yarn, log.With("component", "yarn"), opts...)
	seed := randomSeed()
	return backend{
		cluster: c, metrics: src, usage: src, placement: placement, parts: parts, clock: engine.WallClock{}, seed: seed,
		outbound: obs, ticketEnd: ticketEnd, certEnd: certEnd(yc),
		checkpoint: func() error { return nil },
		close:      func() error { closeSrc(); return nil },
	}, nil
}

func randomSeed() uint64 {
	var b [8]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		return uint64(time.Now().UnixNano())
	}
	return binary.LittleEndian.Uint64(b[:]) | 1
}
