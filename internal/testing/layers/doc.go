// Package layers holds the test that keeps colocd's import rules true
// (docs/architecture.md, "Layers"): the API's wire types import nothing of
// ours, the API client only them, and the command line only the daemon,
// the bench, the client and the wire types. It has no code of its own.
package layers
