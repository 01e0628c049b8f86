package api

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/profile"
)

// ProfileSource is what the API reads of the learned per-kind resource
// profiles (*profile.Model implements it). It must be safe for concurrent
// use: handlers read while the learning tick writes.
type ProfileSource interface {
	// Profiles returns every kind the model knows.
	Profiles() []profile.Profile
	// Profile returns one kind's profile; the prior, with Known false, for
	// a kind never observed.
	Profile(kind string) profile.Profile
	// Baseline is a node's usage with no container, in utilisation units.
	Baseline() profile.Vector
	// Sigma is the residual standard deviation per resource, in
	// utilisation units.
	Sigma() profile.Vector
	// Observations counts the node observations folded in.
	Observations() int64
}

var _ ProfileSource = (*profile.Model)(nil)

// maxProfileFilter bounds the kinds of ?kind=: each one not known to the
// model costs a pass over every known kind (the prior and its spread).
const maxProfileFilter = 1000

// profilesView is the body of GET /v1/profiles. Each source method takes
// the model's lock on its own, so the fields may straddle a learning tick.
type profilesView struct {
	Kinds        []kindProfileView `json:"kinds"`        // sorted by kind
	Baseline     rateView          `json:"baseline"`     // a node running nothing
	Sigma        rateView          `json:"sigma"`        // residual standard deviation of a node's usage
	Observations int64             `json:"observations"` // node observations folded in
	Limits       limitsView        `json:"limits"`       // the maxima the rates were converted with
}

// kindProfileView is one kind's profile: the per-container demand and its
// standard deviation in measured units (demand, std) and the model's own
// utilisation units (demand_util).
type kindProfileView struct {
	Kind       string   `json:"kind"`
	Known      bool     `json:"known"` // false: never observed, demand is the prior
	Ticks      int64    `json:"ticks"`
	Weight     float64  `json:"weight"`
	Dominant   string   `json:"dominant"` // cpu, disk, net_in or net_out
	Demand     rateView `json:"demand"`
	Std        rateView `json:"std"`
	DemandUtil utilView `json:"demand_util"`
}

// rateView is a profile.Vector in measured units: CPU and I/O wait as
// fractions of a node's CPU time, the rest in bytes per second. A rate is
// null where Deps.Limits leaves its maximum at zero (unknown), since no
// conversion is possible.
type rateView struct {
	CPU          float64  `json:"cpu"`
	IOWait       float64  `json:"iowait"`
	DiskReadBps  *float64 `json:"disk_read_bps"`
	DiskWriteBps *float64 `json:"disk_write_bps"`
	NetInBps     *float64 `json:"net_in_bps"`
	NetOutBps    *float64 `json:"net_out_bps"`
}

// utilView is a profile.Vector as is: every amount a fraction of one
// node's capacity of the resource.
type utilView struct {
	CPU       float64 `json:"cpu"`
	IOWait    float64 `json:"iowait"`
	DiskRead  float64 `json:"disk_read"`
	DiskWrite float64 `json:"disk_write"`
	NetIn     float64 `json:"net_in"`
	NetOut    float64 `json:"net_out"`
}

// limitsView is goodness.Limits in bytes per second (0: unknown).
type limitsView struct {
	DiskReadBps  float64 `json:"disk_read_bps"`
	DiskWriteBps float64 `json:"disk_write_bps"`
	NetInBps     float64 `json:"net_in_bps"`
	NetOutBps    float64 `json:"net_out_bps"`
}

// ratesOf converts v with lim (profile.Vector.Rates), leaving out the
// rates whose maximum is unknown.
func ratesOf(v profile.Vector, lim goodness.Limits) rateView {
	u := v.Rates(lim)
	rate := func(x, limit float64) *float64 {
		if limit > 0 {
			return &x
		}
		return nil
	}
	return rateView{
		CPU: u.CPU, IOWait: u.IOWait,
		DiskReadBps: rate(u.DiskRead, lim.DiskRead), DiskWriteBps: rate(u.DiskWrite, lim.DiskWrite),
		NetInBps: rate(u.NetRecv, lim.NetRecv), NetOutBps: rate(u.NetSent, lim.NetSent),
	}
}

func utilOf(v profile.Vector) utilView {
	return utilView{
		CPU: v[profile.CPU], IOWait: v[profile.IOWait], DiskRead: v[profile.DiskRead],
		DiskWrite: v[profile.DiskWrite], NetIn: v[profile.NetIn], NetOut: v[profile.NetOut],
	}
}

// dominantName names Profile.Dominant's resource; the disk (reads and
// writes together, reported as DiskRead) is "disk".
func dominantName(p profile.Profile) string {
	r, _ := p.Dominant()
	if r == profile.DiskRead {
		return "disk"
	}
	return r.String()
}

func (s *server) kindProfileView(p profile.Profile) kindProfileView {
	return kindProfileView{
		Kind: p.Kind, Known: p.Known, Ticks: p.Ticks, Weight: p.Weight, Dominant: dominantName(p),
		Demand: ratesOf(p.Demand, s.limits), Std: ratesOf(p.Std, s.limits), DemandUtil: utilOf(p.Demand),
	}
}

// profilesView reads the model: every kind it knows, or those of filter
// (kinds it does not know as their prior), sorted by kind.
func (s *server) profilesView(filter []string) profilesView {
	var ps []profile.Profile
	if filter == nil {
		ps = s.profiles.Profiles()
	} else {
		ps = make([]profile.Profile, 0, len(filter))
		for _, k := range filter {
			ps = append(ps, s.profiles.Profile(k))
		}
	}
	slices.SortFunc(ps, func(a, b profile.Profile) int { return strings.Compare(a.Kind, b.Kind) })
	v := profilesView{
		Kinds:        make([]kindProfileView, 0, len(ps)),
		Baseline:     ratesOf(s.profiles.Baseline(), s.limits),
		Sigma:        ratesOf(s.profiles.Sigma(), s.limits),
		Observations: s.profiles.Observations(),
		Limits: limitsView{
			DiskReadBps: s.limits.DiskRead, DiskWriteBps: s.limits.DiskWrite,
			NetInBps: s.limits.NetRecv, NetOutBps: s.limits.NetSent,
		},
	}
	for _, p := range ps {
		v.Kinds = append(v.Kinds, s.kindProfileView(p))
	}
	return v
}

// parseKindFilter parses ?kind=a,b: nil (every kind) when empty; else the
// distinct, non-empty names.
func parseKindFilter(q string) ([]string, error) {
	if strings.TrimSpace(q) == "" {
		return nil, nil
	}
	var out []string
	for part := range strings.SplitSeq(q, ",") {
		k := strings.TrimSpace(part)
		if k == "" || slices.Contains(out, k) {
			continue
		}
		if len(out) == maxProfileFilter {
			return nil, errorf(http.StatusBadRequest, "kind", "more than %d kinds in the filter", maxProfileFilter)
		}
		out = append(out, k)
	}
	return out, nil // nil if only commas: every kind
}

// getProfiles: GET /v1/profiles[?kind=a,b][&format=json|csv]. json
// (default) is profilesView; csv is one row per kind with its demand in
// measured units, under the header profilesCSVHeader. 404 when the daemon
// runs without a profile model.
func (s *server) getProfiles(w http.ResponseWriter, r *http.Request, _ principal) error {
	if s.profiles == nil {
		return errorf(http.StatusNotFound, "", "no profile model")
	}
	q := r.URL.Query()
	filter, err := parseKindFilter(q.Get("kind"))
	if err != nil {
		return err
	}
	switch f := q.Get("format"); f {
	case "", "json":
		writeJSON(w, http.StatusOK, s.profilesView(filter))
	case "csv":
		b, err := profilesCSV(s.profilesView(filter).Kinds)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="colocd-profiles.csv"`)
		_, _ = w.Write(b)
	default:
		return errorf(http.StatusBadRequest, "format", "format %q is not json or csv", f)
	}
	return nil
}

// profilesCSVHeader is the header row of GET /v1/profiles?format=csv.
var profilesCSVHeader = []string{"kind", "known", "ticks", "weight", "dominant",
	"cpu", "iowait", "disk_read_bps", "disk_write_bps", "net_in_bps", "net_out_bps"}

// profilesCSV writes one row per kind: its demand in measured units. A
// rate whose maximum is unknown is an empty cell. Values use the shortest
// representation that parses back to the same float64.
func profilesCSV(kinds []kindProfileView) ([]byte, error) {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v)
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.Write(profilesCSVHeader)
	for _, k := range kinds {
		d := k.Demand
		_ = cw.Write([]string{k.Kind, strconv.FormatBool(k.Known), strconv.FormatInt(k.Ticks, 10), num(k.Weight), k.Dominant,
			num(d.CPU), num(d.IOWait), opt(d.DiskReadBps), opt(d.DiskWriteBps), opt(d.NetInBps), opt(d.NetOutBps)})
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}
