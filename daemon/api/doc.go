// Package api is colocd's HTTP face: the versioned JSON API under /v1 (jobs,
// preferences, decisions, goodness), health and readiness probes, the
// Prometheus endpoint, and the status page at / (embedded static files that
// fetch everything from the API). It also owns the decision and goodness
// journal (bounded rings persisted as JSONL) and the Prometheus series.
//
// # Security
//
// Every endpoint except /healthz, /readyz and the static status page needs
// "Authorization: Bearer <token>". Tokens map to a user and a role:
//
//	reader     GET anything (including /metrics unless Deps.PublicMetrics)
//	submitter  + POST /v1/jobs as its own user, DELETE its own jobs
//	admin      + submit for any user, DELETE anyone's jobs, PUT/DELETE /v1/preferences
//
// Secrets are compared in constant time over every configured token.
// Bodies are capped at Deps.MaxBodyBytes (413), must be application/json
// (415) and are decoded strictly (unknown fields and wrong types are 400
// naming the field). Every error is JSON: {"error": "...", "field": "..."}.
//
// # What it must not do
//
// It does not import package daemon (the daemon imports it) and makes no
// admission decisions: it stores jobs, asks its Controller to Prepare, Kick
// and Kill, and reads what the daemon recorded. It keeps no global state:
// the Prometheus registry, clock and logger are passed in.
package api
