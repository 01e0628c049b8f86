// Package telemetry is colocd's Prometheus series: what the engine counts
// (admissions and how long each job waited, forced admissions, decisions,
// learning ticks and updates, stale hosts, dominant shares, backend errors
// and whether each backend is up), what the HTTP API counts (requests by
// route and code), the build, the job counts by state and the quarantined
// records read from the store at scrape time, what operators alert on
// (the dependencies degraded, pending jobs by queue and kind and the
// oldest one's age, data_dir's free space, the Kerberos ticket's expiry,
// the duration of each request to the RM and the metrics store:
// ops.go, degraded.go; configs/prometheus-rules.yml), and the Go and
// process collectors, on one registry that is never the global one.
//
// # What it owns
//
// The series and their names (colocd_*), Metrics and its Handler. The
// engine and the API record through small interfaces of their own; every
// method is safe on a nil *Metrics. configs/grafana-dashboard.json reads
// these names, and a test checks every name it uses is exported.
//
// # What it must not do
//
// It keeps no state of its own beyond the series and the label values it
// has handed out (labels.go: the queue and kind labels are bounded, the
// first ones seen kept, later ones "other"), reads no clock (the
// engine passes its times in) and no build globals (the daemon passes
// BuildInfo), and imports nothing of colocd but queue (the counts it reads
// at scrape time).
//
// # Upgrading
//
// Two histograms were renamed to Prometheus's *_duration_seconds
// convention: colocd_decision_seconds is now
// colocd_decision_duration_seconds and colocd_api_request_seconds is now
// colocd_api_request_duration_seconds (same buckets and labels; their
// _bucket, _sum and _count series follow). The route label no longer shows
// the mux's pattern syntax: the status page is route="/" (was "/{$}"), and
// requests to no endpoint (the JSON 404) are route="other" (were "/").
// Update recording rules, alerts and dashboards that name the old series or
// labels; history under the old names is not carried over. New series:
// colocd_build_info, colocd_job_wait_duration_seconds,
// colocd_forced_admissions_total{reason}, colocd_learning_ticks_total,
// colocd_learning_last_tick_timestamp_seconds and
// colocd_backend_up{backend}. Later: colocd_admissions_total and
// colocd_job_wait_duration_seconds gained the queue and kind labels (sum
// them away where one series was read); new are colocd_pending_jobs,
// colocd_oldest_pending_job_created_timestamp_seconds,
// colocd_pending_jobs_scan_truncated, colocd_dependency_degraded,
// colocd_dependency_degraded_since_timestamp_seconds,
// colocd_data_dir_free_bytes, colocd_data_dir_reserve_bytes,
// colocd_kerberos_ticket_expiry_timestamp_seconds,
// colocd_yarn_client_certificate_expiry_timestamp_seconds,
// colocd_retention_runs_total, colocd_retention_deleted_jobs_total,
// colocd_retention_last_success_timestamp_seconds and
// colocd_outbound_request_duration_seconds.
package telemetry
