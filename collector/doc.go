// Package collector reads node usage from the store where ops keep their
// node metrics: InfluxDB, written by Telegraf on every worker node (Flux or
// InfluxQL), or Prometheus scraping node_exporter. It also reads YARN
// colocations from InfluxDB.
//
// It owns:
//   - the one InfluxDB read per window for all hosts over Telegraf's cpu,
//     diskio and net measurements (names configurable through Schema), in
//     Flux (/api/v2/query, CSV) or InfluxQL (the v1 /query API of 1.x, 2.x
//     and 3.x, chunked JSON): filtered reads of raw samples that the storage
//     layer evaluates;
//   - the arithmetic on those samples, shared by both languages: counter
//     rates with resets dropped, per-device means, sums over whole disks
//     and real interfaces, CPU and I/O-wait fractions, i.e. each host's
//     mean goodness.Usage;
//   - the Prometheus reader: node_exporter's CPU-seconds, disk-byte and
//     network-byte counters as rate() over the window, one PromQL query per
//     resource for all hosts;
//   - the staleness rule (a host whose data stopped gets no usage);
//   - the questions "which applications had containers on which node,
//     from when to when, how many, of which colocd kind, YARN type and
//     queue" (Placements, what the learning tick reads with
//     learning.placement: influx) and "which job kinds had containers on
//     which node" (Colocations) from the yarn_containers measurement that
//     the colocd-telegraf-yarn plugin (collector/telegrafplugin, its own
//     module) writes;
//   - "what did each application's own containers use on each node"
//     (ContainerUsage): the mean rates, over a window, of the cgroup
//     counters that plugin writes with its cgroup reading on (CPU time,
//     block I/O bytes, with the host's CPU count), resets counted from 0;
//   - typed errors: ErrUnreachable and ErrEmpty (and, unexported,
//     errInvalid (*fieldError), errAuth and errBadQuery).
//
// It speaks InfluxDB 1.8 (bucket "db/rp", token "user:password" or empty;
// Flux only with flux-enabled), 2.x (org, bucket, token; InfluxQL through a
// DBRP mapping) and 3.x (InfluxQL) through influxdb-client-go/v2's HTTP
// service, and Prometheus's HTTP API v1.
//
// It must not: do I/O in New or NewPrometheus, log (it returns errors),
// keep state between calls beyond the HTTP clients, compute goodness
// (package goodness does), talk to YARN, or put any caller or config
// string into a query unescaped. Telegraf's dependencies stay out of this
// module: the plugin lives in a nested module.
package collector
