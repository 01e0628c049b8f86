package profile

import "github.com/colocd/colocd/goodness"

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
