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
//	                                               422 for a new kind beyond Deps.MaxKinds
//	GET    /v1/jobs?state=&limit=       reader     {"jobs":[job+"position"],"count","counts":{state:n}}
//	                                               default states pending,admitted,running; "all";
//	                                               pending first in FIFO order, others newest first
//	GET    /v1/jobs/{id}                reader     job (+ "position", "estimated_wait" when pending;
//	                                               "decision" = the record that admitted it)
//	DELETE /v1/jobs/{id}                owner|admin pending → cancelled; admitted/running → killed
//	                                               (Controller.Kill); 409 if it changed state meanwhile,
//	                                               or when parked (resolve it instead)
//	POST   /v1/jobs/{id}/resolve        admin      {"outcome":"requeue|succeeded|failed|killed","reason"}:
//	                                               ends a parked job; 409 when it is not parked
//	GET    /v1/preferences              reader     {"kinds","h","pi","baseline","row_baseline",
//	                                               "observations","row_observations",
//	                                               "pair_observations","rejected","config"}
//	       ?format=csv[&matrix=pi|h]               header "given,<kinds>", one row per running kind
//	       ?format=snapshot                        the bandit.Snapshot (what PUT takes), always whole
//	       ?kinds=a,b (≤ 1,000 names)              rows and columns of those kinds, in that order
//	       ?limit=n (0–10,000) &offset=m           a page of rows; "rows" labels them, "total",
//	                                               "offset", "kinds_known" and X-Total-Count say how
//	                                               many there are; at most 100,000 cells (rows ×
//	                                               columns) per reply, else 400 on limit
//	GET    /v1/preferences/heatmap.svg  reader     π (or ?matrix=h) as an SVG heatmap of the 50 most
//	                                               observed kinds (?top=1–100, or ?kinds=, ≤ 100)
//	PUT    /v1/preferences              admin      import a bandit.Snapshot; persisted
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
//	                                               10000); pairs and nodes summarise all total
//	GET    /healthz, /readyz            none       liveness; readiness (503 with the reason;
//	                                               its details only with a valid token)
//	GET    /metrics                     reader     Prometheus (no token with Deps.PublicMetrics)
//	GET    /, /static/{file}            none       the status page (no data in it)
//
// Rows of every matrix are the running (given) kind, columns the queued
// kind. A job's "submit" spec is shown only to its owner and admins.
//
// The JSON bodies of /v1, read and written, are package apiclient's types
// (apiclient.JobRequest, apiclient.Job, apiclient.Preferences, ...),
// declared there once for this server and its clients.
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
// changed, and a retry with the same Idempotency-Key is safe. A job whose
// stored record was damaged and quarantined is 410.
//
// Readiness is Controller.Ready. Without a valid token, /readyz names only
// the reason its error wraps (a PublicReasoner: the engine's starting,
// store unavailable, store writes failing, cannot sync with the cluster,
// admission loop stalled), never the rest, which may name RM hosts and
// users. Every store write the API makes is reported to
// Deps.Writes, so that readiness sees a failing disk.
//
// Estimated wait of a pending job at position p: the sum, over the p jobs
// ahead of it, of their kind's EWMA runtime (queue.KindHistory; a kind with
// no history counts as the mean EWMA of those with one), divided by the
// number of jobs admitted or running now (at least 1). It ignores that the
// learned policy may reorder the queue; it is a guide.
//
// # Security
//
// Every endpoint except /healthz, /readyz and the static status page needs
// "Authorization: Bearer <token>" (401 with WWW-Authenticate otherwise).
// Tokens map to a user and a role:
//
//	reader     GET anything
//	submitter  + POST /v1/jobs as its own user (another "user" is 403), DELETE its own jobs
//	admin      + submit for any user, DELETE anyone's jobs, PUT/DELETE /v1/preferences
//
// Secrets are compared in constant time against every configured token
// (SHA-256 digests, no early exit). Bodies are capped at Deps.MaxBodyBytes
// (413), must be application/json (415), must arrive within the server's
// read timeout (408) and are decoded strictly, at every level: invalid
// UTF-8 is 400 naming the byte offset; a key that matches a field only
// case-insensitively ("KIND"), an unknown field, a key given twice in an
// object and a wrong JSON type are 400 naming the field. A body is read
// only after authentication and only by an endpoint that takes one; the
// response to a request whose body was not read to its end says
// "Connection: close" and the connection closes without the rest being
// read (net/http would otherwise read up to 256 KiB of it first, to reuse
// the connection). Every error is JSON:
// {"error": "...", "field": "..."}; 405 carries Allow. The status page is
// served with a strict Content-Security-Policy; its token comes from
// ?token= or a form, lives in sessionStorage and is sent by fetch().
//
// # What it must not do
//
// It does not import package daemon (the daemon imports it) and makes no
// admission decisions: it stores jobs, asks its Controller to Prepare, Kick
// and Kill, and reads what the daemon recorded (the learned profiles through
// ProfileSource, without writing them). It keeps no global state:
// the Prometheus registry, clock and logger are passed in.
package api
