// Package apiclient is the typed client of colocd's HTTP API (/v1, served
// by package daemon/api). It owns two things:
//
//   - The wire types of the v1 API, declared once: the JSON bodies the
//     server writes (Job, JobList, Preferences, Profiles, DecisionList,
//     GoodnessList, ErrorBody) and reads (JobRequest, ResolveRequest). The
//     server encodes its replies with these types, so a client decodes
//     exactly what was sent. Where the server sends a type of another
//     colocd package as is (queue.Job, bandit.Snapshot, bandit.Config,
//     journal.DecisionRecord), these types embed or refer to it.
//   - Client: one method per endpoint, each taking a context and returning
//     the decoded body together with the server's bytes (Reply), or an
//     *Error carrying the status, message and field of a non-2xx reply.
//
// The command-line client (cmd/colocd) and tests talk to the API through
// this package; other programs may too.
//
// # What it must not do
//
// It does not import package daemon or daemon/api (the server imports it
// for the wire types; only the test helper apiclienttest runs a server),
// makes no admission decisions and holds no global state: the base URL,
// token and *http.Client are a Client's. It does no I/O before a method is
// called, and reads no reply beyond Options.MaxReplyBytes.
package apiclient
