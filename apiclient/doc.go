// Package apiclient is the typed client of colocd's HTTP API (/v1, served
// by package daemon/api): one method per endpoint, each taking a context
// and returning the decoded body (a type of package api/v1, the API's wire
// types) together with the server's bytes (Reply), or an *Error carrying
// the status, message and field of a non-2xx reply.
//
// The command-line client (cmd/colocd) and tests talk to the API through
// this package; other programs may too.
//
// # What it must not do
//
// It imports nothing of colocd but api/v1 (a test enforces it): not the
// store's, the learner's or the journal's types, nor package daemon or
// daemon/api (only the test helper apiclienttest runs a server). It makes
// no admission decisions and holds no global state: the base URL, token
// and *http.Client are a Client's. It does no I/O before a method is
// called, and reads no reply beyond Options.MaxReplyBytes.
package apiclient
