// Package simcluster adapts the simulator (sim) to the engine: a Cluster
// that reserves, submits, reports and kills simulated applications, reads
// node usage, and fills backend defaults into jobs; and State, the
// simulator's durable state in data_dir/sim (a write-ahead log of every
// reservation, submission and kill, replayed at start), which makes the
// embedded cluster as durable as a ResourceManager.
//
// A job's size reaches the simulator as a ResourceManager would see it: its
// container count in its resources (another count than its kind's is
// accepted when each container is the kind's), and the scale of its input
// in its opaque submission spec (SubmitSpec, {"scale": x}), which the
// engine stores and passes on without reading. For nodes of different
// hardware, ReferenceVCores and NodeLimits give the engine what an
// operator would configure: the reference node's vcores and the disk and
// network maxima of the nodes that differ from it.
package simcluster
