// Package v1 holds the JSON types of colocd's HTTP API, version 1: the
// bodies the server writes (Job, JobList, Preferences, Profiles,
// DecisionList, GoodnessList, ErrorBody, ...) and reads (JobRequest,
// ResolveRequest, PreferencesSnapshot). They are the public contract:
// docs/openapi.json describes them, and a golden file per endpoint
// (daemon/api/testdata/golden) guards their bytes.
//
// The server (package daemon/api) translates its own types (the store's
// jobs, the learner's snapshot, the journal's records) into these at the
// HTTP edge, so a field renamed in the store changes no client's JSON.
// The client (package apiclient) decodes into them.
//
// # What it must not do
//
// It imports nothing but the standard library: no other package of colocd
// (a test enforces it). It holds no logic beyond small helpers on its own
// types (Clock.Wall, Job.DecisionRecord, InStateOrder).
package v1
