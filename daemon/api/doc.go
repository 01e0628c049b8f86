// Package api is colocd's HTTP face: the versioned JSON API under /v1 (jobs,
// preferences, resource profiles, decisions, goodness), health and
// readiness probes, the Prometheus endpoint, and the status page at /
// (embedded static files that fetch everything from the API). It also owns
// the decision and goodness journal (bounded rings persisted as JSONL) and
// colocd's Prometheus series.
//
// # Endpoints
//
//	POST   /v1/jobs                     submitter  body {"kind","user","queue","priority",
//	                                               "resources":{"containers","memory_mb","vcores"},
//	                                               "submit":{...},"deadline":RFC3339,"labels":{}}
//	                                               (memory_mb, vcores per container; optional
//	                                               Idempotency-Key header) → 201 + Location, or
//	                                               200 with the same job for a repeated key;
//	                                               400 for a malformed field; 422 for a new kind
//	                                               beyond Deps.MaxKinds, or a value the backend's
//	                                               configuration refuses ("Jobs" below)
//	GET    /v1/jobs?state=&user=&queue= reader     {"jobs":[job+"position"],"count","counts":{state:n},"now",
//	       &kind=&label=k=v&since=                 "next_cursor"}: a page (limit, default 100, at most
//	       &limit=&cursor=                         10,000) of the jobs the filters select (user, queue,
//	                                               kind comma-separated; label repeatable, all must
//	                                               match; since RFC 3339, submitted at or after);
//	                                               default states pending,admitted,running; "all";
//	                                               pending first in FIFO order (positions over every
//	                                               pending job), others newest first; next_cursor,
//	                                               with the same filters, continues it (a page reads
//	                                               at most 100,000 jobs: a selective filter may give
//	                                               a short page with a cursor)
//	GET    /v1/jobs/{id}                reader     job (+ "position", "estimated_wait" when pending;
//	                                               "decision" = the record that admitted it); another
//	                                               user's job, to a non-admin, without its "submit",
//	                                               "idempotency_key", "labels" and "diagnostics", and
//	                                               "redacted": true (listings too)
//	DELETE /v1/jobs/{id}                owner|group|admin pending → cancelled; admitted/running → killed
//	                                               (Controller.Kill); 409 if it changed state meanwhile,
//	                                               or when parked (resolve it instead)
//	POST   /v1/jobs/{id}/resolve        admin      {"outcome":"requeue|succeeded|failed|killed","reason"}:
//	                                               ends a parked job; 409 when it is not parked
//	GET    /v1/whoami                   reader     {"user","role","role_rule","groups","principal","method",
//	                                               "real_user","proxy_rule"}: who the caller is taken for
//	GET    /v1/openapi.json             none       the OpenAPI 3.1 description of every endpoint
//	                                               (openapi.yaml; docs/openapi.json)
//	GET    /v1/preferences              reader     {"kinds","h","pi","baseline","row_baseline",
//	                                               "observations","row_observations",
//	                                               "pair_observations","rejected","config"}
//	       ?format=csv[&matrix=pi|h|n]             header "running kind \ queued kind,<kinds>", one row
//	                                               per running kind (n: the pair observation counts);
//	                                               in every CSV a name starting with =, +, -, @, tab
//	                                               or CR gets a leading ' (no spreadsheet formula)
//	       ?format=snapshot                        the v1.PreferencesSnapshot (what PUT takes), always whole
//	       ?kinds=a,b (≤ 1,000 names)              rows and columns of those kinds, in that order
//	       ?limit=n (0–10,000) &offset=m           a page of rows; "rows" labels them, "total",
//	                                               "offset", "kinds_known" and X-Total-Count say how
//	                                               many there are; at most 100,000 cells (rows ×
//	                                               columns) per reply, else 400 on limit
//	GET    /v1/preferences/heatmap.svg  reader     π (or ?matrix=h) as an SVG heatmap of the 50 most
//	                                               observed kinds (?top=1–100, or ?kinds=, ≤ 100):
//	                                               each cell π and its observation count n, on a fixed
//	                                               0–1 colour scale; a row never observed (the prior)
//	                                               grey
//	PUT    /v1/preferences              admin      import a v1.PreferencesSnapshot; persisted. 400 naming the
//	                                               field for counters over bandit.MaxCount (2^53), a
//	                                               kind against the kind rule of jobs, or one under
//	                                               learning.foreign.prefix unless the placement read
//	                                               makes foreign kinds
//	DELETE /v1/preferences              admin      reset; persisted
//	GET    /v1/profiles?kinds=a,b       reader     {"kinds":[{"kind","known","ticks","weight","dominant",
//	                                               "demand","std","demand_util"}],"baseline","sigma",
//	                                               "observations","limits"} sorted by kind; 404 without
//	                                               a profile model (Deps.Profiles); ?limit=&offset=
//	                                               page it ("total", X-Total-Count), at most 1,000
//	                                               kinds per reply; ?kind= is the old name of ?kinds=
//	       ?format=csv                             header "kind,known,ticks,weight,dominant,cpu,iowait,
//	                                               disk_read_bps,disk_write_bps,net_in_bps,net_out_bps"
//	GET    /v1/decisions?limit=         reader     {"decisions":[DecisionRecord]} newest first
//	GET    /v1/goodness?from=&to=&limit= reader    {"from","to","total","records","pairs","nodes"}:
//	                                               the newest limit records (default 1000, at most
//	                                               10000); pairs and nodes summarise all total.
//	                                               Default window: the last 24 h, or on the
//	                                               simulator since the daemon started. "g" is the
//	                                               learning signal (the goodness G, or G minus the
//	                                               profiles' prediction with learning.pair_reward
//	                                               residual); "chosen" is the queued kind started
//	                                               beside "given", the running one
//	GET    /v1/clock                    reader     v1.Clock {"simulated","now","wall_now","speed",
//	                                               "started","wall_started","runs":[{"from","wall_from",
//	                                               "speed"}]}: the daemon's clock, on which every
//	                                               timestamp lies (the simulator's virtual clock under
//	                                               backend sim), and each start of the simulator, to
//	                                               place any timestamp on the wall clock
//	GET    /v1/goodness/trend           reader     {"from","to","bucket_seconds","total","scale",
//	       ?from=&to=&buckets=                     "buckets":[{"from","count","mean_g","min_g","max_g"}]}:
//	                                               the window's node observations in buckets
//	                                               (default 60, at most 1000) of equal time; without
//	                                               from, the window starts at the oldest record of
//	                                               /v1/goodness's default window
//	GET    /v1/nodes?limit=&offset=     reader     {"available","read_at","capacity","free","total",
//	       &sort=name|goodness                     "offset","sort","goodness_from","goodness_to","scale",
//	                                               "histogram":{"edges","counts","no_record","mean_g"},
//	                                               "nodes":[{"name","capacity","free","containers",
//	                                               "apps":[{"app_id","job_id","kind","user","containers"}],
//	                                               "apps_total","goodness","g"}]}: the cluster's nodes
//	                                               as the engine last read them (a page: default 500,
//	                                               at most 10,000; X-Total-Count), each with its
//	                                               latest goodness record (null: none in /v1/goodness's
//	                                               default window), its goodness "g" and at most 20
//	                                               applications, most containers first; sort
//	                                               goodness: lowest g first
//	GET    /v1/cluster?jobs=&limit=&offset= reader {"available","read_at","capacity","free","nodes",
//	                                               "total","offset","apps":[{"app_id","job_id","kind",
//	                                               "user","queue","alloc","starts","containers",
//	                                               "nodes":[{"node","containers"}],"nodes_total"}]}: the
//	                                               running applications (colocd's and others') by id,
//	                                               each with at most 50 nodes, most containers first;
//	                                               ?jobs=a,b (≤ 1,000) those of these jobs
//	GET    /v1/summary                  reader     {"now","since","counts","submitted_ever","run",
//	                                               "admissions","goodness"}: the run since this daemon
//	                                               started (below)
//	GET    /healthz, /readyz            none       liveness; readiness (503 with the reason;
//	                                               its details only with a valid token)
//	GET    /metrics                     reader     Prometheus (no token with Deps.PublicMetrics)
//	GET    /, /static/{file}            none       the status page (no data in it; below)
//
// Rows of every matrix are the running kind, columns the queued kind (the
// goodness records' "given" and "chosen"). A job's "submit" spec is shown only to its owner and admins.
//
// The JSON bodies of /v1, read and written, are package api/v1's types
// (v1.JobRequest, v1.Job, v1.Preferences, ...), declared there once for
// this server and its clients; wire.go translates the store's, the
// learner's and the journal's types into them, and testdata/golden holds
// every endpoint's JSON over fixed data (TestGolden).
//
// A profile's demand and std are per container: "cpu" and "iowait" as
// fractions of a node's CPU time, "disk_read_bps", "disk_write_bps",
// "net_in_bps" and "net_out_bps" in bytes per second, converted from the
// model's utilisation units with Deps.Limits (null where that maximum is
// zero, unknown); "demand_util" is the model's own vector, every amount a
// fraction of one node's capacity ("cpu", "iowait", "disk_read",
// "disk_write", "net_in", "net_out"). "baseline" (a node running nothing)
// and "sigma" (the residual standard deviation of a node's usage) have the
// shape of demand. "dominant" is the largest demand: cpu, disk (reads and
// writes together), net_in or net_out. Kinds of ?kind= the model never
// observed are listed with known false and the prior.
//
// A job of a kind the learner does not know is stored only while it knows
// fewer than Deps.MaxKinds kinds (the preferences are K×K); the kind is
// added to the learner (Controller.AddKind) once the job is stored, so a
// job rejected for any reason adds none. The API reads the learner; its
// only writes (a new kind, PUT and DELETE /v1/preferences) go through the
// Controller, the engine, which persists them. Listings read only the jobs they return.
//
// A store that cannot write (ENOSPC, EDQUOT, EROFS, EFBIG, EIO anywhere in
// the error) makes a request 503 with Retry-After: 30 — nothing was
// changed, and a retry with the same Idempotency-Key is safe. So is a
// submission the store refuses under its space reserve (queue.SpaceError:
// the data directory is nearly full, and what is left is kept for the jobs
// already accepted). A job whose
// stored record was damaged and quarantined is 410.
//
// Readiness is Controller.Ready. Without a valid token, /readyz names only
// the reason its error wraps (a PublicReasoner: the engine's starting,
// store unavailable, data directory low on space, store writes failing,
// cannot sync with the cluster, admission loop stalled), never the rest, which may name RM hosts and
// users. Every store write the API makes is reported to
// Deps.Writes, so that readiness sees a failing disk.
//
// The node and cluster views (GET /v1/nodes, GET /v1/cluster) are the
// cluster state the engine last read (Deps.Cluster, engine.Engine's
// ClusterView: one read per loop step), with "read_at" its time on the
// daemon clock; "available" is false before the first read, or without
// Deps.Cluster. An application a node names but the state does not list
// counts one container there. The histogram of GET /v1/nodes counts every
// node, not only the page, by its latest G in 10 buckets equally spaced
// in ln G over the goodness range "scale" = [e, e⁴] (G = e^(1+x), x the
// node's usage sum); "no_record" counts the nodes without a record.
//
// The goodness the console reports (a node's "g", GET /v1/goodness/trend,
// the summary's) is Eq. 1 of the usage a goodness record holds, under
// Deps.Limits, counted once per node and learning tick. It is not the
// record's own "g", which is the reward the learner was credited: with
// learning.pair_reward residual, the goodness minus the profiles'
// prediction, which may be negative. Without limits (a zero field) no
// goodness is reported.
//
// GET /v1/summary stays bounded however many jobs the store holds:
// "counts" (every job by state, all runs) and "submitted_ever" are O(1);
// "run" describes the jobs submitted since the daemon started ("since",
// Deps.Clock's Started), read newest first in doubling batches up to
// 5,000 ("scanned", "complete" false when there were more): "states" by
// their state now, "admitted" and "mean_wait_seconds" (submission to
// admission), "mean_runtime_seconds" (running to finished, of those that
// succeeded); "admissions" counts the journaled admissions since the start
// (the newest 5,000 at most; "scanned", "oldest"): "chosen" from the
// learned distribution, "forced" by "max_skips" or "reservation", and
// "shadow"; "goodness" is the count, mean, min and max of G since the
// start, with its "scale".
//
// Estimated wait of a pending job at position p: the sum, over the p jobs
// ahead of it, of their kind's EWMA runtime (queue.KindHistory; a kind with
// no history counts as the mean EWMA of those with one), divided by the
// number of jobs admitted or running now (at least 1). It ignores that the
// learned policy may reorder the queue; it is a guide.
//
// # The status page
//
// An operator's console, self-contained (its own origin only, no inline
// script: statusCSP) and refreshed every 5 s with its requests in
// parallel: the run summary; the queue's first 20 jobs with position,
// wait estimate and why each is not admitted (from the newest decision:
// the stage that dropped it and why, the reservation, passed over,
// outside the window), and the whole queue's ETA; the running jobs with
// their progress against their kind's expected runtime (an estimate,
// at most 99 %) and the nodes they occupy; the nodes as tiles coloured by
// their latest G (log scale, with its key; at most 400 tiles, the
// histogram counting every node); the preference heatmap (the 15 most
// observed kinds) and what its baseline is; the goodness trend; the
// profile model's per-container demand; the newest decisions with their
// stages and the jobs passed over; the fairness queues. Every time shown
// is wall-clock with date and the browser's zone, placed with GET
// /v1/clock (v1.Clock.Wall); on the simulator the simulated clock
// is shown apart and durations on it are marked "simulated". Ages are
// measured on the daemon's clock, never the browser's.
//
// # Jobs
//
// A job runs in one queue: "queue" is the YARN queue fairness, the
// service curves and YARN all account it to. On YARN with REST
// submission, "submit" is an application-submission-context: its "queue"
// is filled from the job's, the job's from it when the job names none,
// and two different queues are refused (422, field "submit.queue", the
// reason naming "queue"); its "application-tags" may carry no tag
// starting with "colocd-" in any case (422, field
// "submit.application-tags[i]"): colocd marks its own applications so.
// With command submission, "submit" is {"params": {"NAME": "value", ...}}:
// the values of the parameters the operator declared
// (yarn.command.params), each one argument of the configured command at
// most, matching its whole pattern, within its max_length, without control
// characters, and not starting with "-" where it starts an argument. A
// parameter not declared, a value that breaks its rule and a required one
// left out are 422 naming "submit.params[NAME]" and the rule; "args",
// "env" and "dir" are 422 naming the field: the command, its environment
// and its working directory are the operator's. A "queue" needs
// {{queue}} in yarn.command.argv (else 422, field "queue"). The job's
// "user" is the authenticated caller's (or the doAs user's, through a
// proxy rule), never a parameter. A job queued before these rules that breaks one fails at
// admission instead.
//
// Applications are jobs' only as colocd submitted them: by the id it
// reserved (REST) or its authenticated tag (command), and, with REST, of
// the user it submitted as; an application of another user that carries
// a job's tags shows in GET /v1/cluster with no "job_id". Another user's
// application under the id colocd recorded for a job parks that job.
//
// # Security
//
// Every endpoint except /healthz, /readyz, /v1/openapi.json and the static
// status page needs an authenticated caller (401 otherwise, with
// WWW-Authenticate naming what is accepted: Negotiate, Bearer). Deps.Auth
// says how:
//
//   - Kerberos (AuthKerberos, AuthBoth): "Authorization: Negotiate" with an
//     SPNEGO token, or a bare Kerberos GSS token (MIT's GSS-API asked for
//     the Kerberos mechanism), for a service principal Deps.Kerberos accepts
//     (the service's HTTP/<host> keytab; gokrb5's server side: ticket,
//     authenticator, replay cache, 5 minutes of skew). The reply carries
//     "WWW-Authenticate: Negotiate <AP-REP>", so the client authenticates
//     the server too (mutual authentication). The client principal becomes
//     a user by Hadoop-shaped auth_to_local rules; one no rule maps is a
//     403.
//   - Bearer tokens (AuthTokens, AuthBoth), for service accounts: each names
//     its user and role, and may expire (401 token_expired). Secrets are
//     compared in constant time against every configured token (SHA-256
//     digests, no early exit).
//   - A TLS client certificate the server verified (Deps.ClientCerts), when
//     the request has no Authorization: its subject's common name is the
//     user.
//
// Roles, ordered, each with what the ones below may:
//
//	reader     GET anything (another user's job without its private fields)
//	submitter  + POST /v1/jobs (the job is the caller's), DELETE its own jobs
//	admin      + DELETE anyone's jobs, resolve, PUT/DELETE /v1/preferences
//
// A token carries its role; a Kerberos or certificate user gets the
// strongest role whose ACL (Deps.ACLs, Hadoop's "users groups" shape)
// names it or one of its groups (Deps.Groups: a groups file, the host's).
// A job's user is the authenticated caller: a "user" in the body is
// ignored (and logged). ?doAs=<user> (any case) on any request acts for
// another user when a proxy rule (Deps.ProxyUsers, hadoop.proxyuser.*'s
// shape: users, groups, client addresses) lets the caller; the groups and
// role are then the user's, and every such request is logged at INFO with
// both users and the rule. A caller may read whole and cancel its own jobs,
// those of a user sharing a group of Deps.JobGroups, and, as admin, any.
// Every 403 names the rule that refused it ("rule": "tokens",
// "api.acl.submitter", "api.proxy_users", "owner", "api.job_groups",
// "api.kerberos.auth_to_local").
//
// Replicated, a follower authenticates a request it forwards and passes
// the identity to the leader signed with Deps.ForwardKey (NewReplicated;
// docs/ha.md).
//
// Every error is JSON {"error": "...", "code": "...", "field": "...",
// "rule": "..."}: "code" is stable (v1.Code*: bad_request,
// unknown_parameter, unauthenticated, token_expired, forbidden,
// proxy_refused, not_found, method_not_allowed, request_timeout, conflict,
// idempotency_conflict, gone, payload_too_large, unsupported_media_type,
// refused, internal, leader_unreachable, unavailable); 405 carries Allow. A
// query parameter the endpoint does not take (the OpenAPI description is
// the list) is a 400 unknown_parameter naming it.
//
// Bodies are capped at Deps.MaxBodyBytes
// (413), must be application/json (415), must arrive within the server's
// read timeout (408) and are decoded strictly, at every level: invalid
// UTF-8 is 400 naming the byte offset; a key that matches a field only
// case-insensitively ("KIND"), an unknown field, a key given twice in an
// object and a wrong JSON type are 400 naming the field. A body is read
// only after authentication and only by an endpoint that takes one; the
// response to a request whose body was not read to its end says
// "Connection: close" and the connection closes without the rest being
// read (net/http would otherwise read up to 256 KiB of it first, to reuse
// the connection). The status page is
// served with a strict Content-Security-Policy; its token comes from
// ?token= or a form, lives in sessionStorage and is sent by fetch().
//
// # What it must not do
//
// It does not import package daemon (the daemon imports it) and makes no
// admission decisions: it stores jobs, asks its Controller to Prepare, Kick
// and Kill, and reads what the daemon recorded (the learned profiles through
// profileSource, without writing them). It keeps no global state:
// the Prometheus registry, clock and logger are passed in.
package api
