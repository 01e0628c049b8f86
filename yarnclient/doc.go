// Package yarnclient is colocd's client of the Hadoop YARN ResourceManager
// REST API (Hadoop 2.7 and 3.x), plus the one NodeManager endpoint and the
// one WebHDFS operation (GETDELEGATIONTOKEN) it needs.
//
// # What it owns
//
//   - The Go types of the documented JSON objects (ResourceManagerRest.md,
//     NodeManagerRest.md in apache/hadoop), under the documented field names,
//     decoding both the 2.7 and the 3.x shapes: cluster info and metrics,
//     nodes, applications (with the states, queue, user, applicationTags and
//     time filters, resourceRequests deselected), one application and its
//     state, attempts, the 3.x
//     attempt-containers endpoint and a NodeManager's containers.
//   - Submission over REST: new-application, then the
//     application-submission-context (202 Accepted + Location), with the
//     submitter's am-container-spec passed through untouched (but for
//     tokens added to its credentials, AddTokens); kill through
//     PUT .../state {"state":"KILLED"}.
//   - Acting for a user (As): the writes and the delegation token requests
//     carry doAs=<user> (WebHDFS: doas) and the server's proxy-user rules
//     decide, or, with simple auth, user.name=<user>.
//   - Delegation tokens: the RM's Cluster Delegation Tokens API
//     (RMDelegationToken, over Kerberos only) and WebHDFS's
//     GETDELEGATIONTOKEN (HDFSDelegationToken, across a namespace's HA
//     NameNodes); Hadoop's Token writable (ParseToken, Token.Encode, the
//     URL-safe base64 every one of these APIs speaks) and the delegation
//     token identifier; a submission's am-container-spec credentials
//     (Credentials, AddTokens).
//   - Submission by command (spark-submit, flink run, ...): the command runs
//     without a shell, with a timeout, its process group killed on timeout,
//     itself killed by the kernel when the daemon dies (Linux), its output
//     tail kept, and with the environment its CommandSpec gives
//     and nothing of the daemon's; the tags and the job reach it through
//     COLOCD_YARN_TAGS, COLOCD_JOB_* and COLOCD_PARAM_* and the
//     {{tags}}/{{job_id}}/{{kind}}/{{user}}/{{queue}}/{{param.NAME}} argv
//     placeholders, which CheckArgv keeps out of shell scripts;
//     AppsByTag and FindAppByTag then find the application. JobTags makes
//     colocd's lower-case tags; IsReservedTag spots them in a submission.
//   - Placement and Placements: which nodes an application's containers run
//     on, from the 3.x attempt-containers endpoint, or from the NodeManagers
//     (one sweep for many apps) when the RM is 2.x and has none.
//   - RM high availability: a list of RM URLs; a standby RM (3.x: 307 with
//     Location; 2.x: 200 "This is standby RM. Redirecting to ...") or an
//     unreachable one sends the call to the next RM, and the active one is
//     remembered.
//   - Authentication through Auth: simple auth (user.name) here;
//     Kerberos/SPNEGO in yarnclient/kerberos, which needs gokrb5 and so
//     lives apart, keeping this package standard library only. A 401 that
//     asks for Negotiate makes the client ask a Refresher Auth for fresh
//     credentials and send the call once more.
//   - Errors: YARN's RemoteException bodies become *RemoteError, matching
//     ErrNotFound, errBadRequest, ErrUnauthorized, ErrForbidden, ErrConflict
//     and (5xx) errUnavailable; an answer that is not the documented JSON is a
//     *decodeError with the status and the start of the body.
//
// # Retries, and what is never retried
//
// Idempotent GETs are retried after a 5xx answer or a connection error, with
// exponential backoff (Config.Retries, Backoff, MaxBackoff). A 401 that
// asks for Negotiate is sent once more, writes included, when the Auth is a
// Refresher (a server that refused the authentication did not act on the
// call). The writes — new-application, submit, kill and the RM delegation
// token — are never retried. WebHDFS's GETDELEGATIONTOKEN is a GET and
// retried like one, after passing over the NameNodes that are standby or
// unreachable. A write is sent to a
// second RM only when the first cannot have acted on it: it refused the
// connection, or it answered as a standby. After any other failure of
// SubmitApp the caller must ask the RM (App) whether the id exists before
// submitting again; that is how colocd submits exactly once. (The RM itself
// answers a second submission of an id it already knows with 202 and does
// nothing, so even a duplicate submit is harmless; only two concurrent
// submissions of one id get "already present! Cannot add a duplicate!",
// which matches ErrConflict.)
//
// # Gaps
//
// Delegation tokens are fetched and passed on, never renewed or
// cancelled here (the RM does that for an application's tokens), and
// never used to authenticate colocd itself: an Auth that sets
// "X-Hadoop-Delegation-Token" would plug in without changes here. Hadoop's
// hadoop.auth cookie is not kept (no cookie jar): every request
// authenticates afresh. Simple auth (user.name) and TLS with a custom CA
// (Config.CAFile) are built in. Only JSON is spoken, never XML. The
// scheduler, reservation, queue and priority APIs are not wrapped.
//
// # What it must not do
//
// It holds no global state and starts no goroutines that outlive a call. It
// does no network I/O in New. It does not import other colocd packages: the
// daemon adapts these types to its own Cluster interface. The fakes for tests
// (a ResourceManager and a NodeManager) live in yarnclient/yarntest.
package yarnclient
