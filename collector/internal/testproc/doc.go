// Package testproc runs a real server binary as a child process of a test:
// the lifecycle that influxtest (influxd) and promtest (prometheus,
// node_exporter) share.
//
// It owns:
//   - starting the binary with its stdout and stderr in one log file and,
//     optionally, extra environment variables (Start, Spec);
//   - waiting, with a bound, until a URL answers an expected status, failing
//     at once with the exit error if the process exits first (Ready,
//     errExited, errNotReady);
//   - stopping it: SIGTERM, SIGKILL after a bound, then waiting, with a
//     bound, until it is reaped; once, however often Stop is called
//     (errKilled);
//   - the test cleanup that stops it, reports a process still running and,
//     when the test failed, logs the end of its log (Proc.Cleanup,
//     Proc.LogTail, Tail);
//   - free loopback addresses for the child to listen on (FreeAddrs,
//     FreeAddr).
//
// The bounds are defaultReadyTimeout, defaultTermTimeout and
// defaultKillTimeout unless WithReadyTimeout or withStopTimeouts changes them.
//
// What the process is — its configuration, its ready URL, its retries when
// another process takes a free port first — belongs to the helper package
// that runs it, and so do the messages a test sees: errors name the tool
// (Spec.Name), what Cleanup reports names the helper (Spec.Owner).
//
// This package owns only test scaffolding. It must not be imported by
// production code, must not bind anything but 127.0.0.1, and must not leave a
// process running after Stop or Cleanup returns without saying so.
package testproc
