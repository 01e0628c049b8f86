// Package usage adapts the collector's node-usage readers (InfluxDB with
// Flux or InfluxQL, Prometheus with node_exporter) to the engine's
// UsageSource, and lists the hosts a store has data for.
package usage
