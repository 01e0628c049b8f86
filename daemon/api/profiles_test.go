package api

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/profile/profiletest"
)

// testLimits are the test nodes' maxima in bytes/s, each different so
// that a rate converted with the wrong one shows.
var testLimits = goodness.Limits{DiskRead: 200e6, DiskWrite: 150e6, NetRecv: 125e6, NetSent: 100e6}

// trainedModel fits a model on profiletest's synthetic nodes.
func trainedModel(t testing.TB) *profile.Model {
	t.Helper()
	m := profile.New(profile.Config{})
	profiletest.Train(m)
	return m
}

// The expected JSON, built from the model's vectors with the test's own
// arithmetic and key names.

func wantRates(v profile.Vector, lim goodness.Limits) map[string]any {
	bps := func(x, limit float64) any {
		if limit == 0 {
			return nil
		}
		return x * limit
	}
	return map[string]any{
		"cpu": v[profile.CPU], "iowait": v[profile.IOWait],
		"disk_read_bps": bps(v[profile.DiskRead], lim.DiskRead), "disk_write_bps": bps(v[profile.DiskWrite], lim.DiskWrite),
		"net_in_bps": bps(v[profile.NetIn], lim.NetRecv), "net_out_bps": bps(v[profile.NetOut], lim.NetSent),
	}
}

// wantDominant is the largest of CPU, disk (read + write), net in and net
// out, in that order of precedence on ties.
func wantDominant(v profile.Vector) string {
	name, best := "cpu", v[profile.CPU]
	for _, c := range []struct {
		name string
		v    float64
	}{{"disk", v[profile.DiskRead] + v[profile.DiskWrite]}, {"net_in", v[profile.NetIn]}, {"net_out", v[profile.NetOut]}} {
		if c.v > best {
			name, best = c.name, c.v
		}
	}
	return name
}

func wantKind(p profile.Profile, lim goodness.Limits) map[string]any {
	d := p.Demand
	return map[string]any{
		"kind": p.Kind, "known": p.Known, "ticks": float64(p.Ticks), "weight": p.Weight,
		"dominant": wantDominant(d), "demand": wantRates(d, lim), "std": wantRates(p.Std, lim),
		"demand_util": map[string]any{
			"cpu": d[profile.CPU], "iowait": d[profile.IOWait], "disk_read": d[profile.DiskRead],
			"disk_write": d[profile.DiskWrite], "net_in": d[profile.NetIn], "net_out": d[profile.NetOut],
		},
	}
}

func wantProfiles(m *profile.Model, lim goodness.Limits, kinds ...string) map[string]any {
	return wantPage(m, lim, len(kinds), 0, kinds...)
}

// wantPage is the page of kinds from offset on, of total.
func wantPage(m *profile.Model, lim goodness.Limits, total, offset int, kinds ...string) map[string]any {
	ks := []any{}
	for _, k := range kinds {
		ks = append(ks, wantKind(m.Profile(k), lim))
	}
	return map[string]any{
		"kinds": ks, "baseline": wantRates(m.Baseline(), lim), "sigma": wantRates(m.Sigma(), lim),
		"observations": float64(m.Observations()), "total": float64(total), "offset": float64(offset),
		"limits": map[string]any{
			"disk_read_bps": lim.DiskRead, "disk_write_bps": lim.DiskWrite,
			"net_in_bps": lim.NetRecv, "net_out_bps": lim.NetSent,
		},
	}
}

func TestProfiles(t *testing.T) {
	model := trainedModel(t)
	// The synthetic kinds are what they were made to be.
	for kind, want := range map[string]string{"cpubound": "cpu", "diskbound": "disk", "netbound": "net_out"} {
		if p := model.Profile(kind); !p.Known || wantDominant(p.Demand) != want {
			t.Fatalf("trained %s: known %v, dominant %s, want %s (demand %v)", kind, p.Known, wantDominant(p.Demand), want, p.Demand)
		}
	}
	if model.Profile("nosuch").Known {
		t.Fatal("nosuch is known to the model")
	}
	full := newHarness(t, withProfiles(model, testLimits))
	partial := goodness.Limits{DiskRead: testLimits.DiskRead, NetRecv: testLimits.NetRecv} // write and net out unknown
	halfLimits := newHarness(t, withProfiles(model, partial))
	noModel := newHarness(t)
	nilModel := newHarness(t, withProfiles((*profile.Model)(nil), testLimits))

	for _, tc := range []struct {
		name      string
		h         *harness
		path      string
		token     string
		code      int
		want      map[string]any // the body of a 200
		wantErr   string         // the error of anything else
		wantField string
	}{
		{name: "every kind sorted", h: full, path: "/v1/profiles", token: readerTok, code: 200,
			want: wantProfiles(model, testLimits, "cpubound", "diskbound", "netbound")},
		{name: "format json", h: full, path: "/v1/profiles?format=json", token: adminTok, code: 200,
			want: wantProfiles(model, testLimits, "cpubound", "diskbound", "netbound")},
		{name: "filter sorted", h: full, path: "/v1/profiles?kind=netbound,cpubound", token: readerTok, code: 200,
			want: wantProfiles(model, testLimits, "cpubound", "netbound")},
		{name: "filter with an unknown kind", h: full, path: "/v1/profiles?kind=nosuch,diskbound,nosuch,", token: readerTok, code: 200,
			want: wantProfiles(model, testLimits, "diskbound", "nosuch")},
		{name: "empty filter", h: full, path: "/v1/profiles?kind=", token: readerTok, code: 200,
			want: wantProfiles(model, testLimits, "cpubound", "diskbound", "netbound")},
		{name: "unknown limits are null", h: halfLimits, path: "/v1/profiles?kind=diskbound", token: readerTok, code: 200,
			want: wantProfiles(model, partial, "diskbound")},
		{name: "no token", h: full, path: "/v1/profiles", code: 401,
			wantErr: "authentication required: send Authorization: Bearer <token>"},
		{name: "no token and no model", h: noModel, path: "/v1/profiles", code: 401,
			wantErr: "authentication required: send Authorization: Bearer <token>"},
		{name: "no model", h: noModel, path: "/v1/profiles", token: readerTok, code: 404, wantErr: "no profile model"},
		{name: "nil model", h: nilModel, path: "/v1/profiles", token: readerTok, code: 404, wantErr: "no profile model"},
		{name: "too many kinds", h: full, path: "/v1/profiles?kind=" + manyKinds(maxProfileFilter+1), token: readerTok, code: 400,
			wantErr: "more than 1000 kinds in the filter", wantField: "kind"},
		{name: "as many kinds as allowed", h: full, path: "/v1/profiles?format=csv&kind=" + manyKinds(maxProfileFilter), token: readerTok, code: 200},
		{name: "bad format", h: full, path: "/v1/profiles?format=xls", token: readerTok, code: 400,
			wantErr: `format "xls" is not json or csv`, wantField: "format"},
		{name: "kinds", h: full, path: "/v1/profiles?kinds=netbound,nosuch", token: readerTok, code: 200,
			want: wantProfiles(model, testLimits, "netbound", "nosuch")},
		{name: "kinds and kind", h: full, path: "/v1/profiles?kinds=netbound&kind=cpubound", token: readerTok, code: 400,
			wantErr: "give kinds or kind (its old name), not both", wantField: "kinds"},
		{name: "too many kinds in kinds", h: full, path: "/v1/profiles?kinds=" + manyKinds(maxProfileFilter+1), token: readerTok, code: 400,
			wantErr: "more than 1000 kinds in the filter", wantField: "kinds"},
		{name: "a page", h: full, path: "/v1/profiles?limit=1&offset=1", token: readerTok, code: 200,
			want: wantPage(model, testLimits, 3, 1, "diskbound")},
		{name: "a page of a filter", h: full, path: "/v1/profiles?kinds=netbound,cpubound,nosuch&limit=2", token: readerTok, code: 200,
			want: wantPage(model, testLimits, 3, 0, "cpubound", "netbound")},
		{name: "past the end", h: full, path: "/v1/profiles?offset=7", token: readerTok, code: 200,
			want: wantPage(model, testLimits, 3, 7)},
		{name: "no rows", h: full, path: "/v1/profiles?limit=0", token: readerTok, code: 200,
			want: wantPage(model, testLimits, 3, 0)},
		{name: "bad limit", h: full, path: "/v1/profiles?limit=-1", token: readerTok, code: 400,
			wantErr: `limit "-1" is not an integer in [0, 10000]`, wantField: "limit"},
		{name: "bad offset", h: full, path: "/v1/profiles?offset=x", token: readerTok, code: 400,
			wantErr: `offset "x" is not an integer >= 0`, wantField: "offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.h.do(http.MethodGet, tc.path, tc.token, "")
			if r.Code != tc.code {
				t.Fatalf("got %d, want %d: %s", r.Code, tc.code, r.Body)
			}
			if tc.code != 200 {
				if diff := cmp.Diff(v1.ErrorBody{Error: tc.wantErr, Field: tc.wantField}, r.errBody(t), cmpopts.IgnoreFields(v1.ErrorBody{}, "Code")); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if tc.code == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
				}
				return
			}
			if tc.want == nil {
				return
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			var got map[string]any
			r.decode(t, &got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("method not allowed", func(t *testing.T) {
		r := full.do(http.MethodPost, "/v1/profiles", adminTok, "{}")
		if r.Code != 405 || r.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("got %d, Allow %q", r.Code, r.Header.Get("Allow"))
		}
	})
}

// manyKinds is a filter of n distinct kinds.
func manyKinds(n int) string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = "k" + strconv.Itoa(i)
	}
	return strings.Join(ks, ",")
}

func TestProfilesCSV(t *testing.T) {
	model := trainedModel(t)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	row := func(kind string, lim goodness.Limits) []string {
		p := model.Profile(kind)
		d := p.Demand
		bps := func(x, limit float64) string {
			if limit == 0 {
				return ""
			}
			return num(x * limit)
		}
		return []string{kind, strconv.FormatBool(p.Known), strconv.FormatInt(p.Ticks, 10), num(p.Weight), wantDominant(d),
			num(d[profile.CPU]), num(d[profile.IOWait]), bps(d[profile.DiskRead], lim.DiskRead), bps(d[profile.DiskWrite], lim.DiskWrite),
			bps(d[profile.NetIn], lim.NetRecv), bps(d[profile.NetOut], lim.NetSent)}
	}
	header := []string{"kind", "known", "ticks", "weight", "dominant", "cpu", "iowait",
		"disk_read_bps", "disk_write_bps", "net_in_bps", "net_out_bps"}
	partial := goodness.Limits{DiskRead: testLimits.DiskRead, NetSent: testLimits.NetSent}
	for _, tc := range []struct {
		name  string
		lim   goodness.Limits
		query string
		want  [][]string
	}{
		{"every kind", testLimits, "", [][]string{header,
			row("cpubound", testLimits), row("diskbound", testLimits), row("netbound", testLimits)}},
		{"filter", testLimits, "&kind=nosuch,diskbound", [][]string{header, row("diskbound", testLimits), row("nosuch", testLimits)}},
		{"unknown limits are empty", partial, "&kind=netbound", [][]string{header, row("netbound", partial)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, withProfiles(model, tc.lim))
			r := h.do(http.MethodGet, "/v1/profiles?format=csv"+tc.query, readerTok, "")
			if r.Code != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
				t.Fatalf("got %d %q: %s", r.Code, r.Header.Get("Content-Type"), r.Body)
			}
			recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, recs); diff != "" {
				t.Errorf("CSV (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRejectsBadLimits(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name string
		lim  goodness.Limits
	}{
		{"negative", goodness.Limits{DiskRead: -1}},
		{"NaN", goodness.Limits{NetRecv: math.NaN()}},
		{"infinite", goodness.Limits{NetSent: math.Inf(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Deps{Store: h.store, Learner: h.learner, Controller: h.ctl, Tokens: testTokens, Limits: tc.lim})
			if !errors.Is(err, errConfig) {
				t.Errorf("got %v, want ErrConfig", err)
			}
		})
	}
}

// TestProfilesSizeLimit: a model of more than maxProfiles kinds is served
// in pages, not whole.
func TestProfilesSizeLimit(t *testing.T) {
	m := profile.New(profile.Config{})
	var obs []profile.Observation
	for i := range maxProfiles + 1 {
		obs = append(obs, profile.Observation{Node: "n", Usage: profile.Vector{0.1}, Containers: []profile.KindCount{{Kind: "k" + strconv.Itoa(i), Containers: 1}}})
	}
	m.Observe(obs)
	h := newHarness(t, withProfiles(m, testLimits))
	if r := h.do(http.MethodGet, "/v1/profiles", readerTok, ""); r.Code != 400 || r.errBody(t).Field != "limit" {
		t.Errorf("every one of %d kinds: %d %s", maxProfiles+1, r.Code, r.Body)
	}
	r := h.do(http.MethodGet, "/v1/profiles?limit=2&offset=1000", readerTok, "")
	var v v1.Profiles
	if r.Code != 200 {
		t.Fatalf("a page: %d %s", r.Code, r.Body)
	}
	r.decode(t, &v)
	if len(v.Kinds) != 1 || v.Kinds[0].Kind != "k999" || v.Total != maxProfiles+1 || r.Header.Get("X-Total-Count") != "1001" {
		t.Errorf("the last page: %+v, total %d, X-Total-Count %q", v.Kinds, v.Total, r.Header.Get("X-Total-Count"))
	}
}
