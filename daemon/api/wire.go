package api

import (
	"net/http"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// The translation between the packages' own types and the API's (package
// api/v1), in one place: the API's JSON is v1's, whatever the store, the
// learner or the journal call their fields.

// wireJob is the stored job as the API shows it.
func wireJob(j queue.Job) v1.Job {
	return v1.Job{
		ID: j.ID, Seq: j.Seq,
		Kind: j.Kind, User: j.User, Queue: j.Queue, Priority: j.Priority,
		Resources: v1.Resources{Containers: j.Resources.Containers, MemoryMB: j.Resources.MemoryMB, VCores: j.Resources.VCores},
		Submit:    j.Submit, Deadline: j.Deadline,
		Labels: j.Labels, IdempotencyKey: j.IdempotencyKey,
		State: v1.State(j.State), Skips: j.Skips, Blocked: j.Blocked, Requeues: j.Requeues,
		AppID: j.AppID, AdmitEpoch: j.AdmitEpoch, Diagnostics: j.Diagnostics,
		CreatedAt: j.CreatedAt, AdmittedAt: j.AdmittedAt, RunningAt: j.RunningAt, FinishedAt: j.FinishedAt,
		// The decision is stored as the JSON of the journal.DecisionRecord
		// that admitted the job, and served as it is stored.
		Decision: j.Decision,
	}
}

func wireCapacity(c pipeline.Capacity) v1.Capacity {
	return v1.Capacity{MemoryMB: c.MemoryMB, VCores: c.VCores}
}

// wireCounts is a count of jobs by state; nil stays nil.
func wireCounts(m map[queue.State]int) map[v1.State]int {
	if m == nil {
		return nil
	}
	out := make(map[v1.State]int, len(m))
	for s, n := range m {
		out[v1.State(s)] = n
	}
	return out
}

func wireGoodness(r journal.GoodnessRecord) v1.GoodnessRecord {
	u := r.Usage
	return v1.GoodnessRecord{
		At: r.At, From: r.From, To: r.To, Node: r.Node, Chosen: r.Chosen, Given: r.Given, G: r.G,
		Usage: v1.Usage{CPU: u.CPU, IOWait: u.IOWait, IOPressure: u.IOPressure, CPUPressure: u.CPUPressure, Pressure: u.Pressure,
			DiskRead: u.DiskRead, DiskWrite: u.DiskWrite, NetRecv: u.NetRecv, NetSent: u.NetSent},
	}
}

// wireGoodnessList translates records; nil stays nil.
func wireGoodnessList(rs []journal.GoodnessRecord) []v1.GoodnessRecord {
	if rs == nil {
		return nil
	}
	out := make([]v1.GoodnessRecord, len(rs))
	for i, r := range rs {
		out[i] = wireGoodness(r)
	}
	return out
}

func wireDecision(r journal.DecisionRecord) v1.DecisionRecord {
	d := r.Decision
	return v1.DecisionRecord{
		At: d.At, Chosen: d.Chosen, ChosenKind: d.ChosenKind, Forced: d.Forced, Note: d.Note,
		Context: wireContext(d.Context), Stages: wireStages(d.Stages), Candidates: wireCandidates(d.Candidates),
		Passed: d.Passed, Blocked: d.Blocked, Reserved: d.Reserved,
		Groups: wireGroups(d.Groups), Queues: wireQueueRecords(d.Queues),
		Shadow: r.Shadow, FIFOChoice: r.FIFOChoice, AppID: r.AppID,
	}
}

// wireSlice translates a slice element by element; nil stays nil (so
// that null and [] stay apart on the wire).
func wireSlice[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func wireContext(cs []pipeline.ContextKind) []v1.ContextKind {
	return wireSlice(cs, func(c pipeline.ContextKind) v1.ContextKind { return v1.ContextKind{Kind: c.Kind, Weight: c.Weight} })
}

func wireStages(ss []pipeline.StageRecord) []v1.StageRecord {
	return wireSlice(ss, func(s pipeline.StageRecord) v1.StageRecord {
		return v1.StageRecord{Name: s.Name, In: s.In, Out: s.Out, Omitted: s.Omitted, Note: s.Note,
			Dropped: wireSlice(s.Dropped, func(d pipeline.Drop) v1.Drop { return v1.Drop{JobID: d.JobID, Reason: d.Reason} })}
	})
}

func wireCandidates(cs []pipeline.Candidate) []v1.Candidate {
	return wireSlice(cs, func(c pipeline.Candidate) v1.Candidate {
		out := v1.Candidate{JobID: c.JobID, Kind: c.Kind, Prob: c.Prob, Pref: c.Pref, Weight: c.Weight, Skips: c.Skips}
		if sc := c.Score; sc != nil {
			out.Score = &v1.Score{Value: sc.Value, Model: sc.Model, Correction: sc.Correction, Size: sc.Size, Alone: sc.Alone,
				Beside: wireContext(sc.Beside), Known: sc.Known, Confounds: sc.Confounds}
		}
		return out
	})
}

func wireGroups(gs []pipeline.GroupRecord) []v1.GroupRecord {
	return wireSlice(gs, func(g pipeline.GroupRecord) v1.GroupRecord {
		return v1.GroupRecord{Group: g.Group, Weight: g.Weight, Share: g.Share, Deficit: g.Deficit, Pending: g.Pending}
	})
}

func wireQueueRecords(qs []pipeline.QueueRecord) []v1.QueueRecord {
	return wireSlice(qs, func(q pipeline.QueueRecord) v1.QueueRecord {
		return v1.QueueRecord{Queue: q.Queue, Level: q.Level, Guarantee: string(q.Guarantee),
			Entitled: wireRate(q.Entitled), Held: wireRate(q.Held), Owed: wireRate(q.Owed), Pending: q.Pending}
	})
}

func wireRate(r pipeline.Rate) v1.Rate { return v1.Rate{VCores: r.VCores, Memory: r.Memory} }

func wireRatePtr(r *pipeline.Rate) *v1.Rate {
	if r == nil {
		return nil
	}
	w := wireRate(*r)
	return &w
}

func wireQueues(r pipeline.QueuesReport) v1.QueuesReport {
	return v1.QueuesReport{
		Enabled: r.Enabled, Mode: string(r.Mode), GroupBy: string(r.GroupBy), At: r.At, BurstPeriodNS: r.BurstPeriodNS,
		Queues: wireSlice(r.Queues, func(q pipeline.QueueStatus) v1.QueueStatus {
			return v1.QueueStatus{Name: q.Name, Members: q.Members, Class: q.Class, Level: q.Level,
				Guarantee: string(q.Guarantee), Reason: q.Reason, Alpha: wireRatePtr(q.Alpha), Beta: wireRatePtr(q.Beta),
				BurstNS: q.BurstNS, Weight: q.Weight, Entitled: wireRatePtr(q.Entitled), Owed: wireRatePtr(q.Owed),
				Received: wireRatePtr(q.Received), Held: wireRate(q.Held), Share: q.Share, Deficit: q.Deficit, Pending: q.Pending}
		}),
	}
}

func wireLearnerConfig(c bandit.Config) v1.LearnerConfig {
	return v1.LearnerConfig{StepSize: c.StepSize, Baseline: v1.BaselineMode(c.Baseline.String()),
		RecencyAlpha: c.RecencyAlpha, Clip: c.Clip, SelfPrior: c.SelfPrior}
}

func wireSnapshot(s bandit.Snapshot) v1.PreferencesSnapshot {
	return v1.PreferencesSnapshot{Version: s.Version, Config: wireLearnerConfig(s.Config), Kinds: s.Kinds, H: s.H,
		Baseline: s.Baseline, RowBaseline: s.RowBaseline, Observations: s.Observations,
		RowObservations: s.RowObservations, PairObservations: s.PairObservations, Rejected: s.Rejected}
}

// snapshotOf is the learner's snapshot a PUT /v1/preferences carries. A
// baseline mode it does not know is a 400, as the JSON decoder would say.
func snapshotOf(s v1.PreferencesSnapshot) (bandit.Snapshot, error) {
	mode, err := bandit.ParseBaselineMode(string(s.Config.Baseline))
	if err != nil {
		return bandit.Snapshot{}, errorf(http.StatusBadRequest, "", "malformed JSON: %v", err)
	}
	c := s.Config
	return bandit.Snapshot{Version: s.Version,
		Config: bandit.Config{StepSize: c.StepSize, Baseline: mode, RecencyAlpha: c.RecencyAlpha, Clip: c.Clip, SelfPrior: c.SelfPrior},
		Kinds:  s.Kinds, H: s.H, Baseline: s.Baseline, RowBaseline: s.RowBaseline, Observations: s.Observations,
		RowObservations: s.RowObservations, PairObservations: s.PairObservations, Rejected: s.Rejected}, nil
}
