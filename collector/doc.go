// Package collector reads node usage and YARN colocations from InfluxDB,
// where Telegraf on every worker node writes them.
//
// It owns:
//   - the one Flux query per window for all hosts over Telegraf's cpu,
//     diskio and net measurements (names configurable through Schema):
//     filtered reads that InfluxDB's storage layer evaluates, streamed back
//     as CSV;
//   - the arithmetic on those rows: counter rates with resets dropped,
//     per-device means, sums over whole disks and real interfaces, CPU and
//     I/O-wait fractions, i.e. each host's mean goodness.Usage;
//   - the staleness rule (a host whose data stopped gets no usage);
//   - the question "which job kinds had containers on which node" from the
//     yarn_containers measurement that the colocd-telegraf-yarn plugin
//     (collector/telegrafplugin, its own module) writes;
//   - typed errors: ErrInvalid (*FieldError), ErrUnreachable, ErrAuth,
//     ErrBadQuery, ErrEmpty.
//
// It speaks InfluxDB 1.8 (Flux enabled; bucket "db/rp", token
// "user:password" or empty) and 2.x (org, bucket, token) through
// influxdb-client-go/v2's HTTP service.
//
// It must not: do I/O in New, log (it returns errors), keep state between
// calls beyond the HTTP client, compute goodness (package goodness does),
// talk to YARN, or put any caller or config string into Flux unescaped.
// Telegraf's dependencies stay out of this module: the plugin lives in a
// nested module.
package collector
