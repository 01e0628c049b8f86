// Package goodness rates how well the jobs sharing a node use it: paper Eq. 1
// (learning-efficient-co-locations §4.2).
//
//	G = f(u_cpu + (h(r_disk, w_disk) + h(r_net, w_net)) · l(u_wait))
//	h(r, w) = tanh(r/r_max + w/w_max),  f(x) = exp(1+x),  l(x) = exp(−5x)
//
// It owns the Usage and Limits types that the collector and the simulator
// produce. It is pure: standard library only, no clock, no I/O, no state.
package goodness
