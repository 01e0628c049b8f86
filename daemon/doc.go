// Package daemon wires colocd together: configuration (viper), the admission
// engine (reconcile, sync, admit, learn), the loops that drive it on an
// injected clock, and the adapters that turn the simulator, the YARN
// ResourceManager client and the InfluxDB collector into the small Cluster,
// Metrics and Clock interfaces it consumes.
//
// It owns: Config and its validation, Engine (which implements
// api.Controller), Server/Run (store, journal, backend, HTTP server, signals),
// and the simulator's durability (a submission log replayed at restart).
//
// It must not: decide which job goes next (queue's pipeline does), compute
// goodness or preferences (goodness, bandit), speak HTTP to clients (daemon/api),
// or read the wall clock in its logic (everything takes the Clock). Engine has
// no goroutines of its own, so tests and the benchmark drive it in virtual time.
package daemon
