package api

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/colocd/colocd/apiclient"
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

// ratesOf converts v with lim (profile.Vector.Rates), leaving out the
// rates whose maximum is unknown.
func ratesOf(v profile.Vector, lim goodness.Limits) apiclient.Rates {
	u := v.Rates(lim)
	rate := func(x, limit float64) *float64 {
		if limit > 0 {
			return &x
		}
		return nil
	}
	return apiclient.Rates{
		CPU: u.CPU, IOWait: u.IOWait,
		DiskReadBps: rate(u.DiskRead, lim.DiskRead), DiskWriteBps: rate(u.DiskWrite, lim.DiskWrite),
		NetInBps: rate(u.NetRecv, lim.NetRecv), NetOutBps: rate(u.NetSent, lim.NetSent),
	}
}

func utilOf(v profile.Vector) apiclient.Util {
	return apiclient.Util{
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

func (s *server) kindProfileView(p profile.Profile) apiclient.KindProfile {
	return apiclient.KindProfile{
		Kind: p.Kind, Known: p.Known, Ticks: p.Ticks, Weight: p.Weight, Dominant: dominantName(p),
		Demand: ratesOf(p.Demand, s.limits), Std: ratesOf(p.Std, s.limits), DemandUtil: utilOf(p.Demand),
	}
}

// profilesView reads the model: every kind it knows, or those of filter
// (kinds it does not know as their prior), sorted by kind.
func (s *server) profilesView(filter []string) apiclient.Profiles {
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
	v := apiclient.Profiles{
		Kinds:        make([]apiclient.KindProfile, 0, len(ps)),
		Baseline:     ratesOf(s.profiles.Baseline(), s.limits),
		Sigma:        ratesOf(s.profiles.Sigma(), s.limits),
		Observations: s.profiles.Observations(),
		Limits: apiclient.Limits{
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
// (default) is apiclient.Profiles; csv is one row per kind with its demand in
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
func profilesCSV(kinds []apiclient.KindProfile) ([]byte, error) {
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
