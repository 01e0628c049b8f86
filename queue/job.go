package queue

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// State is where a job is in its life.
//
//	pending → admitted → running → succeeded | failed | killed
//	pending → cancelled
//	admitted → pending (Requeue: the submit to the cluster failed; roll back)
//	admitted → succeeded | failed | killed (the app ended before it was seen running)
type State string

// The states. Terminal ones never change again.
const (
	StatePending   State = "pending"
	StateAdmitted  State = "admitted"
	StateRunning   State = "running"
	StateSucceeded State = "succeeded"
	StateFailed    State = "failed"
	StateKilled    State = "killed"
	StateCancelled State = "cancelled"
	// StateParked: the cluster no longer knows the job's application and
	// colocd cannot prove it never ran, so it will not submit it again on
	// its own; an operator resolves it (Store.Resolve).
	StateParked State = "parked"
)

// States lists every state in life-cycle order.
var States = []State{StatePending, StateAdmitted, StateRunning, StateParked, StateSucceeded, StateFailed, StateKilled, StateCancelled}

// transitions is the state machine: from → allowed targets.
var transitions = map[State][]State{
	StatePending:  {StateAdmitted, StateCancelled},
	StateAdmitted: {StatePending, StateRunning, StateSucceeded, StateFailed, StateKilled, StateParked},
	StateRunning:  {StateSucceeded, StateFailed, StateKilled, StateParked},
	StateParked:   {StatePending, StateSucceeded, StateFailed, StateKilled},
}

// canTransition reports whether the state machine allows from → to.
func canTransition(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Terminal reports whether s is a final state (succeeded, failed, killed,
// cancelled).
func (s State) Terminal() bool {
	switch s {
	case StateSucceeded, StateFailed, StateKilled, StateCancelled:
		return true
	}
	return false
}

// Valid reports whether s is one of the seven states.
func (s State) Valid() bool {
	for _, k := range States {
		if s == k {
			return true
		}
	}
	return false
}

func (s State) String() string { return string(s) }

// ParseState parses a state name (case-insensitive, surrounding space
// ignored). Unknown names give a *FieldError for field "state".
func ParseState(s string) (State, error) {
	st := State(strings.ToLower(strings.TrimSpace(s)))
	if !st.Valid() {
		return "", fieldErr("state", "unknown state %q (want one of %s)", s, stateNames())
	}
	return st, nil
}

func stateNames() string {
	names := make([]string, len(States))
	for i, s := range States {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Resources is a job's reservation: Containers containers, each of
// MemoryMB megabytes and VCores virtual cores.
type Resources struct {
	Containers int   `json:"containers"`
	MemoryMB   int64 `json:"memory_mb"`
	VCores     int   `json:"vcores"`
}

// TotalMemoryMB is Containers × MemoryMB.
func (r Resources) TotalMemoryMB() int64 { return int64(r.Containers) * r.MemoryMB }

// TotalVCores is Containers × VCores.
func (r Resources) TotalVCores() int64 { return int64(r.Containers) * int64(r.VCores) }

// Job is one unit of work waiting in, or having passed through, the queue.
// Submitters set the fields from Kind to IdempotencyKey; the store sets the
// rest.
type Job struct {
	ID  string `json:"id"`  // ULID, assigned by Submit; sorts by creation time
	Seq uint64 `json:"seq"` // submission sequence, assigned by Submit: the FIFO order

	Kind     string `json:"kind"`     // recurring job identity; what the learner works on
	User     string `json:"user"`     // fairness group (and YARN user); may be empty
	Queue    string `json:"queue"`    // YARN queue; may be empty
	Priority int    `json:"priority"` // passed to the cluster; the pipeline does not use it

	Resources Resources       `json:"resources"`
	Submit    json.RawMessage `json:"submit,omitempty"`   // opaque spec for the cluster backend
	Deadline  *time.Time      `json:"deadline,omitempty"` // optional; drives the altruism stage

	Labels         map[string]string `json:"labels,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"` // scoped per user

	State State `json:"state"`
	Skips int   `json:"skips"` // times passed over by a decision
	// Blocked counts the decisions that admitted a younger job while this
	// one was the oldest window job that did not fit; see ReservationConfig.
	Blocked  int    `json:"blocked,omitempty"`
	Requeues int    `json:"requeues"`         // times rolled back admitted → pending
	AppID    string `json:"app_id,omitempty"` // RM application id, stored before the submit call
	// AdmitEpoch is the epoch of the leader whose log entry admitted the
	// job (0: the embedded log). A leader of a later epoch knows that an
	// older one may still be submitting it (package ha).
	AdmitEpoch  uint64 `json:"admit_epoch,omitempty"`
	Diagnostics string `json:"diagnostics,omitempty"`

	CreatedAt  time.Time  `json:"created_at"`
	AdmittedAt *time.Time `json:"admitted_at,omitempty"`
	RunningAt  *time.Time `json:"running_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`

	Decision json.RawMessage `json:"decision,omitempty"` // the Decision that admitted it
}

// Bounds enforced by Validate. Memory and vcores are per container and match
// what a large YARN node offers (yarn.scheduler.maximum-allocation-* rarely
// exceeds a node): 1 TiB and 1024 vcores per container, 10,000 containers
// per job.
const (
	MaxContainers       = 10000
	MaxMemoryMB         = 1 << 20 // 1 TiB per container
	MaxVCores           = 1024
	maxLabels           = 32
	maxLabelKeyLen      = 63
	maxLabelValueLen    = 256
	maxIdempotencyKey   = 128
	maxSubmitSpecBytes  = 64 << 10
	maxPriority         = 1000
	maxNameLen          = 255 // user and queue names
	maxDiagnosticsBytes = 16 << 10
	maxDecisionBytes    = 1 << 20
)

var (
	kindRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
	userRE     = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._@-]*$`) // unix names and Kerberos principals
	queueRE    = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
	labelKeyRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$`)
)

// Validate checks the fields a submitter sets and reports the first bad one
// as a *FieldError (wrapping ErrInvalid). Kind: ^[a-z0-9][a-z0-9._-]{0,62}$.
// User (unix name or principal) and Queue (dotted YARN path) are optional, at
// most 255 bytes. Priority within ±1000. Resources: 1..10000 containers,
// 1..1 TiB and 1..1024 vcores per container. At most 32 labels, keys
// [A-Za-z0-9._/-] up to 63 bytes, values printable UTF-8 up to 256 bytes.
// Idempotency key: printable ASCII, up to 128 bytes. Submit spec: valid
// JSON, at most 64 KiB. Deadline: a real time (years 1970..9999); Submit also
// rejects one already past. State, when set, must be a known state.
func (j Job) Validate() error {
	switch {
	case j.Kind == "":
		return fieldErr("kind", "required")
	case !kindRE.MatchString(j.Kind):
		return fieldErr("kind", "%q must match %s", j.Kind, kindRE)
	}
	if err := checkName("user", j.User, userRE); err != nil {
		return err
	}
	if err := checkName("queue", j.Queue, queueRE); err != nil {
		return err
	}
	if j.Priority < -maxPriority || j.Priority > maxPriority {
		return fieldErr("priority", "%d outside [-%d, %d]", j.Priority, maxPriority, maxPriority)
	}
	r := j.Resources
	switch {
	case r.Containers < 1 || r.Containers > MaxContainers:
		return fieldErr("resources.containers", "%d outside [1, %d]", r.Containers, MaxContainers)
	case r.MemoryMB < 1 || r.MemoryMB > MaxMemoryMB:
		return fieldErr("resources.memory_mb", "%d outside [1, %d] (per container)", r.MemoryMB, MaxMemoryMB)
	case r.VCores < 1 || r.VCores > MaxVCores:
		return fieldErr("resources.vcores", "%d outside [1, %d] (per container)", r.VCores, MaxVCores)
	}
	if len(j.Submit) > maxSubmitSpecBytes {
		return fieldErr("submit", "%d bytes, above %d", len(j.Submit), maxSubmitSpecBytes)
	}
	if len(j.Submit) > 0 && !json.Valid(j.Submit) {
		return fieldErr("submit", "not valid JSON")
	}
	if d := j.Deadline; d != nil {
		if y := d.Year(); d.IsZero() || y < 1970 || y > 9999 {
			return fieldErr("deadline", "%v is not a usable time (years 1970..9999)", *d)
		}
	}
	if err := checkLabels(j.Labels); err != nil {
		return err
	}
	if k := j.IdempotencyKey; k != "" {
		if len(k) > maxIdempotencyKey {
			return fieldErr("idempotency_key", "%d bytes, above %d", len(k), maxIdempotencyKey)
		}
		for i := 0; i < len(k); i++ {
			if k[i] < 0x21 || k[i] > 0x7e {
				return fieldErr("idempotency_key", "byte %d (%#x) is not printable ASCII", i, k[i])
			}
		}
	}
	if j.State != "" && !j.State.Valid() {
		return fieldErr("state", "unknown state %q (want one of %s)", j.State, stateNames())
	}
	return nil
}

func checkName(field, v string, re *regexp.Regexp) error {
	if v == "" {
		return nil
	}
	if len(v) > maxNameLen {
		return fieldErr(field, "%d bytes, above %d", len(v), maxNameLen)
	}
	if !re.MatchString(v) {
		return fieldErr(field, "%q must match %s", v, re)
	}
	return nil
}

func checkLabels(labels map[string]string) error {
	if len(labels) > maxLabels {
		return fieldErr("labels", "%d labels, above %d", len(labels), maxLabels)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the same bad label every time
	for _, k := range keys {
		v := labels[k]
		switch {
		case len(k) == 0:
			return fieldErr("labels", "empty key")
		case len(k) > maxLabelKeyLen:
			return fieldErr(fmt.Sprintf("labels[%.20s…]", k), "key is %d bytes, above %d", len(k), maxLabelKeyLen)
		case !labelKeyRE.MatchString(k):
			return fieldErr(fmt.Sprintf("labels[%q]", k), "key must match %s", labelKeyRE)
		case len(v) > maxLabelValueLen:
			return fieldErr(fmt.Sprintf("labels[%s]", k), "value is %d bytes, above %d", len(v), maxLabelValueLen)
		case !utf8.ValidString(v):
			return fieldErr(fmt.Sprintf("labels[%s]", k), "value is not valid UTF-8")
		case strings.IndexFunc(v, unicode.IsControl) >= 0:
			return fieldErr(fmt.Sprintf("labels[%s]", k), "value contains a control character")
		}
	}
	return nil
}

// clone returns a deep copy of j, so callers never share maps or slices with
// the store.
func (j Job) clone() Job {
	c := j
	if j.Labels != nil {
		c.Labels = make(map[string]string, len(j.Labels))
		for k, v := range j.Labels {
			c.Labels[k] = v
		}
	}
	c.Submit = cloneBytes(j.Submit)
	c.Decision = cloneBytes(j.Decision)
	c.Deadline = cloneTime(j.Deadline)
	c.AdmittedAt = cloneTime(j.AdmittedAt)
	c.RunningAt = cloneTime(j.RunningAt)
	c.FinishedAt = cloneTime(j.FinishedAt)
	return c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// KindHistory summarises the finished (succeeded) runs of one kind. Runtime
// is finish time minus the time the job was seen running (or admitted, when
// it never was).
type KindHistory struct {
	Kind        string          `json:"kind"`
	Runs        int             `json:"runs"`
	MeanRuntime time.Duration   `json:"mean_runtime"`
	EWMARuntime time.Duration   `json:"ewma_runtime"` // α = historyAlpha
	Last        []time.Duration `json:"last"`         // newest last, at most historyLast
}

// History parameters.
const (
	historyAlpha = 0.3
	historyLast  = 10
)

// add folds one runtime into h.
func (h *KindHistory) add(rt time.Duration) {
	h.Runs++
	if h.Runs == 1 {
		h.MeanRuntime, h.EWMARuntime = rt, rt
	} else {
		h.MeanRuntime += time.Duration((float64(rt) - float64(h.MeanRuntime)) / float64(h.Runs))
		h.EWMARuntime = time.Duration(historyAlpha*float64(rt) + (1-historyAlpha)*float64(h.EWMARuntime))
	}
	h.Last = append(h.Last, rt)
	if n := len(h.Last); n > historyLast {
		h.Last = append(h.Last[:0:0], h.Last[n-historyLast:]...)
	}
}
