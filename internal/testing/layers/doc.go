// Package layers holds the test that keeps colocd's import rules true
// (docs/architecture.md, "Layers"): the API's wire types import nothing of
// ours, the API client only them, the command line only the daemon, the
// bench, the client and the wire types, the store nothing of ours, the
// pipeline only the store's job type, the pure algorithm packages at most
// goodness, and the engine no HTTP package. It has no code of its own.
package layers
