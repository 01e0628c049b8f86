package engine

import (
	"time"

	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// runtimes estimates each kind's solo runtime from what the profiles
// predict of its jobs' speed: every learning tick, each running job of
// colocd's is credited with the solo seconds of work the profiles predict
// it did (its containers' speed on each of its nodes, from the kinds that
// ran there, the slowest node setting the pace: a job's stages wait for
// their slowest part), and when it finishes, its kind's estimate moves to
// what it was credited, scaled to its whole runtime when the ticks saw
// only part of it. The estimate is consistent with the model: a job
// predicted to run at half speed for its whole life counts half its
// runtime. So a job's runtime inflation — its runtime over the solo time
// the model expected at its speeds — feeds back into the runtime the
// lookahead plans with, and a kind that runs slower than its usage shows
// (interference) gets a longer solo runtime. It lives in memory: after a
// restart the kinds' runtime history stands in until jobs finish again.
type runtimes struct {
	jobs  map[string]*jobRun
	kinds map[string]*kindRun
}

// jobRun is a running job's credit: the predicted solo seconds of work
// done over the tracked seconds.
type jobRun struct {
	kind          string
	solo, tracked float64
	at            time.Time // end of the last tick that credited it
}

// kindRun is a kind's solo runtime estimate (EWMA over its finished jobs,
// with α queue.historyAlpha) and how many jobs it rests on.
type kindRun struct {
	solo float64
	n    int
}

// runtimeAlpha weighs a finished job in its kind's estimate, as the
// runtime history does.
const runtimeAlpha = 0.3

func newRuntimes() *runtimes {
	return &runtimes{jobs: map[string]*jobRun{}, kinds: map[string]*kindRun{}}
}

// credit adds to job id (of kind) speed × dt seconds of solo work over dt
// seconds ending at end.
func (r *runtimes) credit(id, kind string, speed, dt float64, end time.Time) {
	j := r.jobs[id]
	if j == nil {
		j = &jobRun{kind: kind}
		r.jobs[id] = j
	}
	j.solo += speed * dt
	j.tracked += dt
	j.at = end
}

// finish folds job id, which succeeded after runtime, into its kind's
// estimate, and forgets it. A job no tick credited adds nothing.
func (r *runtimes) finish(id string, runtime time.Duration) {
	j := r.jobs[id]
	delete(r.jobs, id)
	if j == nil || j.tracked <= 0 || runtime <= 0 {
		return
	}
	solo := j.solo * max(runtime.Seconds()/j.tracked, 1)
	k := r.kinds[j.kind]
	if k == nil {
		r.kinds[j.kind] = &kindRun{solo: solo, n: 1}
		return
	}
	k.solo += runtimeAlpha * (solo - k.solo)
	k.n++
}

// drop forgets job id (it failed or was killed).
func (r *runtimes) drop(id string) { delete(r.jobs, id) }

// solo is kind's estimated solo runtime; false before a job of it finished.
func (r *runtimes) solo(kind string) (time.Duration, bool) {
	k := r.kinds[kind]
	if k == nil || k.n == 0 {
		return 0, false
	}
	return time.Duration(k.solo * float64(time.Second)), true
}

// done is the predicted solo seconds of work job id did up to its last
// credit, and when that was.
func (r *runtimes) done(id string) (float64, time.Time, bool) {
	j := r.jobs[id]
	if j == nil {
		return 0, time.Time{}, false
	}
	return j.solo, j.at, true
}

// creditRuntimes credits every job present in [from, to] on e.presence with its
// predicted speed: on each node, from the kinds that ran there (comps,
// time-weighted), at the profiles' means; the job's speed is its slowest
// node's; its time, the part of the window it was present.
func (e *Engine) creditRuntimes(comps map[string][]profile.KindCount, from, to time.Time) {
	if e.runtimes == nil {
		return
	}
	type acc struct {
		kind  string
		speed float64
		start time.Time
		end   time.Time
	}
	jobs := map[string]*acc{}
	var buf []float64
	for node, m := range e.presence {
		kc := comps[node]
		if len(kc) == 0 {
			continue
		}
		buf = profile.SpeedsOn(e.scoreSrc, kc, e.nodeSize[node], buf)
		for id, p := range m {
			start, end := p.since, to
			if start.Before(from) {
				start = from
			}
			if !p.goneAt.IsZero() && p.goneAt.Before(to) {
				end = p.goneAt
			}
			if !end.After(start) {
				continue
			}
			sp := 1.0
			for i, k := range kc {
				if k.Kind == p.kind {
					sp = buf[i]
				}
			}
			a := jobs[id]
			if a == nil {
				jobs[id] = &acc{kind: p.kind, speed: sp, start: start, end: end}
				continue
			}
			a.speed = min(a.speed, sp)
			if start.Before(a.start) {
				a.start = start
			}
			if end.After(a.end) {
				a.end = end
			}
		}
	}
	for id, a := range jobs {
		e.runtimes.credit(id, a.kind, a.speed, a.end.Sub(a.start).Seconds(), a.end)
	}
}

// finishRuntime folds finished job j into its kind's solo runtime when it
// succeeded (the runtime history counts those only), and forgets it.
// Without the lookahead there are no runtimes to keep.
func (e *Engine) finishRuntime(j queue.Job) {
	if e.runtimes == nil {
		return
	}
	if j.State != queue.StateSucceeded {
		e.runtimes.drop(j.ID)
		return
	}
	e.runtimes.finish(j.ID, jobRuntime(j))
}

// pace is job id's mean predicted speed so far (solo seconds per second)
// and whether it has one.
func (r *runtimes) pace(id string) (bool, float64) {
	j := r.jobs[id]
	if j == nil || j.tracked <= 0 {
		return false, 0
	}
	return true, j.solo / j.tracked
}
