package metricsource

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func mustNamer(t *testing.T, c ForeignConfig) *foreignNamer {
	t.Helper()
	n, err := newForeignNamer(c)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestForeignKindNames: every name a foreign application gets is a kind
// (queue.Job's rule), the same on every call, and keeps its type and queue
// apart; names are cut with a hash past 63 bytes; a name pattern wins over
// type and queue; mode type drops the queue and mode none names nothing
// but what a pattern matches. Random attributes are printed with their
// seed.
func TestForeignKindNames(t *testing.T) {
	n := mustNamer(t, DefaultForeignConfig())
	for _, tc := range []struct{ typ, queue, want string }{
		{"SPARK", "etl", "foreign.spark.etl"},
		{"MAPREDUCE", "root.Team-A.daily", "foreign.mapreduce.root.team-a.daily"},
		{"Apache Flink", "", "foreign.apache-flink.unknown"},
		{"ÉTL pipeline", "q/1", "foreign.tl-pipeline.q-1"},
		{"", "", "foreign.unknown.unknown"},
	} {
		if got := n.kind(tc.typ, tc.queue, ""); got != tc.want {
			t.Errorf("kind(%q, %q) = %q, want %q", tc.typ, tc.queue, got, tc.want)
		}
	}
	long, long2 := n.kind("SPARK", strings.Repeat("q", 100), ""), n.kind("SPARK", strings.Repeat("q", 101), "")
	if len(long) != 63 || long == long2 || !strings.HasPrefix(long, "foreign.spark.qqq") {
		t.Errorf("long names %q, %q: want 63 bytes each, told apart", long, long2)
	}
	kind := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`) // queue.Job's kind rule
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	alphabet := []rune("aZ09._-/ :é\x00\u4e16ß")
	word := func() string {
		r := make([]rune, rng.IntN(80))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(r)
	}
	for range 2000 {
		typ, q := word(), word()
		k := n.kind(typ, q, "")
		if !kind.MatchString(k) {
			t.Fatalf("seed %d: type %q queue %q → %q, not a kind", seed, typ, q, k)
		}
		if again := n.kind(typ, q, ""); again != k {
			t.Fatalf("seed %d: %q then %q for one application", seed, k, again)
		}
	}

	c := DefaultForeignConfig()
	c.Names = []ForeignName{{Pattern: "^nightly-", Kind: "nightly"}}
	if got := mustNamer(t, c).kind("MAPREDUCE", "default", "nightly-report"); got != "foreign.nightly" {
		t.Errorf("a name pattern gave %q, want foreign.nightly", got)
	}
	c.Mode = ForeignType
	if got := mustNamer(t, c).kind("SPARK", "etl", "adhoc"); got != "foreign.spark" {
		t.Errorf("mode type gave %q, want foreign.spark", got)
	}
	c.Mode = ForeignNone
	none := mustNamer(t, c)
	if got := none.kind("SPARK", "etl", "adhoc"); got != "" {
		t.Errorf("mode none gave %q, want no kind", got)
	}
	if got := none.kind("SPARK", "etl", "nightly-x"); got != "foreign.nightly" || !c.NamesAny() {
		t.Errorf("mode none with a pattern gave %q, want foreign.nightly", got)
	}
	if (ForeignConfig{Mode: ForeignNone, Prefix: "foreign."}).NamesAny() {
		t.Error("mode none without patterns names applications")
	}
}

// TestForeignConfigValidate: each bad setting is refused naming its key
// under learning.foreign.
func TestForeignConfigValidate(t *testing.T) {
	for field, mod := range map[string]func(*ForeignConfig){
		"kind":             func(c *ForeignConfig) { c.Mode = "queue" },
		"prefix":           func(c *ForeignConfig) { c.Prefix = "Foreign." },
		"names[0].pattern": func(c *ForeignConfig) { c.Names = []ForeignName{{Pattern: "(", Kind: "x"}} },
		"names[0].kind":    func(c *ForeignConfig) { c.Names = []ForeignName{{Pattern: "x", Kind: "Bad Kind"}} },
	} {
		c := DefaultForeignConfig()
		mod(&c)
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a FieldError on %s", field, err, field)
		}
	}
	if err := DefaultForeignConfig().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}
