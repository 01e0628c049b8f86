// Package promtest runs the real Prometheus server, promtool's backfill
// and node_exporter for tests.
//
// Start writes a throwaway prometheus.yml into t.TempDir(), optionally
// backfills samples into the TSDB directory with `promtool tsdb
// create-blocks-from openmetrics` first, starts prometheus on a free
// 127.0.0.1 port with a retention long enough to keep backfilled data from
// any year, waits for /-/ready with a bounded deadline, and registers a
// cleanup that stops the server and checks that it exited; Stop ends it
// early, for outage tests. Samples builds the OpenMetrics text promtool
// accepts. StartNodeExporter runs node_exporter with the cpu, diskstats
// and netdev collectors on a free 127.0.0.1 port, for a Prometheus started
// WithScrape to scrape; Server.WaitScrapes and Server.WaitDown wait, with
// bounds, for its scrapes to succeed or fail, and Server.Query reads the
// result.
//
// The binaries are found with influxtest.Tool ("prometheus", "promtool",
// "node_exporter"): a missing one skips the test, unless
// COLOCD_REQUIRE_TOOLS=1, which fails it.
//
// This package owns only test scaffolding. It must not be imported by
// production code, must not bind anything but 127.0.0.1, and must not leave
// a process running after the test that started it.
package promtest
