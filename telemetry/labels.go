package telemetry

import "sync"

// Label bounds: the queue and kind labels of colocd_admissions_total,
// colocd_job_wait_duration_seconds and colocd_pending_jobs keep the first
// MaxQueueLabels queues and MaxKindLabels kinds this process sees; later
// ones are counted as OtherLabel. A kind is a recurring job's identity
// (api.max_kinds allows 1,000 of them) and the wait histogram has 11
// buckets: bounded, a colocd exports at most 10 × 20 × 13 wait series.
const (
	MaxQueueLabels = 10
	MaxKindLabels  = 20
	OtherLabel     = "other"
	// NoQueueLabel is the queue label of a job that names no YARN queue
	// (the RM's default queue takes it).
	NoQueueLabel = "default"
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
		q = NoQueueLabel
	}
	return l.bounded(l.queues, q, MaxQueueLabels)
}

func (l *labeler) kind(k string) string { return l.bounded(l.kinds, k, MaxKindLabels) }

func (l *labeler) bounded(seen map[string]bool, v string, max int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seen[v] {
		return v
	}
	if len(seen) >= max {
		return OtherLabel
	}
	seen[v] = true
	return v
}
