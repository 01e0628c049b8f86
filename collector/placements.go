package collector

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Placement is one application's containers on one host over a window, as
// the yarn_containers samples of the colocd-telegraf-yarn plugin show them.
// The plugin samples every Telegraf interval while the application holds
// containers on the host, and writes nothing for it otherwise.
type Placement struct {
	Host  string
	AppID string // application_<cluster timestamp>_<sequence>
	// Kind is the colocd job kind (Schema.ContainersKindTag); "" for an
	// application colocd did not submit, and for one whose every sample in
	// the window was written while the plugin could not ask the
	// ResourceManager.
	Kind string
	// Type and Queue are the application's YARN type and queue, as the
	// plugin's application_type and queue tags carry them ("" in samples
	// written without an answer from the ResourceManager, and from plugins
	// older than these tags).
	Type, Queue string
	// Name is the application's name, when the plugin writes it (its
	// application_name = "field"); the newest in the window.
	Name string
	// First and Last are the times of its first and last sample in the
	// window with containers > 0; Samples counts those samples.
	First, Last time.Time
	Samples     int
	// Containers is the mean of Schema.ContainersField over those samples.
	Containers float64
}

// The plugin's names that Schema does not name: fixed by the plugin
// (collector/telegrafplugin/plugins/inputs/yarncontainers).
const (
	placementAppTag    = "application_id"
	placementTypeTag   = "application_type"
	placementQueueTag  = "queue"
	placementNameField = "application_name"
)

// Result names of the placements query.
const (
	resultContainers = "containers"
	resultNames      = "names"
)

// Placements returns, for every host and every application with containers
// there in [from, to), what its yarn_containers samples say, sorted by host
// and application id. Samples of one application on one host are merged
// whatever their tags (a sample written while the ResourceManager was
// unreachable has no kind, type or queue); a sample with no containers does
// not count. One read for all hosts, in the configured language: the
// containers field, grouped by host, application and its tags, and the
// application_name field. An empty window gives no placement and no error.
func (c *Collector) Placements(ctx context.Context, from, to time.Time) ([]Placement, error) {
	if err := checkWindow(from, to); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("placements in [%s, %s)", fluxTime(from), fluxTime(to))
	acc := newPlacementAcc(from, to)
	var err error
	if c.cfg.Language == LanguageInfluxQL {
		err = c.runInfluxQL(ctx, op, c.placementsInfluxQL(from, to), func(st influxQLSeries) error {
			return c.decodeInfluxQLPlacements(st, acc)
		})
	} else {
		err = c.run(ctx, op, c.placementsQuery(from, to), func(body io.Reader) error {
			return c.decodePlacements(body, acc)
		})
	}
	if err != nil {
		return nil, err
	}
	return acc.result(), nil
}

// placementsQuery reads the window's containers samples and names as two
// pushed-down reads, each group()ed to one table (a string and an integer
// _value cannot share one).
func (c *Collector) placementsQuery(from, to time.Time) string {
	s := c.cfg.Schema
	var b strings.Builder
	fmt.Fprintf(&b, "// colocd collector: placements in [%s, %s)\n", fluxTime(from), fluxTime(to))
	for _, r := range []struct{ field, name string }{{s.ContainersField, resultContainers}, {placementNameField, resultNames}} {
		fmt.Fprintf(&b, "from(bucket: %s)\n", fluxString(c.cfg.Bucket))
		fmt.Fprintf(&b, "\t|> range(start: %s, stop: %s)\n", fluxTime(from), fluxTime(readStop(from, to)))
		fmt.Fprintf(&b, "\t|> filter(fn: (r) => r._measurement == %s and r._field == %s)\n",
			fluxString(s.ContainersMeasurement), fluxString(r.field))
		fmt.Fprintf(&b, "\t|> group()\n")
		fmt.Fprintf(&b, "\t|> yield(name: %s)\n", fluxString(r.name))
	}
	return b.String()
}

// placementsInfluxQL is the InfluxQL read: the containers field grouped by
// host, application and the tags the plugin adds, then the names.
func (c *Collector) placementsInfluxQL(from, to time.Time) string {
	s := c.cfg.Schema
	tags := []string{s.HostTag, placementAppTag, s.ContainersKindTag, placementTypeTag, placementQueueTag}
	groups := make([]string, len(tags))
	for i, t := range tags {
		groups[i] = influxQLIdent(t)
	}
	stmt := func(field string, groups []string) string {
		return fmt.Sprintf("SELECT %s::field FROM %s WHERE %s GROUP BY %s", influxQLIdent(field),
			influxQLIdent(s.ContainersMeasurement), influxQLWindow(from, to), strings.Join(groups, ", "))
	}
	return stmt(s.ContainersField, groups) + ";\n" + stmt(placementNameField, groups[:2])
}

// decodePlacements reads the Flux answer's CSV into acc.
func (c *Collector) decodePlacements(body io.Reader, acc *placementAcc) error {
	s := c.cfg.Schema
	f := newFluxCSV(body)
	var iResult int
	var iTags [5]int // host, application, kind, type, queue
	return f.rows(func() {
		iResult = f.col("result")
		for i, name := range []string{s.HostTag, placementAppTag, s.ContainersKindTag, placementTypeTag, placementQueueTag} {
			iTags[i] = f.col(name)
		}
	}, func(row []string, iTime, iValue int) error {
		t, err := rowTime(row, iTime)
		if err != nil {
			return err
		}
		host, app, value := cell(row, iTags[0]), cell(row, iTags[1]), cell(row, iValue)
		if cell(row, iResult) == resultNames {
			acc.name(host, app, t, value)
			return nil
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("_value %q: %w", value, err)
		}
		acc.add(sampleTags{host: host, app: app, kind: cell(row, iTags[2]), typ: cell(row, iTags[3]), queue: cell(row, iTags[4])}, t, v)
		return nil
	})
}

// decodeInfluxQLPlacements feeds one series of the InfluxQL answer to acc.
func (c *Collector) decodeInfluxQLPlacements(st influxQLSeries, acc *placementAcc) error {
	s := c.cfg.Schema
	if len(st.Columns) < 2 || st.Columns[0] != "time" {
		return fmt.Errorf("series %q without a leading time column and a value: columns %q", st.Name, st.Columns)
	}
	names := st.Columns[1] == placementNameField && s.ContainersField != placementNameField
	tags := sampleTags{host: st.Tags[s.HostTag], app: st.Tags[placementAppTag], kind: st.Tags[s.ContainersKindTag],
		typ: st.Tags[placementTypeTag], queue: st.Tags[placementQueueTag]}
	for _, row := range st.Values {
		if len(row) != len(st.Columns) {
			return fmt.Errorf("series %q: a row of %d cells under %d columns", st.Name, len(row), len(st.Columns))
		}
		if row[1] == nil {
			continue
		}
		t, err := influxQLTime(row[0])
		if err != nil {
			return err
		}
		if names {
			if name, ok := row[1].(string); ok {
				acc.name(tags.host, tags.app, t, name)
			}
			continue
		}
		n, ok := row[1].(json.Number)
		if !ok {
			return fmt.Errorf("_value %v of %s.%s is not a number", row[1], st.Name, st.Columns[1])
		}
		v, err := n.Float64()
		if err != nil {
			return fmt.Errorf("_value %q: %w", n, err)
		}
		acc.add(tags, t, v)
	}
	return nil
}

// sampleTags are the tags of one containers sample.
type sampleTags struct{ host, app, kind, typ, queue string }

// placementAcc folds samples, in any order, into one Placement per host
// and application.
type placementAcc struct {
	from, to time.Time
	byKey    map[[2]string]*placementSum
}

type placementSum struct {
	p        Placement
	sum      float64
	nameTime time.Time
	named    bool
}

func newPlacementAcc(from, to time.Time) *placementAcc {
	return &placementAcc{from: from, to: to, byKey: map[[2]string]*placementSum{}}
}

// get returns the sum of host and app, nil for a sample without them or
// outside the window.
func (a *placementAcc) get(host, app string, t time.Time) *placementSum {
	if host == "" || app == "" || t.Before(a.from) || !t.Before(a.to) {
		return nil
	}
	k := [2]string{host, app}
	ps := a.byKey[k]
	if ps == nil {
		ps = &placementSum{p: Placement{Host: host, AppID: app}}
		a.byKey[k] = ps
	}
	return ps
}

// add takes one containers sample v at t.
func (a *placementAcc) add(tags sampleTags, t time.Time, v float64) {
	if !(v > 0) || math.IsInf(v, 0) {
		return // no containers: not there
	}
	ps := a.get(tags.host, tags.app, t)
	if ps == nil {
		return
	}
	p := &ps.p
	if p.Samples == 0 || t.Before(p.First) {
		p.First = t
	}
	if p.Samples == 0 || t.After(p.Last) {
		p.Last = t
	}
	p.Samples++
	ps.sum += v
	// A sample written without the ResourceManager's answer lacks these;
	// the others of the application have them.
	p.Kind, p.Type, p.Queue = cmp.Or(p.Kind, tags.kind), cmp.Or(p.Type, tags.typ), cmp.Or(p.Queue, tags.queue)
}

// name takes the application's name at t; the newest wins.
func (a *placementAcc) name(host, app string, t time.Time, name string) {
	ps := a.get(host, app, t)
	if ps == nil || name == "" || (ps.named && t.Before(ps.nameTime)) {
		return
	}
	ps.p.Name, ps.nameTime, ps.named = name, t, true
}

// result lists the placements with at least one sample, sorted.
func (a *placementAcc) result() []Placement {
	out := make([]Placement, 0, len(a.byKey))
	for _, ps := range a.byKey {
		if ps.p.Samples == 0 {
			continue // a name without containers
		}
		p := ps.p
		p.Containers = ps.sum / float64(p.Samples)
		out = append(out, p)
	}
	slices.SortFunc(out, func(x, y Placement) int {
		if c := strings.Compare(x.Host, y.Host); c != 0 {
			return c
		}
		return strings.Compare(x.AppID, y.AppID)
	})
	return out
}
