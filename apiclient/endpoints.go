package apiclient

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
)

// Submit submits a job: POST /v1/jobs. With a non-empty idempotencyKey
// (printable ASCII, at most 128 bytes), repeating the call never makes a
// second job: the Reply's Status is 201 for a new job, 200 for the one an
// earlier call with the key made (409 if that asked for another job).
// Needs a submitter token (for its own user) or an admin one.
func (c *Client) Submit(ctx context.Context, req v1.JobRequest, idempotencyKey string) (Reply[v1.Job], error) {
	return send[v1.Job](ctx, c, submitRequest(idempotencyKey), req)
}

// SubmitJSON is Submit with the body as given, such as a job file in the
// shape of JobRequest: the server checks it (strictly: an unknown or
// repeated key is a 400 naming it).
func (c *Client) SubmitJSON(ctx context.Context, body []byte, idempotencyKey string) (Reply[v1.Job], error) {
	r := submitRequest(idempotencyKey)
	r.body = body
	return call[v1.Job](ctx, c, r)
}

func submitRequest(idempotencyKey string) request {
	r := request{method: http.MethodPost, path: "/v1/jobs"}
	if idempotencyKey != "" {
		r.header = map[string]string{"Idempotency-Key": idempotencyKey}
	}
	return r
}

// ListOptions select the jobs of GET /v1/jobs.
type ListOptions struct {
	// States are the states to list (v1.State names, or "all"); none
	// means the live queue: pending, admitted and running.
	States []string
	// Limit caps the jobs listed, in [1, 10000] (new(50)); nil means the
	// server's default (100). It is sent as it is: the server refuses one
	// out of range with a 400 naming "limit".
	Limit *int
	// Users, Queues and Kinds keep the jobs of these users, YARN queues
	// and kinds (none: any).
	Users, Queues, Kinds []string
	// Labels keeps the jobs carrying every one of these labels.
	Labels map[string]string
	// Since keeps the jobs submitted at or after it (zero: any).
	Since time.Time
	// Cursor continues a listing: the NextCursor of the page before, with
	// the same filters.
	Cursor string
}

func (o ListOptions) query() url.Values {
	q := limitQuery(o.Limit)
	for name, l := range map[string][]string{"state": o.States, "user": o.Users, "queue": o.Queues, "kind": o.Kinds} {
		if len(l) > 0 {
			q.Set(name, strings.Join(l, ","))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.Labels)) {
		q.Add("label", k+"="+o.Labels[k])
	}
	if !o.Since.IsZero() {
		q.Set("since", o.Since.UTC().Format(time.RFC3339))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// Jobs lists a page of jobs: GET /v1/jobs. Pending jobs come first in
// FIFO order, with their positions; the others follow newest first. The
// reply's NextCursor, when set, continues it (ListOptions.Cursor).
func (c *Client) Jobs(ctx context.Context, o ListOptions) (Reply[v1.JobList], error) {
	return call[v1.JobList](ctx, c, request{method: http.MethodGet, path: "/v1/jobs", query: o.query()})
}

// WhoAmI is who the server takes the caller for: GET /v1/whoami.
func (c *Client) WhoAmI(ctx context.Context) (Reply[v1.WhoAmI], error) {
	return call[v1.WhoAmI](ctx, c, request{method: http.MethodGet, path: "/v1/whoami"})
}

// OpenAPI is the server's OpenAPI 3.1 description: GET /v1/openapi.json.
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	_, b, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/openapi.json"})
	return b, err
}

// Job returns one job: GET /v1/jobs/{id}, with its position and
// estimated wait when it is pending.
func (c *Client) Job(ctx context.Context, id string) (Reply[v1.Job], error) {
	return call[v1.Job](ctx, c, request{method: http.MethodGet, path: jobPath(id)})
}

// Cancel cancels a pending job, or kills an admitted or running one on the
// cluster: DELETE /v1/jobs/{id}. The job's owner or an admin may. A job
// admitted while it was being cancelled is a 409: cancel it again to kill
// it.
func (c *Client) Cancel(ctx context.Context, id string) (Reply[v1.Job], error) {
	return call[v1.Job](ctx, c, request{method: http.MethodDelete, path: jobPath(id)})
}

// Resolve ends a parked job as the operator found it: POST
// /v1/jobs/{id}/resolve (admin). A job that is not parked is a 409.
func (c *Client) Resolve(ctx context.Context, id string, req v1.ResolveRequest) (Reply[v1.Job], error) {
	return send[v1.Job](ctx, c, request{method: http.MethodPost, path: jobPath(id) + "/resolve"}, req)
}

func jobPath(id string) string { return "/v1/jobs/" + url.PathEscape(id) }

// Preferences returns the learned preferences: GET /v1/preferences. The
// server refuses the whole matrix beyond 100,000 cells (316 kinds):
// select kinds or page the rows with PreferencesPage.
func (c *Client) Preferences(ctx context.Context) (Reply[v1.Preferences], error) {
	return c.PreferencesPage(ctx, Page{})
}

// Page selects part of a matrix endpoint's reply (GET /v1/preferences,
// /v1/profiles): the kinds of ?kinds= (none: every kind) and the page of
// rows ?limit= and ?offset=. The reply's Total says how many rows there
// are; the next page starts at Offset + the rows received.
type Page struct {
	// Kinds are the kinds to show (rows and columns of the preferences);
	// none means every kind.
	Kinds []string
	// Limit caps the rows, in [0, 10000] (new(50)); nil means every row
	// (from Offset on), if the reply stays within the server's limit.
	Limit *int
	// Offset is the first row, counted in the selected kinds.
	Offset int
}

func (p Page) query() url.Values {
	q := pageQuery(p.Limit, p.Offset)
	if len(p.Kinds) > 0 {
		q.Set("kinds", strings.Join(p.Kinds, ","))
	}
	return q
}

// PreferencesPage returns part of the learned preferences: the rows and
// columns of p.Kinds, the rows of the page: GET
// /v1/preferences?kinds=&limit=&offset=.
func (c *Client) PreferencesPage(ctx context.Context, p Page) (Reply[v1.Preferences], error) {
	return call[v1.Preferences](ctx, c, request{method: http.MethodGet, path: "/v1/preferences", query: p.query()})
}

// PreferencesCSV returns matrix m ("": π) as CSV, header row
// "given,<kinds>" and one row per running kind: GET
// /v1/preferences?format=csv&matrix=m.
func (c *Client) PreferencesCSV(ctx context.Context, m v1.Matrix) ([]byte, error) {
	return c.PreferencesCSVPage(ctx, m, Page{})
}

// PreferencesCSVPage is PreferencesCSV of part of the matrix, as
// PreferencesPage selects it.
func (c *Client) PreferencesCSVPage(ctx context.Context, m v1.Matrix, p Page) ([]byte, error) {
	q := p.query()
	q.Set("format", "csv")
	if m != "" {
		q.Set("matrix", string(m))
	}
	_, b, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/preferences", query: q, accept: "text/csv"})
	return b, err
}

// PreferencesSnapshot returns the learner's state in the form
// ImportPreferences takes: GET /v1/preferences?format=snapshot.
func (c *Client) PreferencesSnapshot(ctx context.Context) (Reply[v1.PreferencesSnapshot], error) {
	q := url.Values{"format": {"snapshot"}}
	return call[v1.PreferencesSnapshot](ctx, c, request{method: http.MethodGet, path: "/v1/preferences", query: q})
}

// ImportPreferences replaces the learned preferences with s (admin): PUT
// /v1/preferences. The reply is the preferences after the import.
func (c *Client) ImportPreferences(ctx context.Context, s v1.PreferencesSnapshot) (Reply[v1.Preferences], error) {
	return send[v1.Preferences](ctx, c, request{method: http.MethodPut, path: "/v1/preferences"}, s)
}

// ResetPreferences forgets every learned preference and kind (admin):
// DELETE /v1/preferences. The reply is the preferences after the reset.
func (c *Client) ResetPreferences(ctx context.Context) (Reply[v1.Preferences], error) {
	return call[v1.Preferences](ctx, c, request{method: http.MethodDelete, path: "/v1/preferences"})
}

// Profiles returns the learned resource profiles of kinds (none: every
// kind the model knows; one it never observed comes with its prior):
// GET /v1/profiles. A server without a profile model replies 404. The
// server refuses more than 1,000 kinds in one reply: page them with
// ProfilesPage.
func (c *Client) Profiles(ctx context.Context, kinds ...string) (Reply[v1.Profiles], error) {
	return call[v1.Profiles](ctx, c, request{method: http.MethodGet, path: "/v1/profiles", query: kindQuery(kinds)})
}

// ProfilesPage returns the profiles of p.Kinds (none: every kind the
// model knows), sorted by kind, the page of p: GET
// /v1/profiles?kinds=&limit=&offset=.
func (c *Client) ProfilesPage(ctx context.Context, p Page) (Reply[v1.Profiles], error) {
	return call[v1.Profiles](ctx, c, request{method: http.MethodGet, path: "/v1/profiles", query: p.query()})
}

// ProfilesCSV is Profiles as CSV, one row per kind with its demand in
// measured units: GET /v1/profiles?format=csv.
func (c *Client) ProfilesCSV(ctx context.Context, kinds ...string) ([]byte, error) {
	q := kindQuery(kinds)
	q.Set("format", "csv")
	_, b, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/profiles", query: q, accept: "text/csv"})
	return b, err
}

// ProfilesCSVPage is ProfilesPage as CSV.
func (c *Client) ProfilesCSVPage(ctx context.Context, p Page) ([]byte, error) {
	q := p.query()
	q.Set("format", "csv")
	_, b, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/profiles", query: q, accept: "text/csv"})
	return b, err
}

func kindQuery(kinds []string) url.Values {
	q := url.Values{}
	if len(kinds) > 0 {
		q.Set("kind", strings.Join(kinds, ","))
	}
	return q
}

// Queues returns the fairness stage's queues: each one's class, guarantee,
// owed and received service and deficit as of the last decision:
// GET /v1/queues.
func (c *Client) Queues(ctx context.Context) (Reply[v1.QueuesReport], error) {
	return call[v1.QueuesReport](ctx, c, request{method: http.MethodGet, path: "/v1/queues"})
}

// Decisions returns up to limit admission decisions, newest first (nil:
// the server's default, 50): GET /v1/decisions.
func (c *Client) Decisions(ctx context.Context, limit *int) (Reply[v1.DecisionList], error) {
	return call[v1.DecisionList](ctx, c, request{method: http.MethodGet, path: "/v1/decisions", query: limitQuery(limit)})
}

// GoodnessOptions select the window of GET /v1/goodness.
type GoodnessOptions struct {
	// From and To bound the window, From <= at < To; zero To means the
	// server's now, zero From 24 hours before To (on the simulator: the
	// daemon's start, Clock.Started).
	From, To time.Time
	// Limit caps the records returned, the newest (nil: the server's
	// default, 1000); the summaries cover the whole window.
	Limit *int
}

// Goodness returns the goodness observed in a window, with summaries by
// pair of kinds and by node: GET /v1/goodness.
func (c *Client) Goodness(ctx context.Context, o GoodnessOptions) (Reply[v1.GoodnessList], error) {
	q := limitQuery(o.Limit)
	if !o.From.IsZero() {
		q.Set("from", o.From.Format(time.RFC3339Nano))
	}
	if !o.To.IsZero() {
		q.Set("to", o.To.Format(time.RFC3339Nano))
	}
	return call[v1.GoodnessList](ctx, c, request{method: http.MethodGet, path: "/v1/goodness", query: q})
}

// Clock returns the daemon's clock and how its timestamps map onto the
// wall clock: GET /v1/clock.
func (c *Client) Clock(ctx context.Context) (Reply[v1.Clock], error) {
	return call[v1.Clock](ctx, c, request{method: http.MethodGet, path: "/v1/clock"})
}

// limitQuery is the query of an optional limit.
func limitQuery(limit *int) url.Values {
	q := url.Values{}
	if limit != nil {
		q.Set("limit", strconv.Itoa(*limit))
	}
	return q
}

// HA is GET /v1/ha (reader).
func (c *Client) HA(ctx context.Context) (Reply[v1.HAStatus], error) {
	return call[v1.HAStatus](ctx, c, request{method: http.MethodGet, path: "/v1/ha"})
}
