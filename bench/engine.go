package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
)

// everySchedule is engine.Schedule for a fixed virtual interval.
type everySchedule time.Duration

func (e everySchedule) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

// runEngine plays ra or ra-warm: colocd's store, pipeline, bandit and
// engine.Engine on simcluster.Cluster, driven by daemon's own Loop — the
// loop `colocd serve` runs — stepped in virtual time. The driver plays the
// two parts `serve` plays around the loop: the API (arriving jobs are
// prepared and submitted to the store, which would kick the loop) and the
// clock (the simulator advances to the loop's due time, or to the first job
// arrival or finish before it, which would kick it in `serve`). The daemon's
// periodic admission tick is replayed only when RunConfig.AdmissionTick is
// set: between the points above nothing an admission pass reads changes (in
// batch or Poisson arrivals without deadlines), so it gives the same runs at
// a fraction of the cost.
func runEngine(ctx context.Context, rc RunConfig, cfg daemon.Config, jobs []sim.JobSpec, warm *bandit.Snapshot, warmProfiles *profile.Snapshot, truth profile.Profiles) (res Result, err error) {
	s, err := rc.Workload.NewSim(rc.simOptions())
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", rc.Policy, err)
	}
	clk := simcluster.Clock{Sim: s}
	var sched engine.Schedule = everySchedule(rc.LearnInterval)
	if rc.LearnInterval <= 0 {
		if sched, err = engine.ParseSchedule(cfg.Learning.Schedule); err != nil {
			return Result{}, fmt.Errorf("%w: learning.schedule: %w", errInvalid, err)
		}
	}
	base := rc.Dir
	if base == "" {
		base = tempBase()
	}
	dir, err := os.MkdirTemp(base, "colocd-bench-*")
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", rc.Policy, err)
	}
	defer func() {
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = fmt.Errorf("run %s: remove store: %w", rc.Policy, rmErr)
		}
	}()
	var seed [32]byte
	for i := range 8 {
		seed[i] = byte(rc.Seed >> (8 * i))
	}
	store, err := queue.Open(filepath.Join(dir, "colocd.db"), queue.Options{
		NoSync: true, Now: clk.Now, Entropy: rand.NewChaCha8(seed),
	})
	if err != nil {
		return Result{}, fmt.Errorf("run %s: open store: %w", rc.Policy, err)
	}
	defer func() {
		if cErr := store.Close(); cErr != nil && err == nil {
			err = fmt.Errorf("run %s: close store: %w", rc.Policy, cErr)
		}
	}()

	es, err := newEngineSetup(rc, cfg, s, clk, store, sched, warm, warmProfiles, truth, &res)
	if err != nil {
		return Result{}, err
	}
	seqOf, err := drive(ctx, rc, s, store, es, jobs, &res)
	if err != nil {
		return Result{}, err
	}
	snap := es.learner.Snapshot()
	res.Preferences = &snap
	ps := es.profiles.Snapshot()
	res.Profiles = &ps
	res.Updates = snap.Observations - es.startObs
	err = measure(&res, rc.Workload, s, jobs, func(id string) (int, bool) {
		i, ok := seqOf[id]
		return i, ok
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// engineSetup is what runEngine runs: the learner (warm or set up by
// rc.Setup), the profile model, the engine over the simulator and its loop.
type engineSetup struct {
	learner  *bandit.Learner
	profiles *profile.Model
	e        *engine.Engine
	loop     *engine.Loop
	startObs int64 // the learner's observations before the run
}

// newEngineSetup builds what runEngine runs over the simulator s and store.
func newEngineSetup(rc RunConfig, cfg daemon.Config, s *sim.Sim, clk simcluster.Clock, store *queue.Store, sched engine.Schedule, warm *bandit.Snapshot, warmProfiles *profile.Snapshot, truth profile.Profiles, res *Result) (es engineSetup, err error) {
	bcfg, err := cfg.Learning.BanditConfig()
	if err != nil {
		return es, fmt.Errorf("%w: %w", errInvalid, err)
	}
	learner := bandit.New(bcfg)
	es.learner = learner
	if warm != nil {
		w := *warm
		w.Config = bcfg // the configured learning parameters win, as in engine.RestoreLearner
		if err := learner.Restore(w); err != nil {
			return es, fmt.Errorf("run %s: restore warm preferences: %w", rc.Policy, err)
		}
		es.startObs = w.Observations
		ws := learner.Snapshot()
		res.Warm = &ws
	}
	if rc.Setup != nil {
		rc.Setup(learner)
		es.startObs = learner.Snapshot().Observations
	}
	eo, err := cfg.EngineOptions()
	if err != nil {
		return es, fmt.Errorf("%w: %w", errInvalid, err)
	}
	profiles := profile.New(eo.Profile)
	es.profiles = profiles
	if warmProfiles != nil {
		if err := profiles.Restore(*warmProfiles); err != nil {
			return es, fmt.Errorf("run %s: restore warm profiles: %w", rc.Policy, err)
		}
	}
	cluster := simcluster.New(simcluster.DirectExec(s), nil)
	frozen := sim.DefaultStart
	eo.Store, eo.Learner, eo.Profiles, eo.ScoreProfiles = store, learner, profiles, truth
	eo.Cluster, eo.Metrics, eo.Clock = cluster, cluster, clk
	if rc.daemonConfig().Learning.ContainerUsage {
		eo.ContainerUsage = cluster
	}
	eo.Rand = rand.New(rand.NewPCG(rc.Seed, 0x5851f42d4c957f2d))
	eo.Wall = func() time.Time { return frozen } // decision latency only; no wall clock here
	eo.Limits, eo.ReferenceVCores, eo.NodeLimits = cluster.Limits(), cluster.ReferenceVCores(), engine.LimitsByNode(cluster.NodeLimits())
	es.e, err = engine.New(eo)
	if err != nil {
		return es, fmt.Errorf("%w: %w", errInvalid, err)
	}
	es.loop, err = engine.NewLoop(es.e, engine.LoopOptions{Tick: rc.AdmissionTick, Learn: sched})
	if err != nil {
		return es, fmt.Errorf("%w: %w", errInvalid, err)
	}
	return es, nil
}

// drive plays the jobs' arrivals and the simulator's clock around the
// loop until every job has finished, recording the admissions in res; it
// returns each stored job id's position in jobs.
func drive(ctx context.Context, rc RunConfig, s *sim.Sim, store *queue.Store, es engineSetup, jobs []sim.JobSpec, res *Result) (map[string]int, error) {
	e, loop, learner := es.e, es.loop, es.learner
	if err := loop.Start(ctx); err != nil {
		return nil, fmt.Errorf("run %s: reconcile: %w", rc.Policy, err)
	}
	start := s.Now()
	seqOf := map[string]int{} // store job id → position in jobs
	kindOf := map[string]string{}
	next, finished := 0, 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		now := s.Now()
		for next < len(jobs) && !start.Add(jobs[next].Arrival).After(now) { // the API
			j, err := submission(rc.Workload, jobs[next])
			if err != nil {
				return nil, fmt.Errorf("run %s: job %d: %w", rc.Policy, next, err)
			}
			if err := e.Prepare(&j); err != nil {
				return nil, fmt.Errorf("run %s: job %d: %w", rc.Policy, next, err)
			}
			got, _, err := store.Submit(ctx, j)
			if err != nil {
				return nil, fmt.Errorf("run %s: submit job %d: %w", rc.Policy, next, err)
			}
			e.AddKind(got.Kind)
			seqOf[got.ID], kindOf[got.ID] = jobs[next].Seq, got.Kind
			next++
		}
		it, err := loop.Step(ctx)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", rc.Policy, err)
		}
		if it.LearnErr != nil {
			return nil, fmt.Errorf("run %s: learn: %w", rc.Policy, it.LearnErr)
		}
		if it.Learned && rc.Observe != nil {
			rc.Observe(learnEvent{At: it.At.Sub(start), Report: it.Learn, Learner: learner, Profiles: e.Profiles()})
		}
		ar := it.Admit
		if len(ar.Rejected)+len(ar.Requeued)+len(ar.Ambiguous) > 0 {
			return nil, fmt.Errorf("run %s: admission pass at %v: rejected %v, requeued %v, ambiguous %v (%s)",
				rc.Policy, now.Sub(start), ar.Rejected, ar.Requeued, ar.Ambiguous, ar.Stopped)
		}
		for _, id := range ar.Admitted {
			res.Admissions = append(res.Admissions, admission{At: it.At.Sub(start), Seq: seqOf[id], Kind: kindOf[id]})
		}
		res.Decisions += len(ar.Admitted)
		counts, err := store.Counts()
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", rc.Policy, err)
		}
		finished = counts[queue.StateSucceeded] + counts[queue.StateFailed] + counts[queue.StateKilled]
		if finished == len(jobs) {
			break
		}
		_, running := s.NextEvent()
		if !running && next == len(jobs) && len(ar.Admitted) == 0 && counts[queue.StateAdmitted] == 0 {
			return nil, fmt.Errorf("run %s: %w: %d jobs pending (%s)", rc.Policy, errStuck, len(jobs)-finished, ar.Stopped)
		}
		until := it.Due
		if next < len(jobs) {
			until = earliest(until, start.Add(jobs[next].Arrival))
		}
		advanceUntil(s, until) // stops early at a finish, which kicks the loop in serve
	}
	return seqOf, nil
}

// submission is job js as the API receives it: its kind, user and queue;
// its resources when it asks for another container count than its kind's
// (what YARN would see); and its input's scale in the simulator's
// submission spec (simcluster.SubmitSpec), which the engine never reads.
func submission(w *sim.Workload, js sim.JobSpec) (queue.Job, error) {
	j := queue.Job{Kind: js.Kind, User: cmp.Or(js.User, sim.DefaultUser), Queue: cmp.Or(js.Queue, sim.DefaultQueue)}
	if js.Containers > 0 {
		k, _ := w.Kind(js.Kind)
		j.Resources = queue.Resources{Containers: js.Containers, MemoryMB: k.Container.MemoryMB, VCores: k.Container.VCores}
	}
	if js.Scale > 0 {
		b, err := json.Marshal(simcluster.SubmitSpec{Scale: js.Scale})
		if err != nil {
			return queue.Job{}, err
		}
		j.Submit = b
	}
	return j, nil
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// tempBase is where runs keep their stores: memory-backed /dev/shm when it
// is usable, the system temporary directory otherwise. bbolt syncs the file
// when it grows even with queue.Options.NoSync (it has no way to turn
// that off through queue.Options), which on a disk costs more than the
// whole simulation.
func tempBase() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", ".colocd-probe-*"); err == nil {
			os.Remove(d)
			return "/dev/shm"
		}
	}
	return os.TempDir()
}
