// Package telemetry is colocd's Prometheus series: what the engine counts
// (admissions, decisions, learning updates, stale hosts, dominant shares,
// backend errors), what the HTTP API counts (requests by route and code),
// the job counts by state and the quarantined records read from the store
// at scrape time, and the Go and process collectors, on one registry that
// is never the global one.
//
// # What it owns
//
// The series and their names (colocd_*), Metrics and its Handler. The
// engine and the API record through small interfaces of their own; every
// method is safe on a nil *Metrics.
//
// # What it must not do
//
// It keeps no state of its own beyond the series, and imports nothing of
// colocd but queue (the counts it reads at scrape time).
package telemetry
