// Package simcluster adapts the simulator (sim) to the engine: a Cluster
// that reserves, submits, reports and kills simulated applications, reads
// node usage, and fills backend defaults into jobs; and State, the
// simulator's durable state in data_dir/sim (a write-ahead log of every
// reservation, submission and kill, replayed at start), which makes the
// embedded cluster as durable as a ResourceManager.
package simcluster
