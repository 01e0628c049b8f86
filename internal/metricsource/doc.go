// Package metricsource adapts the collector's node-usage readers (InfluxDB with
// Flux or InfluxQL, Prometheus with node_exporter) to the engine's
// UsageSource, under YARN's host names (HostsConfig: metrics.hosts), lists
// the hosts a store has data for, and adapts the collector's placement read
// (the yarn_containers measurement) to the engine's PlacementSource and its
// per-application usage read (the plugin's cgroup counters) to the engine's
// ContainerUsageSource, with the same host-name mapping.
package metricsource
