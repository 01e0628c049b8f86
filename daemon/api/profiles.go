package api

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/profile"
)

// profileSource is what the API reads of the learned per-kind resource
// profiles (*profile.Model implements it). It must be safe for concurrent
// use: handlers read while the learning tick writes.
type profileSource interface {
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
	// Kinds lists the kinds the model knows.
	Kinds() []string
}

var _ profileSource = (*profile.Model)(nil)

// maxProfileFilter bounds the kinds of ?kinds= (of /v1/profiles, and of
// the matrix endpoints): each one not known to the model costs a pass over
// every known kind (the prior and its spread).
const maxProfileFilter = 1000

// maxProfiles bounds the kinds of one reply of GET /v1/profiles: each
// observed kind's weight and std cost a solve over the kinds it shares
// nodes with (about 0.3 ms at 1,000 kinds). More need ?limit= and
// ?offset=.
const maxProfiles = 1000

// ratesOf converts v with lim (profile.Vector.Rates), leaving out the
// rates whose maximum is unknown.
func ratesOf(v profile.Vector, lim goodness.Limits) v1.Rates {
	u := v.Rates(lim)
	rate := func(x, limit float64) *float64 {
		if limit > 0 {
			return &x
		}
		return nil
	}
	return v1.Rates{
		CPU: u.CPU, IOWait: u.IOWait,
		DiskReadBps: rate(u.DiskRead, lim.DiskRead), DiskWriteBps: rate(u.DiskWrite, lim.DiskWrite),
		NetInBps: rate(u.NetRecv, lim.NetRecv), NetOutBps: rate(u.NetSent, lim.NetSent),
	}
}

func utilOf(v profile.Vector) v1.Util {
	return v1.Util{
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

func (s *server) kindProfileView(p profile.Profile) v1.KindProfile {
	return v1.KindProfile{
		Kind: p.Kind, Known: p.Known, Ticks: p.Ticks, Weight: p.Weight, Dominant: dominantName(p),
		Demand: ratesOf(p.Demand, s.limits), Std: ratesOf(p.Std, s.limits), DemandUtil: utilOf(p.Demand),
	}
}

// profilesView reads the model: the page of mq (rows only: its limit and
// offset) of every kind it knows or those of mq.kinds (kinds it does not
// know as their prior), sorted by kind. More than maxProfiles kinds
// without a limit is a 400.
func (s *server) profilesView(mq matrixQuery) (v1.Profiles, error) {
	kinds := mq.kinds
	if kinds == nil {
		kinds = s.profiles.Kinds()
	}
	kinds = slices.Clone(kinds)
	slices.Sort(kinds)
	total := len(kinds)
	from := min(mq.offset, total)
	to := total
	if mq.limit >= 0 {
		to = min(from+mq.limit, total)
	}
	if to-from > maxProfiles {
		return v1.Profiles{}, errorf(http.StatusBadRequest, "limit", "%d kinds, over the %d one reply holds: select kinds (?kinds=) or page them (?limit= at most %d, ?offset=)",
			to-from, maxProfiles, maxProfiles)
	}
	v := v1.Profiles{
		Kinds:        make([]v1.KindProfile, 0, to-from),
		Baseline:     ratesOf(s.profiles.Baseline(), s.limits),
		Sigma:        ratesOf(s.profiles.Sigma(), s.limits),
		Observations: s.profiles.Observations(),
		Limits: v1.Limits{
			DiskReadBps: s.limits.DiskRead, DiskWriteBps: s.limits.DiskWrite,
			NetInBps: s.limits.NetRecv, NetOutBps: s.limits.NetSent,
		},
		Total: total, Offset: mq.offset,
	}
	for _, k := range kinds[from:to] {
		v.Kinds = append(v.Kinds, s.kindProfileView(s.profiles.Profile(k)))
	}
	return v, nil
}

// parseKindFilter parses a list of kinds, ?kinds=a,b (field names the
// parameter in errors): nil (every kind) when empty; else the distinct,
// non-empty names, in order.
func parseKindFilter(q, field string) ([]string, error) {
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
			return nil, errorf(http.StatusBadRequest, field, "more than %d kinds in the filter", maxProfileFilter)
		}
		out = append(out, k)
	}
	return out, nil // nil if only commas: every kind
}

// getProfiles: GET /v1/profiles[?kinds=a,b][&limit=n][&offset=m]
// [&format=json|csv]. json (default) is v1.Profiles; csv is one row
// per kind with its demand in measured units, under the header
// profilesCSVHeader. ?kind= is ?kinds= as it was first named. limit and
// offset page the kinds (sorted); X-Total-Count says how many there are.
// 404 when the daemon runs without a profile model.
func (s *server) getProfiles(w http.ResponseWriter, r *http.Request, _ principal) error {
	if s.profiles == nil {
		return errorf(http.StatusNotFound, "", "no profile model")
	}
	q := r.URL.Query()
	param := "kinds"
	if q.Has("kind") {
		if q.Has("kinds") {
			return errorf(http.StatusBadRequest, "kinds", "give kinds or kind (its old name), not both")
		}
		param = "kind"
	}
	var (
		mq  matrixQuery
		err error
	)
	if mq.kinds, err = parseKindFilter(q.Get(param), param); err != nil {
		return err
	}
	if mq.limit, mq.offset, err = parsePage(q); err != nil {
		return err
	}
	f := q.Get("format")
	if f != "" && f != "json" && f != "csv" {
		return errorf(http.StatusBadRequest, "format", "format %q is not json or csv", f)
	}
	v, err := s.profilesView(mq)
	if err != nil {
		return err
	}
	return writePage(w, v.Total, f == "csv", v, func() ([]byte, error) { return profilesCSV(v.Kinds) }, "colocd-profiles.csv")
}

// profilesCSVHeader is the header row of GET /v1/profiles?format=csv.
var profilesCSVHeader = []string{"kind", "known", "ticks", "weight", "dominant",
	"cpu", "iowait", "disk_read_bps", "disk_write_bps", "net_in_bps", "net_out_bps"}

// profilesCSV writes one row per kind: its demand in measured units. A
// rate whose maximum is unknown is an empty cell. Values use the shortest
// representation that parses back to the same float64.
func profilesCSV(kinds []v1.KindProfile) ([]byte, error) {
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
		_ = cw.Write([]string{csvText(k.Kind), strconv.FormatBool(k.Known), strconv.FormatInt(k.Ticks, 10), num(k.Weight), csvText(k.Dominant),
			num(d.CPU), num(d.IOWait), opt(d.DiskReadBps), opt(d.DiskWriteBps), opt(d.NetInBps), opt(d.NetOutBps)})
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}
