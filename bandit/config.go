package bandit

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Errors. Config.Validate and Restore return a *FieldError naming the bad
// field and wrapping errInvalidConfig or ErrInvalidSnapshot;
// ParseBaselineMode wraps errUnknownBaselineMode.
var (
	// errInvalidConfig: Config.Validate found a field out of its domain.
	errInvalidConfig = errors.New("bandit: invalid config")
	// ErrInvalidSnapshot: Restore refused a snapshot (the learner is unchanged).
	ErrInvalidSnapshot = errors.New("bandit: invalid snapshot")
	// errUnknownBaselineMode: ParseBaselineMode or UnmarshalText got a name it does not know.
	errUnknownBaselineMode = errors.New("bandit: unknown baseline mode")
)

// FieldError names the field of a Config or Snapshot that is wrong. Field
// uses the JSON names ("step_size", "h[2][0]", "kinds[1]"). It unwraps to
// errInvalidConfig or ErrInvalidSnapshot.
type FieldError struct {
	Field  string
	Reason string
	Err    error // the sentinel
}

func (e *FieldError) Error() string { return e.Err.Error() + ": " + e.Field + ": " + e.Reason }

// FieldReason is the field and the reason, for a config loader that
// names the whole key.
func (e *FieldError) FieldReason() (field, reason string) { return e.Field, e.Reason }

// Unwrap returns the sentinel, for errors.Is.
func (e *FieldError) Unwrap() error { return e.Err }

func configErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: errInvalidConfig}
}

func snapErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalidSnapshot}
}

// BaselineMode selects the reference goodness Ḡ that an observation is
// compared with in Eqs. 2–3.
type BaselineMode int

const (
	// GlobalMean is the paper's baseline and the default: the mean of every
	// goodness value observed so far, the current one included.
	GlobalMean BaselineMode = iota
	// RowMean keeps one mean per running kind a' (per row of H), the current
	// value included: a kind that co-locates badly with everything does not
	// drag the other rows' baseline down.
	RowMean
	// Recency is an exponential recency-weighted average, Ḡ += α(g−Ḡ) with
	// α = Config.RecencyAlpha, for jobs whose behaviour drifts. It starts
	// unbiased (Sutton & Barto §2.5, ex. 2.7): the step is α/(1−(1−α)^n) for
	// the n-th observation, so the first observation sets Ḡ = g and the step
	// tends to α.
	Recency
)

var baselineNames = [...]string{GlobalMean: "global", RowMean: "row", Recency: "recency"}

// String returns "global", "row" or "recency".
func (m BaselineMode) String() string {
	if m >= 0 && int(m) < len(baselineNames) {
		return baselineNames[m]
	}
	return fmt.Sprintf("BaselineMode(%d)", int(m))
}

// ParseBaselineMode accepts the names String returns, case-insensitively,
// plus the spellings "global-mean", "global_mean", "row-mean", "row_mean".
// The empty string is the default, GlobalMean.
func ParseBaselineMode(s string) (BaselineMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "global", "global-mean", "global_mean":
		return GlobalMean, nil
	case "row", "row-mean", "row_mean":
		return RowMean, nil
	case "recency":
		return Recency, nil
	}
	return 0, fmt.Errorf("%w %q (want global, row or recency)", errUnknownBaselineMode, s)
}

// MarshalText writes the mode's name, so JSON and YAML carry "global", not 0.
func (m BaselineMode) MarshalText() ([]byte, error) {
	if m < 0 || int(m) >= len(baselineNames) {
		return nil, fmt.Errorf("%w %d", errUnknownBaselineMode, int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText parses a name with ParseBaselineMode.
func (m *BaselineMode) UnmarshalText(b []byte) error {
	v, err := ParseBaselineMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// DefaultStepSize is γ when Config.StepSize is zero.
//
// The paper gives no value for γ; this one is ours. The reward sets the
// scale: goodness lies in [e, e^4] ≈ [2.7, 54.6], so G−Ḡ is typically a few
// units and at most about ±52. At γ = 0.05 one update moves a preference by
// at most γ|G−Ḡ| ≈ 2.6, so a single outlier cannot saturate a row's softmax,
// while a typical gap of 5–20 between a good and a bad partner moves it by
// 0.25–1, so a row learns in tens of observations. We measured it on a
// stationary problem (10 kinds, best partner G≈33, the others 4.5–12.2,
// noise σ=2, 300 seeds; TestLearnsBestPartner): π(best|a') passes 0.9 after
// a median of 25 and at most 80 updates of that row, and stays there. γ = 0.1
// halves the median but its worst case is 3× longer (it briefly locks onto a
// wrong partner); γ ≥ 0.2 sometimes converges to a wrong partner for
// thousands of updates; γ = 0.01 needs 100–160 updates, more runs of one
// pair than a batch cluster sees in a day. With a small gap (best G≈20 vs
// 8–15, σ=3) γ = 0.05 still never failed: median 66, at most 405 updates.
const DefaultStepSize = 0.05

// maxSelfPrior bounds Config.SelfPrior: e^−50 is already a probability no
// sample would ever draw.
const maxSelfPrior = 50

// defaultRecencyAlpha is α for the Recency baseline when Config.RecencyAlpha
// is zero: an effective memory of about 1/α = 10 observations.
const defaultRecencyAlpha = 0.1

// Config configures a Learner. The zero value is valid: every zero field
// takes its default (the paper's choices where the paper makes one).
type Config struct {
	// StepSize is γ in Eqs. 2–3; 0 means DefaultStepSize.
	StepSize float64 `json:"step_size" mapstructure:"step_size"`
	// Baseline selects Ḡ; the zero value is GlobalMean, the paper's.
	Baseline BaselineMode `json:"baseline" mapstructure:"baseline"`
	// RecencyAlpha is α for the Recency baseline, in (0, 1]; 0 means
	// defaultRecencyAlpha. Ignored by the other modes.
	RecencyAlpha float64 `json:"recency_alpha,omitempty" mapstructure:"recency_alpha"`
	// Clip, when positive, clamps every preference to [−Clip, Clip] after
	// each update, bounding how certain the learner can become: the largest
	// probability ratio between two kinds in a row is e^(2·Clip). 0 (the
	// default, the paper's) means no clipping. The softmax is computed with
	// the row maximum subtracted, so it stays finite either way.
	Clip float64 `json:"clip,omitempty" mapstructure:"clip"`
	// SelfPrior, when positive, starts a kind's preference for running
	// beside itself below the others: Add gives H(a|a) = −SelfPrior instead
	// of 0. This departs from the paper (H₀ = 0 everywhere): two jobs of
	// one kind stress the same resources, and the paper's own §3
	// experiments find same-job co-locations gain least. It is only a
	// starting point; updates move H(a|a) like any other preference. 0 (the
	// default, the paper's) means no prior; with Clip it starts at most Clip
	// below. AddSimilar and Restore are not affected.
	SelfPrior float64 `json:"self_prior,omitempty" mapstructure:"self_prior"`
}

// DefaultConfig returns the configuration New uses for a zero Config, with
// every default filled in.
func DefaultConfig() Config {
	return Config{StepSize: DefaultStepSize, Baseline: GlobalMean, RecencyAlpha: defaultRecencyAlpha}
}

// Validate reports the first field outside its domain, as a *FieldError
// wrapping errInvalidConfig. Zero fields are valid (they mean "default").
func (c Config) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(c.StepSize) || c.StepSize < 0:
		return configErr("step_size", "is %v, want a finite number >= 0 (0 = default %v)", c.StepSize, DefaultStepSize)
	case c.Baseline < 0 || int(c.Baseline) >= len(baselineNames):
		return configErr("baseline", "is %d, want global (0), row (1) or recency (2)", int(c.Baseline))
	case !finite(c.RecencyAlpha) || c.RecencyAlpha < 0 || c.RecencyAlpha > 1:
		return configErr("recency_alpha", "is %v, want a number in (0, 1] (0 = default %v)", c.RecencyAlpha, defaultRecencyAlpha)
	case !finite(c.Clip) || c.Clip < 0:
		return configErr("clip", "is %v, want a finite number >= 0 (0 = no clipping)", c.Clip)
	case !finite(c.SelfPrior) || c.SelfPrior < 0 || c.SelfPrior > maxSelfPrior:
		return configErr("self_prior", "is %v, want a number in [0, %v] (0 = none)", c.SelfPrior, maxSelfPrior)
	}
	return nil
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.StepSize == 0 {
		c.StepSize = DefaultStepSize
	}
	if c.RecencyAlpha == 0 {
		c.RecencyAlpha = defaultRecencyAlpha
	}
	return c
}
