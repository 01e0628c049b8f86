package profile

import (
	"errors"
	"fmt"
	"math"
)

// Errors.
var (
	// ErrInvalidConfig: Config.Validate found a field out of its domain.
	ErrInvalidConfig = errors.New("profile: invalid config")
	// ErrInvalidSnapshot: Restore refused a snapshot (the model is unchanged).
	ErrInvalidSnapshot = errors.New("profile: invalid snapshot")
)

// FieldError names the bad field of a Config or Snapshot; it unwraps to
// ErrInvalidConfig or ErrInvalidSnapshot.
type FieldError struct {
	Field, Reason string
	Err           error
}

func (e *FieldError) Error() string { return e.Err.Error() + ": " + e.Field + ": " + e.Reason }

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// FieldReason is the field and the reason, for a config loader that
// names the whole key.
func (e *FieldError) FieldReason() (field, reason string) { return e.Field, e.Reason }

// Defaults of Config.
const (
	// DefaultHalfLife is the forgetting half-life in learning ticks: 720
	// ticks are 12 hours at the default 60 s, so a kind's profile follows
	// drifting inputs within a day while one run's noise averages out.
	DefaultHalfLife = 720
	// DefaultPriorStrength is the prior's weight in container² units: one
	// container observed alone for one tick counts 1, a group of three 9.
	// A new kind starts at the population's mean profile with this weight,
	// so its first observation beside known kinds already moves it most of
	// the way.
	DefaultPriorStrength = 1
	// DefaultSaturation is the utilisation of a node's busiest resource
	// from which its observation is censored: where a resource saturates,
	// every container using it slows down and uses less of everything than
	// it would alone, so usage no longer adds up to demand. 60-second means
	// of phases that saturate part of the time sit around 0.9.
	DefaultSaturation = 0.9
)

// Config configures a Model. Zero fields take their defaults.
type Config struct {
	// HalfLife, in learning ticks, of the forgetting of old observations.
	HalfLife float64 `json:"half_life,omitempty" mapstructure:"half_life"`
	// PriorStrength is the weight of a kind's prior (the population mean),
	// in container² observation units.
	PriorStrength float64 `json:"prior_strength,omitempty" mapstructure:"prior_strength"`
	// Saturation is the utilisation of a node's busiest resource in (0, 1)
	// from which its observation is censored: its usage is taken as a lower
	// bound of its containers' demand (see Observe).
	Saturation float64 `json:"saturation,omitempty" mapstructure:"saturation"`
}

// Validate reports the first field outside its domain.
func (c Config) Validate() error {
	switch {
	case !(c.HalfLife >= 0) || math.IsInf(c.HalfLife, 0):
		return &FieldError{"half_life", fmt.Sprintf("%v is not a finite number >= 0 (0 = default %v ticks)", c.HalfLife, DefaultHalfLife), ErrInvalidConfig}
	case !(c.PriorStrength >= 0) || c.PriorStrength > 1e6:
		return &FieldError{"prior_strength", fmt.Sprintf("%v outside [0, 1e6] (0 = default %v)", c.PriorStrength, DefaultPriorStrength), ErrInvalidConfig}
	case !(c.Saturation >= 0 && c.Saturation < 1):
		return &FieldError{"saturation", fmt.Sprintf("%v outside [0, 1) (0 = default %v)", c.Saturation, DefaultSaturation), ErrInvalidConfig}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.HalfLife == 0 {
		c.HalfLife = DefaultHalfLife
	}
	if c.PriorStrength == 0 {
		c.PriorStrength = DefaultPriorStrength
	}
	if c.Saturation == 0 {
		c.Saturation = DefaultSaturation
	}
	return c
}
