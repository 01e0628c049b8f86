// Package influxtest runs the real InfluxDB 1.8 server (influxd) for tests.
//
// Start writes a throwaway configuration into t.TempDir() (meta, data and WAL
// directories there, HTTP and RPC bound to free 127.0.0.1 ports, Flux on,
// reporting and most logging off), starts influxd, waits for /ping with a
// bounded deadline, creates the "telegraf" database and registers a cleanup
// that stops the server and checks that it exited.
//
// Tool finds the integration binaries (influxd, telegraf) the way every
// colocd test does: env COLOCD_<NAME>, then $HOME/.cache/colocd/tools/bin,
// then /root/.cache/colocd/bin. A missing binary skips the test, unless
// COLOCD_REQUIRE_TOOLS=1, which fails it.
//
// This package owns only test scaffolding. It must not be imported by
// production code, must not bind anything but 127.0.0.1, and must not leave a
// process running after the test that started it.
package influxtest
