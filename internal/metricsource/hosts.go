package metricsource

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// HostsConfig says how the metrics source names the machines YARN names
// (config section metrics.hosts). colocd's one name for a node is YARN's,
// the host of its node id (yarnclient.NodeHost): what the RM's node list,
// application attempts and NodeManagers report. Telegraf's host tag is the
// machine's hostname, often the short name where YARN has the FQDN;
// node_exporter's instance label is whatever the scrape config says.
type HostsConfig struct {
	// Mode is hostsSame (the source uses YARN's names), HostsShort (the
	// part of YARN's name before the first dot: YARN has FQDNs, the source
	// short names) or hostsDomain (YARN's name + "." + Domain: YARN has
	// short names, the source FQDNs; a name that has a dot already is kept).
	Mode string `mapstructure:"mode"`
	// Domain is appended in mode hostsDomain, e.g. "cluster.example.com".
	Domain string `mapstructure:"domain"`
	// Map names exceptions, YARN name → source name, applied before Mode.
	// Keys are matched case-insensitively, as host names are.
	Map map[string]string `mapstructure:"map"`
	// CheckEvery is how often, on the daemon's clock, the source is asked
	// for every host it has data for, to report the hosts it has and YARN
	// does not (a whole-store read: 1.4 s of InfluxDB at 10,000 hosts). 0
	// never does; hosts YARN has and the source does not are reported on
	// every read at no cost.
	CheckEvery time.Duration `mapstructure:"check_every"`
}

// The modes of HostsConfig.
const (
	hostsSame   = "same"
	HostsShort  = "short"
	hostsDomain = "domain"
)

// DefaultHostsConfig: the same names, and the source's hosts listed every
// 15 minutes.
func DefaultHostsConfig() HostsConfig {
	return HostsConfig{Mode: hostsSame, Map: map[string]string{}, CheckEvery: 15 * time.Minute}
}

// hostRE is a DNS name (or an address): what a host name may be.
var hostRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._:-]{0,252}[A-Za-z0-9])?$`)

// FieldError is a HostsConfig mistake: Field is the key under
// metrics.hosts.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// FieldReason is the field and why, for the daemon to name the key.
func (e *FieldError) FieldReason() (field, reason string) { return e.Field, e.Msg }

// Validate reports the first mistake as a *FieldError.
func (c HostsConfig) Validate() error {
	switch c.Mode {
	case hostsSame, HostsShort:
		if c.Domain != "" {
			return &FieldError{"domain", fmt.Sprintf("is only read in mode %s, and mode is %s", hostsDomain, c.Mode)}
		}
	case hostsDomain:
		if c.Domain == "" || !hostRE.MatchString(c.Domain) || strings.HasPrefix(c.Domain, ".") {
			return &FieldError{"domain", fmt.Sprintf("mode %s needs a domain such as cluster.example.com, got %q", hostsDomain, c.Domain)}
		}
	default:
		return &FieldError{"mode", fmt.Sprintf("must be %s, %s or %s, got %q", hostsSame, HostsShort, hostsDomain, c.Mode)}
	}
	seen := map[string]string{}
	for k, v := range c.Map {
		if !hostRE.MatchString(k) || !hostRE.MatchString(v) {
			return &FieldError{"map", fmt.Sprintf("%q: %q is not a host name to host name", k, v)}
		}
		if other, dup := seen[strings.ToLower(k)]; dup {
			return &FieldError{"map", fmt.Sprintf("%q and %q name one host (host names ignore case)", other, k)}
		}
		seen[strings.ToLower(k)] = k
	}
	if c.CheckEvery < 0 {
		return &FieldError{"check_every", fmt.Sprintf("must be >= 0 (0: never), got %v", c.CheckEvery)}
	}
	return nil
}

// hostNames is a validated HostsConfig, its exceptions keyed in lower case.
type hostNames struct {
	mode, domain string
	exc          map[string]string
}

func (c HostsConfig) compile() hostNames {
	n := hostNames{mode: c.Mode, domain: c.Domain, exc: make(map[string]string, len(c.Map))}
	for k, v := range c.Map {
		n.exc[strings.ToLower(k)] = v
	}
	return n
}

// sourceName is the name the metrics source knows YARN's host by.
func (n hostNames) sourceName(host string) string {
	if v, ok := n.exc[strings.ToLower(host)]; ok {
		return v
	}
	switch n.mode {
	case HostsShort:
		if i := strings.IndexByte(host, '.'); i > 0 {
			return host[:i]
		}
	case hostsDomain:
		if !strings.Contains(host, ".") {
			return host + "." + n.domain
		}
	}
	return host
}

// names maps YARN's hosts to the source's names (in the order given) and
// back. Two YARN hosts that the config gives one source name are an error
// naming both: their usage could not be told apart.
func (n hostNames) names(hosts []string) (src []string, back map[string]string, err error) {
	src = make([]string, 0, len(hosts))
	back = make(map[string]string, len(hosts))
	for _, h := range hosts {
		s := n.sourceName(h)
		if other, dup := back[s]; dup && other != h {
			return nil, nil, fmt.Errorf("metrics.hosts: YARN hosts %s and %s both map to %s in the metrics source (mode %s): set metrics.hosts.map for one of them", other, h, s, n.mode)
		}
		back[s] = h
		src = append(src, s)
	}
	return src, back, nil
}
