package goodness

import (
	"errors"
	"fmt"
	"math"
)

// Usage is a node's mean resource usage over an interval.
type Usage struct {
	// CPU is the fraction of the node's CPU time spent busy, excluding
	// I/O wait, in [0, 1].
	CPU float64
	// IOWait is the fraction of the node's CPU time spent waiting on I/O, in [0, 1].
	IOWait float64
	// IOPressure is the fraction of wall time in which at least one task
	// was stalled waiting for I/O (Linux pressure stall information, io
	// "some"), in [0, 1]; 0 when the source does not read it. Unlike
	// IOWait it does not vanish when other work keeps every CPU busy.
	IOPressure float64
	// CPUPressure is the fraction of wall time in which at least one
	// runnable task waited for a CPU (PSI cpu "some"), in [0, 1]; 0 when the
	// source does not read it. A node whose CPUs are saturated shows
	// CPU ≈ 1 however much more its tasks ask; the pressure says how long
	// they waited.
	CPUPressure float64
	// Pressure reports that IOPressure and CPUPressure were read for this
	// node (the source reads PSI and the node has it): 0 then means no
	// stall, not "unknown". Goodness ignores it.
	Pressure bool
	// DiskRead, DiskWrite, NetRecv and NetSent are rates in bytes per second.
	DiskRead, DiskWrite, NetRecv, NetSent float64
}

// Limits are a node's hardware maxima, in bytes per second (paper: r_max, w_max).
type Limits struct {
	DiskRead, DiskWrite, NetRecv, NetSent float64
}

// Range of Score: with every input valid, e^1 <= G <= e^4.
//
// The lower end is an idle node (or an I/O-saturated one with full iowait);
// the upper end needs full CPU and saturated disk and network with no iowait,
// which u_cpu + h_disk + h_net approaches (tanh < 1) but never exceeds.
var (
	Min = math.E      // e^1
	Max = math.Exp(4) // e^4
)

// errInvalid is wrapped by every validation error of this package.
var (
	errInvalid = errors.New("goodness: invalid input")
)

// fieldError is the error Validate and Checked return: it names the bad
// field ("usage.cpu", "limits.net_sent", ...) and unwraps to errInvalid.
type fieldError struct {
	Field  string // "usage.<name>" or "limits.<name>"; "usage.cpu+iowait" for the sum
	Reason string // what is wrong with it, including the offending value
}

func (e *fieldError) Error() string {
	return "goodness: invalid " + e.Field + ": " + e.Reason
}

// Unwrap makes errors.Is(err, errInvalid) hold.
func (e *fieldError) Unwrap() error { return errInvalid }

func fieldErr(field, format string, args ...any) error {
	return &fieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Validate reports the first field of u that is outside its domain: NaN or
// ±Inf anywhere, a fraction outside [0, 1], CPU+IOWait above 1, a negative
// rate. The error is a *fieldError.
func (u Usage) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
		frac bool
	}{
		{"cpu", u.CPU, true}, {"iowait", u.IOWait, true}, {"io_pressure", u.IOPressure, true}, {"cpu_pressure", u.CPUPressure, true},
		{"disk_read", u.DiskRead, false}, {"disk_write", u.DiskWrite, false},
		{"net_recv", u.NetRecv, false}, {"net_sent", u.NetSent, false},
	} {
		switch {
		case math.IsNaN(f.v) || math.IsInf(f.v, 0):
			return fieldErr("usage."+f.name, "is %v, want a finite number", f.v)
		case f.v < 0:
			return fieldErr("usage."+f.name, "is negative (%v)", f.v)
		case f.frac && f.v > 1:
			return fieldErr("usage."+f.name, "is %v, above 1 (a fraction of CPU time)", f.v)
		}
	}
	// Telegraf's cpu fields are percentages that sum to 100 per sample; a
	// little rounding slack is allowed.
	if s := u.CPU + u.IOWait; s > 1+1e-9 {
		return fieldErr("usage.cpu+iowait", "is %v, above 1 (fractions of the same CPU time)", s)
	}
	return nil
}

// Validate reports the first limit that is not a positive finite number, as
// a *fieldError.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"disk_read", l.DiskRead}, {"disk_write", l.DiskWrite},
		{"net_recv", l.NetRecv}, {"net_sent", l.NetSent},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v <= 0 {
			return fieldErr("limits."+f.name, "is %v, want a positive finite rate in bytes/s", f.v)
		}
	}
	return nil
}

// Score returns G (Eq. 1) for u under lim. It does not validate: callers
// that read untrusted data use Checked, or Validate first. On valid input
// the result lies in [Min, Max].
//
// The wait in l(u_wait) is the larger of IOWait and IOPressure. Without
// pressure readings (IOPressure 0, every source's default) that is the
// paper's u_wait; with them, I/O stalls that busy CPUs hide from iowait
// lower G too.
func Score(u Usage, lim Limits) float64 {
	hDisk := math.Tanh(u.DiskRead/lim.DiskRead + u.DiskWrite/lim.DiskWrite)
	hNet := math.Tanh(u.NetRecv/lim.NetRecv + u.NetSent/lim.NetSent)
	l := math.Exp(-5 * max(u.IOWait, u.IOPressure))
	return math.Exp(1 + u.CPU + (hDisk+hNet)*l)
}

// Checked validates lim, then u, then scores. The error is a *fieldError
// naming the first bad field; it wraps errInvalid.
func Checked(u Usage, lim Limits) (float64, error) {
	if err := lim.Validate(); err != nil {
		return 0, err
	}
	if err := u.Validate(); err != nil {
		return 0, err
	}
	return Score(u, lim), nil
}
