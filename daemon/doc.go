// Package daemon wires colocd together: the configuration (viper: defaults,
// file, environment, flags; every key validated, unknown keys refused), the
// backend chosen by it (the embedded simulator or YARN with InfluxDB,
// adapted by internal/simcluster, internal/yarncluster, internal/metricsource),
// the store, learner, profile model, journal and metrics, the engine and its
// loop (package engine), and the HTTP server (daemon/api) — Serve.
//
// It owns: Config and its validation, the translation of the config into
// engine.Options, Serve's start-up order and graceful shutdown, and the
// HTTP server's connection limits. It is also the one door of the command
// line (cmd/colocd) into colocd's packages: the inspection commands' reads
// (YarnClient, InspectYarn, ReadMetrics, CheckStore) and the client's
// Kerberos login (KerberosLogin), so that cmd/colocd imports nothing of
// ours but the daemon, the bench, the API client and its wire types.
//
// It must not: decide anything the engine decides, order the queue, or
// speak the API's protocol; those live in engine, queue and daemon/api.
package daemon
