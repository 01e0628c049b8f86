package goodness_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/goodness"
)

// mb is one megabyte per second.
const mb = 1e6

// lim100 is a node with 100 MB/s disk and 125 MB/s (1 Gbit/s) network each way.
var lim100 = goodness.Limits{DiskRead: 100 * mb, DiskWrite: 100 * mb, NetRecv: 125 * mb, NetSent: 125 * mb}

// TestScoreHandComputed checks Eq. 1 against values worked out by hand
// (digits from a calculator, to 10 significant figures).
func TestScoreHandComputed(t *testing.T) {
	tests := []struct {
		name string
		u    goodness.Usage
		want float64
	}{
		{
			// Everything zero: h = tanh(0) = 0, so G = exp(1 + 0) = e.
			name: "idle node",
			u:    goodness.Usage{},
			want: 2.718281828459045,
		},
		{
			// Only CPU: G = exp(1 + 0.5) = exp(1.5).
			name: "half CPU, no I/O",
			u:    goodness.Usage{CPU: 0.5},
			want: 4.481689070338065,
		},
		{
			// h_disk = tanh(50/100 + 25/100) = tanh(0.75)        = 0.6351489524
			// h_net  = tanh(10/125 + 15/125) = tanh(0.08 + 0.12) = tanh(0.2) = 0.1973753202
			// h_disk + h_net                                     = 0.8325242726
			// l(0.1) = exp(-5 * 0.1) = exp(-0.5)                 = 0.6065306597
			// (h_disk + h_net) * l                               = 0.5049514963
			// G = exp(1 + 0.3 + 0.5049514963) = exp(1.8049514963) = 6.079676555
			name: "mixed load with some iowait",
			u: goodness.Usage{CPU: 0.3, IOWait: 0.1,
				DiskRead: 50 * mb, DiskWrite: 25 * mb, NetRecv: 10 * mb, NetSent: 15 * mb},
			want: 6.079676554526031,
		},
		{
			// h_net = tanh(125/125 + 0) = tanh(1) = 0.7615941560, h_disk = 0, l(0) = 1
			// G = exp(1 + 0.6 + 0.7615941560) = exp(2.3615941560) = 10.60784855
			name: "network bound, no iowait",
			u:    goodness.Usage{CPU: 0.6, NetRecv: 125 * mb},
			want: 10.607848545491233,
		},
		{
			// Rates far above the limits: tanh(20 + 20) = 1 in float64, twice.
			// G = exp(1 + 1 + (1 + 1) * exp(0)) = exp(4) = 54.59815003 (the maximum).
			name: "full CPU, saturated I/O, no iowait",
			u: goodness.Usage{CPU: 1,
				DiskRead: 2000 * mb, DiskWrite: 2000 * mb, NetRecv: 2500 * mb, NetSent: 2500 * mb},
			want: 54.598150033144236,
		},
		{
			// Saturated I/O but all CPU time is iowait: l(1) = exp(-5) = 0.006737947
			// G = exp(1 + 0 + 2 * 0.006737947) = exp(1.013475894) = 2.755161038
			name: "saturated I/O, all iowait",
			u: goodness.Usage{IOWait: 1,
				DiskRead: 2000 * mb, DiskWrite: 2000 * mb, NetRecv: 2500 * mb, NetSent: 2500 * mb},
			want: 2.755161038294933,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := goodness.Checked(tt.u, lim100)
			if err != nil {
				t.Fatalf("Checked: %v", err)
			}
			if math.Abs(got-tt.want) > 1e-12*tt.want {
				t.Errorf("Checked(%+v) = %.15g, want %.15g", tt.u, got, tt.want)
			}
			if s := goodness.Score(tt.u, lim100); s != got {
				t.Errorf("Score = %.17g, Checked = %.17g; want the same value", s, got)
			}
		})
	}
}

func TestRangeConstants(t *testing.T) {
	if goodness.Min != math.Exp(1) || goodness.Max != math.Exp(4) {
		t.Errorf("Min, Max = %v, %v; want e^1, e^4", goodness.Min, goodness.Max)
	}
	if got := goodness.Score(goodness.Usage{}, lim100); got != goodness.Min {
		t.Errorf("idle score = %.17g, want exactly Min %.17g", got, goodness.Min)
	}
}

// randomUsage draws a valid Usage, with a good share of exact boundary values
// (0, 1, rates at and far above the limits).
func randomUsage(rng *rand.Rand, lim goodness.Limits) goodness.Usage {
	frac := func() float64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return 1
		default:
			return rng.Float64()
		}
	}
	rate := func(max float64) float64 {
		switch rng.IntN(5) {
		case 0:
			return 0
		case 1:
			return max
		case 2:
			return max * 1e6 * rng.Float64() // far above the hardware limit
		default:
			return max * 2 * rng.Float64()
		}
	}
	cpu := frac()
	iowait := frac() * (1 - cpu) // cpu + iowait <= 1
	return goodness.Usage{
		CPU: cpu, IOWait: iowait,
		DiskRead: rate(lim.DiskRead), DiskWrite: rate(lim.DiskWrite),
		NetRecv: rate(lim.NetRecv), NetSent: rate(lim.NetSent),
	}
}

func randomLimits(rng *rand.Rand) goodness.Limits {
	r := func() float64 { return math.Exp(rng.Float64()*40 - 10) } // e^-10 .. e^30 bytes/s
	return goodness.Limits{DiskRead: r(), DiskWrite: r(), NetRecv: r(), NetSent: r()}
}

// TestScoreRangeProperty: every valid input scores in [e, e^4].
func TestScoreRangeProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (set it in the test to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for i := range 200_000 {
		lim := randomLimits(rng)
		u := randomUsage(rng, lim)
		g, err := goodness.Checked(u, lim)
		if err != nil {
			t.Fatalf("seed %d, draw %d: valid input %+v / %+v rejected: %v", seed, i, u, lim, err)
		}
		if !(g >= goodness.Min && g <= goodness.Max) {
			t.Fatalf("seed %d, draw %d: Score(%+v, %+v) = %.17g, outside [e, e^4]", seed, i, u, lim, g)
		}
	}
}

// TestScoreMonotone: more CPU or more I/O never lowers G; more iowait never raises it.
func TestScoreMonotone(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range 20_000 {
		u := randomUsage(rng, lim100)
		g := goodness.Score(u, lim100)
		more := u
		more.CPU = u.CPU + (1-u.CPU-u.IOWait)*rng.Float64()
		more.DiskRead += 10 * mb * rng.Float64()
		if g2 := goodness.Score(more, lim100); g2 < g {
			t.Fatalf("seed %d, draw %d: more CPU/disk lowered G: %+v → %v, %+v → %v", seed, i, u, g, more, g2)
		}
		wait := u
		wait.IOWait = u.IOWait + (1-u.CPU-u.IOWait)*rng.Float64()
		if g2 := goodness.Score(wait, lim100); g2 > g {
			t.Fatalf("seed %d, draw %d: more iowait raised G: %+v → %v, %+v → %v", seed, i, u, g, wait, g2)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := goodness.Usage{CPU: 0.5, IOWait: 0.1, DiskRead: 1, DiskWrite: 2, NetRecv: 3, NetSent: 4}
	with := func(f func(*goodness.Usage)) goodness.Usage { u := ok; f(&u); return u }
	withLim := func(f func(*goodness.Limits)) goodness.Limits { l := lim100; f(&l); return l }
	tests := []struct {
		name      string
		u         goodness.Usage
		lim       goodness.Limits
		wantField string // "" = valid
	}{
		{"valid", ok, lim100, ""},
		{"cpu plus iowait exactly 1", with(func(u *goodness.Usage) { u.CPU, u.IOWait = 0.7, 0.3 }), lim100, ""},
		{"cpu plus iowait within rounding slack", with(func(u *goodness.Usage) { u.CPU, u.IOWait = 0.5, 0.5+1e-12 }), lim100, ""},
		{"cpu NaN", with(func(u *goodness.Usage) { u.CPU = nan }), lim100, "usage.cpu"},
		{"cpu negative", with(func(u *goodness.Usage) { u.CPU = -0.01 }), lim100, "usage.cpu"},
		{"cpu above 1", with(func(u *goodness.Usage) { u.CPU, u.IOWait = 1.5, 0 }), lim100, "usage.cpu"},
		{"iowait +Inf", with(func(u *goodness.Usage) { u.IOWait = inf }), lim100, "usage.iowait"},
		{"iowait above 1", with(func(u *goodness.Usage) { u.CPU, u.IOWait = 0, 1.01 }), lim100, "usage.iowait"},
		{"cpu plus iowait above 1", with(func(u *goodness.Usage) { u.CPU, u.IOWait = 0.6, 0.5 }), lim100, "usage.cpu+iowait"},
		{"disk_read negative", with(func(u *goodness.Usage) { u.DiskRead = -1 }), lim100, "usage.disk_read"},
		{"disk_write -Inf", with(func(u *goodness.Usage) { u.DiskWrite = -inf }), lim100, "usage.disk_write"},
		{"net_recv NaN", with(func(u *goodness.Usage) { u.NetRecv = nan }), lim100, "usage.net_recv"},
		{"net_sent +Inf", with(func(u *goodness.Usage) { u.NetSent = inf }), lim100, "usage.net_sent"},
		{"limit disk_read zero", ok, withLim(func(l *goodness.Limits) { l.DiskRead = 0 }), "limits.disk_read"},
		{"limit disk_write negative", ok, withLim(func(l *goodness.Limits) { l.DiskWrite = -5 }), "limits.disk_write"},
		{"limit net_recv NaN", ok, withLim(func(l *goodness.Limits) { l.NetRecv = nan }), "limits.net_recv"},
		{"limit net_sent +Inf", ok, withLim(func(l *goodness.Limits) { l.NetSent = inf }), "limits.net_sent"},
		{"zero Limits value", ok, goodness.Limits{}, "limits.disk_read"},
		{"bad limits reported before bad usage", with(func(u *goodness.Usage) { u.CPU = nan }), goodness.Limits{}, "limits.disk_read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := goodness.Checked(tt.u, tt.lim)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Checked: unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, goodness.ErrInvalid) {
				t.Fatalf("Checked error = %v, want one wrapping ErrInvalid", err)
			}
			var fe *goodness.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Checked error %v is not a *FieldError", err)
			}
			if diff := cmp.Diff(tt.wantField, fe.Field); diff != "" {
				t.Errorf("FieldError.Field (-want +got):\n%s\nerror: %v", diff, err)
			}
			if fe.Reason == "" {
				t.Errorf("FieldError.Reason is empty")
			}
			if g != 0 {
				t.Errorf("Checked returned %v with an error, want 0", g)
			}
		})
	}
}

// FuzzScore: Checked never panics; when it accepts the input the result is
// finite, in [Min, Max], and equal to Score; when it rejects, the error is a
// *FieldError wrapping ErrInvalid.
func FuzzScore(f *testing.F) {
	f.Add(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0)
	f.Add(0.3, 0.1, 50e6, 25e6, 10e6, 15e6, 100e6, 100e6, 125e6, 125e6)
	f.Add(1.0, 0.0, 1e300, 1e300, 1e300, 1e300, 1e-300, 1e-300, 1e-300, 1e-300)
	f.Add(0.5, 0.6, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
	f.Add(math.NaN(), 0.0, -1.0, 0.0, math.Inf(1), 0.0, 0.0, -1.0, 1.0, 1.0)
	f.Add(0.0, 1.0, 5e-324, 5e-324, 5e-324, 5e-324, 5e-324, 5e-324, 5e-324, 5e-324)
	f.Fuzz(func(t *testing.T, cpu, iowait, dr, dw, nr, ns, ldr, ldw, lnr, lns float64) {
		u := goodness.Usage{CPU: cpu, IOWait: iowait, DiskRead: dr, DiskWrite: dw, NetRecv: nr, NetSent: ns}
		lim := goodness.Limits{DiskRead: ldr, DiskWrite: ldw, NetRecv: lnr, NetSent: lns}
		g, err := goodness.Checked(u, lim)
		if err != nil {
			var fe *goodness.FieldError
			if !errors.Is(err, goodness.ErrInvalid) || !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("Checked(%+v, %+v) error %v: want a *FieldError naming a field, wrapping ErrInvalid", u, lim, err)
			}
			return
		}
		if math.IsNaN(g) || math.IsInf(g, 0) || g < goodness.Min || g > goodness.Max {
			t.Fatalf("Checked(%+v, %+v) = %v, want finite in [e, e^4]", u, lim, g)
		}
		if s := goodness.Score(u, lim); s != g {
			t.Fatalf("Score = %v, Checked = %v", s, g)
		}
	})
}

func ExampleChecked() {
	lim := goodness.Limits{DiskRead: 100e6, DiskWrite: 100e6, NetRecv: 125e6, NetSent: 125e6}
	u := goodness.Usage{CPU: 0.3, IOWait: 0.1, DiskRead: 50e6, DiskWrite: 25e6, NetRecv: 10e6, NetSent: 15e6}
	g, err := goodness.Checked(u, lim)
	fmt.Printf("G = %.4f (range %.4f .. %.4f), err = %v\n", g, goodness.Min, goodness.Max, err)

	u.CPU = 1.2
	_, err = goodness.Checked(u, lim)
	fmt.Println(err)
	// Output:
	// G = 6.0797 (range 2.7183 .. 54.5982), err = <nil>
	// goodness: invalid usage.cpu: is 1.2, above 1 (a fraction of CPU time)
}

var sink float64

func BenchmarkScore(b *testing.B) {
	u := goodness.Usage{CPU: 0.3, IOWait: 0.1, DiskRead: 50e6, DiskWrite: 25e6, NetRecv: 10e6, NetSent: 15e6}
	if g := goodness.Score(u, lim100); math.Abs(g-6.079676554526031) > 1e-12 {
		b.Fatalf("Score = %v, want 6.0796765545", g)
	}
	for b.Loop() {
		sink = goodness.Score(u, lim100)
	}
}

func BenchmarkChecked(b *testing.B) {
	u := goodness.Usage{CPU: 0.3, IOWait: 0.1, DiskRead: 50e6, DiskWrite: 25e6, NetRecv: 10e6, NetSent: 15e6}
	if g, err := goodness.Checked(u, lim100); err != nil || math.Abs(g-6.079676554526031) > 1e-12 {
		b.Fatalf("Checked = %v, %v; want 6.0796765545, nil", g, err)
	}
	for b.Loop() {
		sink, _ = goodness.Checked(u, lim100)
	}
}
