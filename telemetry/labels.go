package telemetry

import "sync"

// Label bounds: the queue and kind labels of colocd_admissions_total,
// colocd_job_wait_duration_seconds and colocd_pending_jobs keep the first
// maxQueueLabels queues and maxKindLabels kinds this process sees; later
// ones are counted as otherLabel. A kind is a recurring job's identity
// (api.max_kinds allows 1,000 of them) and the wait histogram has 11
// buckets: bounded, a colocd exports at most 10 × 20 × 13 wait series.
const (
	maxQueueLabels = 10
	maxKindLabels  = 20
	otherLabel     = "other"
	// noQueueLabel is the queue label of a job that names no YARN queue
	// (the RM's default queue takes it).
	noQueueLabel = "default"
)

// labeler hands out bounded label values.
type labeler struct {
	mu     sync.Mutex
	queues map[string]bool
	kinds  map[string]bool
}

func newLabeler() *labeler {
	return &labeler{queues: map[string]bool{}, kinds: map[string]bool{}}
}

func (l *labeler) queue(q string) string {
	if q == "" {
		q = noQueueLabel
	}
	return l.bounded(l.queues, q, maxQueueLabels)
}

func (l *labeler) kind(k string) string { return l.bounded(l.kinds, k, maxKindLabels) }

func (l *labeler) bounded(seen map[string]bool, v string, max int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seen[v] {
		return v
	}
	if len(seen) >= max {
		return otherLabel
	}
	seen[v] = true
	return v
}
