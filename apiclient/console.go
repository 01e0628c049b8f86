package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
)

// The status console's endpoints.

// NodeOptions select the page of GET /v1/nodes.
type NodeOptions struct {
	// Sort is "name" (the default) or "goodness": lowest latest G first,
	// nodes without a record last.
	Sort string
	// Limit caps the nodes listed (nil: the server's default, 500); Offset
	// is the first, in Sort order.
	Limit  *int
	Offset int
}

// Nodes returns the cluster's nodes as the engine last read them, each
// with its applications and latest goodness, and a histogram of every
// node's G: GET /v1/nodes.
func (c *Client) Nodes(ctx context.Context, o NodeOptions) (Reply[v1.NodeList], error) {
	q := pageQuery(o.Limit, o.Offset)
	if o.Sort != "" {
		q.Set("sort", o.Sort)
	}
	return call[v1.NodeList](ctx, c, request{method: http.MethodGet, path: "/v1/nodes", query: q})
}

// ClusterOptions select the applications of GET /v1/cluster.
type ClusterOptions struct {
	// Jobs keeps only the applications of these colocd job ids; none:
	// every running application, other tenants' included.
	Jobs []string
	// Limit caps the applications listed (nil: the server's default, 500);
	// Offset is the first, in application-id order.
	Limit  *int
	Offset int
}

// Cluster returns the running applications as the engine last read them,
// with the nodes each occupies: GET /v1/cluster.
func (c *Client) Cluster(ctx context.Context, o ClusterOptions) (Reply[v1.ClusterStatus], error) {
	q := pageQuery(o.Limit, o.Offset)
	if len(o.Jobs) > 0 {
		q.Set("jobs", strings.Join(o.Jobs, ","))
	}
	return call[v1.ClusterStatus](ctx, c, request{method: http.MethodGet, path: "/v1/cluster", query: q})
}

// TrendOptions select the window of GET /v1/goodness/trend.
type TrendOptions struct {
	// From and To bound the window; zero To is the server's now, zero From
	// the first record of the default window of GET /v1/goodness.
	From, To time.Time
	// Buckets is how many equal time buckets (0: the server's default).
	Buckets int
}

// GoodnessTrend returns the nodes' goodness over a window in equal time
// buckets: GET /v1/goodness/trend.
func (c *Client) GoodnessTrend(ctx context.Context, o TrendOptions) (Reply[v1.GoodnessTrend], error) {
	q := url.Values{}
	if !o.From.IsZero() {
		q.Set("from", o.From.Format(time.RFC3339Nano))
	}
	if !o.To.IsZero() {
		q.Set("to", o.To.Format(time.RFC3339Nano))
	}
	if o.Buckets != 0 {
		q.Set("buckets", strconv.Itoa(o.Buckets))
	}
	return call[v1.GoodnessTrend](ctx, c, request{method: http.MethodGet, path: "/v1/goodness/trend", query: q})
}

// Summary returns the run since the daemon started: jobs by state, waits
// and runtimes, admissions and goodness: GET /v1/summary.
func (c *Client) Summary(ctx context.Context) (Reply[v1.Summary], error) {
	return call[v1.Summary](ctx, c, request{method: http.MethodGet, path: "/v1/summary"})
}

// pageQuery is the query of an optional limit and an offset.
func pageQuery(limit *int, offset int) url.Values {
	q := limitQuery(limit)
	if offset != 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	return q
}
