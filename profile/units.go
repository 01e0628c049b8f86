package profile

import (
	"fmt"

	"github.com/colocd/colocd/goodness"
)

// Resource indexes a Vector.
type Resource int

// The resources of a profile. Every amount is a fraction of a node's
// capacity (a profile's, of the reference node's: see Observation.Size):
// CPU and IOWait of its CPU time, the others of its maximum rates
// (goodness.Limits).
const (
	CPU Resource = iota
	IOWait
	DiskRead
	DiskWrite
	NetIn
	NetOut
	NumResources
)

var resourceNames = [NumResources]string{"cpu", "iowait", "disk_read", "disk_write", "net_in", "net_out"}

// String is the resource's JSON name.
func (r Resource) String() string {
	if r >= 0 && r < NumResources {
		return resourceNames[r]
	}
	return fmt.Sprintf("Resource(%d)", int(r))
}

// Vector is an amount of every resource.
type Vector [NumResources]float64

// Usage converts a node's measured usage into utilisation units: CPU and
// I/O wait stay fractions of its CPU time, the rates become fractions of
// the node's maxima. A zero limit gives 0 for that resource.
func Usage(u goodness.Usage, lim goodness.Limits) Vector {
	div := func(x, m float64) float64 {
		if m > 0 {
			return x / m
		}
		return 0
	}
	return Vector{u.CPU, u.IOWait, div(u.DiskRead, lim.DiskRead), div(u.DiskWrite, lim.DiskWrite),
		div(u.NetRecv, lim.NetRecv), div(u.NetSent, lim.NetSent)}
}

// Rates converts a vector in utilisation units back to measured units:
// fractions for CPU and I/O wait, bytes per second for the rest.
func (v Vector) Rates(lim goodness.Limits) goodness.Usage {
	return goodness.Usage{CPU: v[CPU], IOWait: v[IOWait], DiskRead: v[DiskRead] * lim.DiskRead,
		DiskWrite: v[DiskWrite] * lim.DiskWrite, NetRecv: v[NetIn] * lim.NetRecv, NetSent: v[NetOut] * lim.NetSent}
}
