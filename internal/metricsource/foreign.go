package metricsource

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/colocd/colocd/engine"
)

// ForeignMode names other tenants' applications as kinds.
type ForeignMode string

// Foreign modes.
const (
	// ForeignTypeQueue: Prefix + type + "." + queue, e.g. foreign.spark.etl.
	ForeignTypeQueue ForeignMode = "type_queue"
	// ForeignType: Prefix + type, e.g. foreign.spark.
	ForeignType ForeignMode = "type"
	// ForeignNone: no kind: other tenants' applications are not seen, as
	// with the cluster syncs (ForeignConfig.Names still apply).
	ForeignNone ForeignMode = "none"
)

// maxForeignNames bounds ForeignConfig.Names.
const maxForeignNames = 64

// ForeignConfig is how the placement read names other tenants'
// applications as kinds (learning.foreign, but for max_kinds, which is the
// engine's cap on how many it learns): a name pattern first, then the
// application's type (and queue).
type ForeignConfig struct {
	Mode   ForeignMode `mapstructure:"kind"`
	Prefix string      `mapstructure:"prefix"`
	// Names are tried first, in order: an application whose name (the
	// plugin's application_name = "field") matches Pattern counts as
	// Prefix + Kind.
	Names []ForeignName `mapstructure:"names"`
}

// ForeignName is one name pattern (RE2, unanchored) and the kind, after
// the prefix, of the applications it matches.
type ForeignName struct {
	Pattern string `mapstructure:"pattern"`
	Kind    string `mapstructure:"kind"`
}

// DefaultForeignConfig names foreign kinds by type and queue.
func DefaultForeignConfig() ForeignConfig {
	return ForeignConfig{Mode: ForeignTypeQueue, Prefix: engine.DefaultForeignPrefix, Names: []ForeignName{}}
}

// NamesAny reports whether the configuration names any foreign application
// (a mode but none, or a name pattern).
func (c ForeignConfig) NamesAny() bool { return c.Mode != ForeignNone || len(c.Names) > 0 }

var (
	// kindRE is queue.Job's kind rule.
	kindRE          = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
	foreignPrefixRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,31}$`)
	kindSuffixRE    = regexp.MustCompile(`^[a-z0-9._-]+$`)
)

// Validate reports the first bad setting as a *FieldError named by its key
// under learning.foreign.
func (c ForeignConfig) Validate() error {
	switch c.Mode {
	case ForeignTypeQueue, ForeignType, ForeignNone:
	default:
		return &FieldError{"kind", fmt.Sprintf("must be %s, %s or %s, got %q", ForeignTypeQueue, ForeignType, ForeignNone, c.Mode)}
	}
	if !foreignPrefixRE.MatchString(c.Prefix) {
		return &FieldError{"prefix", fmt.Sprintf("%q must match %s (a kind's start, so that foreign kinds are told from colocd's)", c.Prefix, foreignPrefixRE)}
	}
	if len(c.Names) > maxForeignNames {
		return &FieldError{"names", fmt.Sprintf("at most %d patterns, got %d", maxForeignNames, len(c.Names))}
	}
	for i, n := range c.Names {
		if _, err := regexp.Compile(n.Pattern); n.Pattern == "" || err != nil {
			return &FieldError{fmt.Sprintf("names[%d].pattern", i), fmt.Sprintf("%q is not a regular expression (RE2): %v", n.Pattern, err)}
		}
		if k := c.Prefix + n.Kind; !kindSuffixRE.MatchString(n.Kind) || !kindRE.MatchString(k) {
			return &FieldError{fmt.Sprintf("names[%d].kind", i), fmt.Sprintf("%q after prefix %q is not a kind (%s)", n.Kind, c.Prefix, kindRE)}
		}
	}
	return nil
}

// foreignNamer names other tenants' applications as ForeignConfig says.
type foreignNamer struct {
	cfg   ForeignConfig
	names []*regexp.Regexp
}

func newForeignNamer(c ForeignConfig) (*foreignNamer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	n := &foreignNamer{cfg: c}
	for _, p := range c.Names {
		n.names = append(n.names, regexp.MustCompile(p.Pattern)) // Validate compiled it
	}
	return n, nil
}

// kind is the kind an application of another tenant counts as, from its
// YARN type, queue and name; "" when none (ForeignNone, no pattern
// matched).
func (n *foreignNamer) kind(typ, queue, name string) string {
	f := n.cfg
	for i, re := range n.names {
		if name != "" && re.MatchString(name) {
			return f.Prefix + f.Names[i].Kind
		}
	}
	switch f.Mode {
	case ForeignTypeQueue:
		return boundKind(f.Prefix + kindPart(typ) + "." + kindPart(queue))
	case ForeignType:
		return boundKind(f.Prefix + kindPart(typ))
	}
	return ""
}

// kindPart is s as part of a kind: lower case, every character a kind may
// not hold a '-', without leading or trailing '-' and '.'; "unknown" when
// nothing is left.
func kindPart(s string) string {
	out := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(s))
	if out = strings.Trim(out, "-."); out != "" {
		return out
	}
	return "unknown"
}

// boundKind cuts a name longer than a kind may be, keeping it unique and
// the same on every call: its first 54 bytes, '-', 8 hex digits of a hash
// of the whole.
func boundKind(k string) string {
	if len(k) <= 63 {
		return k
	}
	h := fnv.New32a()
	h.Write([]byte(k))
	return fmt.Sprintf("%s-%08x", k[:54], h.Sum32())
}
