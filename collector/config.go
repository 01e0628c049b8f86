package collector

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Schema names the measurements, tags and fields the collector reads. The
// defaults are Telegraf's: inputs.cpu, inputs.diskio, inputs.net and the
// colocd-telegraf-yarn execd plugin. Sites whose Telegraf renames anything
// (name_override, tag renames, a processor) set the names here.
//
// The pattern lists are Go regular expressions (RE2 syntax), each matched
// against the whole tag value: "sd[a-z]+[0-9]+" matches "sda1" but not
// "xsda1x".
type Schema struct {
	// HostTag identifies a node in every measurement ("host").
	HostTag string `mapstructure:"host_tag"`

	// CPUMeasurement ("cpu") holds percentages of CPU time; only the series
	// whose CPUTag ("cpu") equals CPUTotal ("cpu-total") is read, so per-CPU
	// series are ignored. CPUIdleField ("usage_idle") and CPUIOWaitField
	// ("usage_iowait") give CPU = (100 − idle − iowait)/100 and
	// IOWait = iowait/100.
	CPUMeasurement string `mapstructure:"cpu_measurement"`
	CPUTag         string `mapstructure:"cpu_tag"`
	CPUTotal       string `mapstructure:"cpu_total"`
	CPUIdleField   string `mapstructure:"cpu_idle_field"`
	CPUIOWaitField string `mapstructure:"cpu_iowait_field"`

	// DiskMeasurement ("diskio") holds cumulative byte counters
	// DiskReadField ("read_bytes") and DiskWriteField ("write_bytes") per
	// device, named by DiskNameTag ("name"). Devices matching any DiskExclude
	// pattern are skipped; the default list drops partitions and stacked
	// devices (device mapper, md RAID, loop, ...) so every byte is counted
	// once, on the whole disk that served it.
	DiskMeasurement string   `mapstructure:"disk_measurement"`
	DiskNameTag     string   `mapstructure:"disk_name_tag"`
	DiskReadField   string   `mapstructure:"disk_read_field"`
	DiskWriteField  string   `mapstructure:"disk_write_field"`
	DiskExclude     []string `mapstructure:"disk_exclude"`

	// NetMeasurement ("net") holds cumulative byte counters NetRecvField
	// ("bytes_recv") and NetSentField ("bytes_sent") per interface, named by
	// NetInterfaceTag ("interface"). An interface is read when it matches a
	// NetInclude pattern (an empty list includes every interface) and no
	// NetExclude pattern. Telegraf's protocol-statistics series
	// (interface="all") is always excluded. Bonding slaves cannot be told
	// from their names: list them in NetExclude, or list only the bond in
	// NetInclude, or the bond's traffic is counted twice.
	NetMeasurement  string   `mapstructure:"net_measurement"`
	NetInterfaceTag string   `mapstructure:"net_interface_tag"`
	NetRecvField    string   `mapstructure:"net_recv_field"`
	NetSentField    string   `mapstructure:"net_sent_field"`
	NetInclude      []string `mapstructure:"net_include"`
	NetExclude      []string `mapstructure:"net_exclude"`

	// ContainersMeasurement ("yarn_containers") is written by the
	// colocd-telegraf-yarn plugin: one point per application per node per
	// interval, with the colocd job kind in ContainersKindTag ("kind") and
	// the number of containers in ContainersField ("containers").
	ContainersMeasurement string `mapstructure:"containers_measurement"`
	ContainersKindTag     string `mapstructure:"containers_kind_tag"`
	ContainersField       string `mapstructure:"containers_field"`

	// PressureMeasurement ("pressure") is Telegraf's inputs.kernel pressure
	// stall information (collect = ["psi"]), read when Config.Pressure is
	// on: the series whose PressureResourceTag ("resource") is "io" or
	// "cpu" and PressureTypeTag ("type") is "some", their cumulative
	// stalled microseconds PressureTotalField ("total").
	PressureMeasurement string `mapstructure:"pressure_measurement"`
	PressureResourceTag string `mapstructure:"pressure_resource_tag"`
	PressureTypeTag     string `mapstructure:"pressure_type_tag"`
	PressureTotalField  string `mapstructure:"pressure_total_field"`
}

// DefaultSchema is Telegraf's schema with colocd's default exclusions.
func DefaultSchema() Schema {
	return Schema{
		HostTag:        "host",
		CPUMeasurement: "cpu", CPUTag: "cpu", CPUTotal: "cpu-total",
		CPUIdleField: "usage_idle", CPUIOWaitField: "usage_iowait",
		DiskMeasurement: "diskio", DiskNameTag: "name",
		DiskReadField: "read_bytes", DiskWriteField: "write_bytes",
		DiskExclude: []string{
			`(?:sd|hd|vd|xvd)[a-z]+[0-9]+`, // partitions of SCSI/SATA, IDE, virtio and Xen disks
			`nvme[0-9]+n[0-9]+p[0-9]+`,     // NVMe partitions
			`mmcblk[0-9]+p[0-9]+`,          // SD/eMMC partitions
			`dm-[0-9]+`,                    // device mapper (LVM, dm-crypt) above the disks
			`md[0-9]+(?:p[0-9]+)?`,         // software RAID above the disks
			`loop[0-9]+`,                   // loop devices backed by files on the disks
			`z?ram[0-9]+`,                  // RAM disks and zram swap
			`sr[0-9]+`, `fd[0-9]+`,         // optical and floppy drives
		},
		NetMeasurement: "net", NetInterfaceTag: "interface",
		NetRecvField: "bytes_recv", NetSentField: "bytes_sent",
		NetExclude: []string{
			`lo`,
			// Container, VM and overlay plumbing: their traffic also
			// crosses a physical interface.
			`veth.*`, `docker.*`, `br-.*`, `virbr.*`, `vnet[0-9]+`,
			`cni.*`, `flannel.*`, `cali.*`, `cilium.*`, `lxc.*`, `weave.*`,
			`vxlan.*`, `genev_sys_.*`, `kube-.*`, `ovs-.*`, `dummy.*`,
			`tun.*`, `tap.*`, `wg.*`,
		},
		ContainersMeasurement: "yarn_containers",
		ContainersKindTag:     "kind",
		ContainersField:       "containers",
		PressureMeasurement:   "pressure",
		PressureResourceTag:   "resource",
		PressureTypeTag:       "type",
		PressureTotalField:    "total",
	}
}

// Config configures a Collector (colocd's config section influx, decoded
// straight into it by its mapstructure tags). Zero Schema means
// DefaultSchema.
//
// InfluxDB 1.8: URL of influxd, Org empty, Bucket
// "database/retention-policy" (e.g. "telegraf/autogen"), Token
// "user:password" or empty when authentication is off. Language flux
// needs Flux enabled ([http] flux-enabled); influxql does not.
// InfluxDB 2.x: Org, Bucket and an API token with read access; with
// influxql the bucket needs a DBRP mapping named "db/rp" (or "db").
// InfluxDB 3.x: Language influxql, Bucket the database, Token a token.
type Config struct {
	URL    string `mapstructure:"url"`
	Org    string `mapstructure:"org"`
	Bucket string `mapstructure:"bucket"` // 1.8: "db/rp"
	Token  string `mapstructure:"token"`  // 1.8: "user:password"
	// Pressure also reads each host's I/O and CPU pressure stall
	// information (Schema.PressureMeasurement; Linux ≥ 4.20, Telegraf's
	// inputs.kernel with collect = ["psi"]) into goodness.Usage.IOPressure
	// and CPUPressure, with Usage.Pressure set for a host that has both.
	// The goodness counts the I/O pressure beside iowait; the profile model
	// reads both as the share of their demand a saturated node's
	// containers did not get.
	Pressure bool `mapstructure:"pressure"`
	// Language is the query language: languageFlux (the v2 /api/v2/query
	// API) or LanguageInfluxQL (the v1 /query API, on 1.x, 2.x and 3.x).
	// Empty means influxql, which every InfluxDB answers (1.x with or
	// without Flux, 2.x through a DBRP mapping, 3.x, which has no Flux).
	// Both read the same rows and share one arithmetic, so they give the
	// same usage.
	Language string `mapstructure:"language"`
	// Timeout bounds each call (query, ping) including reading the result.
	Timeout time.Duration `mapstructure:"timeout"`
	// StaleAfter is the largest age, at the end of a window, of a host's
	// newest cpu sample in the window for its usage to count: a host whose
	// Telegraf stopped part-way through the window is reported Stale. Set it
	// to a little more than Telegraf's interval plus flush jitter (e.g. 30s
	// for interval = "10s").
	StaleAfter time.Duration `mapstructure:"stale_after"`
	Schema     Schema        `mapstructure:"schema"`
	// MaxAnswerBytes caps the body of one answer (cap.go); zero means
	// DefaultMaxAnswerBytes. An answer over it fails the read with
	// errTooLarge: raise it for more hosts, disks or a longer learning
	// window than the default is sized for.
	MaxAnswerBytes int64 `mapstructure:"max_answer_bytes"`
	// HostPatternMax is the most hosts Usage names in the storage
	// predicate (a regex of the quoted names). Asked about more, it reads
	// every host in the bucket and keeps the requested ones, which is
	// cheaper on InfluxDB 1.8 when the bucket holds little besides the
	// cluster. Zero means defaultHostPatternMax; raise it when the bucket
	// holds many hosts colocd never asks about.
	HostPatternMax int `mapstructure:"-"`
	// HTTPClient is used for every request when set (a copy of it, whose
	// transport caps the answers); otherwise a client of the collector's
	// own. Either way Timeout applies.
	HTTPClient *http.Client `mapstructure:"-"`
}

// Query languages (Config.Language).
const (
	languageFlux     = "flux"
	LanguageInfluxQL = "influxql"
)

// DefaultConfig reads Telegraf's default schema from a local InfluxDB 1.8.
func DefaultConfig() Config {
	return Config{
		URL:            "http://127.0.0.1:8086",
		Bucket:         "telegraf/autogen",
		Language:       languageFlux,
		Timeout:        10 * time.Second,
		StaleAfter:     30 * time.Second,
		MaxAnswerBytes: DefaultMaxAnswerBytes,
		Schema:         DefaultSchema(),
	}
}

// Validate reports the first invalid field, naming it. It does no I/O.
func (c Config) Validate() error {
	_, err := c.compile()
	return err
}

// compiled is a validated Config with its patterns joined and written as
// regex literals /.../, which Flux and InfluxQL read alike (see
// fluxRegex).
type compiled struct {
	Config
	diskExclude, netInclude, netExclude string // "" = no pattern
}

func (c Config) compile() (compiled, error) {
	if c.Schema.isZero() {
		c.Schema = DefaultSchema()
	}
	out := compiled{Config: c}
	if _, err := checkURL("url", c.URL); err != nil {
		return out, err
	}
	var err error
	if err := checkName("bucket", c.Bucket); err != nil {
		return out, err
	}
	if c.Org != "" {
		if err := checkName("org", c.Org); err != nil {
			return out, err
		}
	}
	switch c.Language {
	case "":
		out.Language = LanguageInfluxQL
	case languageFlux, LanguageInfluxQL:
	default:
		return out, invalid("language", "must be %s or %s, got %q", languageFlux, LanguageInfluxQL, c.Language)
	}
	if out.HostPatternMax, err = checkBounds(c.Timeout, c.StaleAfter, c.HostPatternMax); err != nil {
		return out, err
	}
	if out.MaxAnswerBytes, err = checkMaxAnswer(c.MaxAnswerBytes, DefaultMaxAnswerBytes); err != nil {
		return out, err
	}
	s := c.Schema
	if err := s.check(); err != nil {
		return out, err
	}
	if out.diskExclude, err = joinPatterns("schema.disk_exclude", s.DiskExclude); err != nil {
		return out, err
	}
	if out.netInclude, err = joinPatterns("schema.net_include", s.NetInclude); err != nil {
		return out, err
	}
	if out.netExclude, err = joinPatterns("schema.net_exclude", s.NetExclude); err != nil {
		return out, err
	}
	return out, nil
}

// check reports the first schema name that is empty, not UTF-8, holds a
// control character, collides with a query's own columns, or names the
// same measurement and field as another.
func (s Schema) check() error {
	for _, f := range []struct{ name, v string }{
		{"schema.host_tag", s.HostTag},
		{"schema.cpu_measurement", s.CPUMeasurement}, {"schema.cpu_tag", s.CPUTag},
		{"schema.cpu_total", s.CPUTotal}, {"schema.cpu_idle_field", s.CPUIdleField},
		{"schema.cpu_iowait_field", s.CPUIOWaitField},
		{"schema.disk_measurement", s.DiskMeasurement}, {"schema.disk_name_tag", s.DiskNameTag},
		{"schema.disk_read_field", s.DiskReadField}, {"schema.disk_write_field", s.DiskWriteField},
		{"schema.net_measurement", s.NetMeasurement}, {"schema.net_interface_tag", s.NetInterfaceTag},
		{"schema.net_recv_field", s.NetRecvField}, {"schema.net_sent_field", s.NetSentField},
		{"schema.containers_measurement", s.ContainersMeasurement},
		{"schema.containers_kind_tag", s.ContainersKindTag},
		{"schema.containers_field", s.ContainersField},
		{"schema.pressure_measurement", s.PressureMeasurement},
		{"schema.pressure_resource_tag", s.PressureResourceTag},
		{"schema.pressure_type_tag", s.PressureTypeTag},
		{"schema.pressure_total_field", s.PressureTotalField},
	} {
		if err := checkName(f.name, f.v); err != nil {
			return err
		}
	}
	// Tags read from rows must not collide with Flux's own columns (nor
	// InfluxQL's "time").
	for _, f := range []struct{ name, v string }{
		{"schema.host_tag", s.HostTag}, {"schema.cpu_tag", s.CPUTag},
		{"schema.disk_name_tag", s.DiskNameTag}, {"schema.net_interface_tag", s.NetInterfaceTag},
		{"schema.containers_kind_tag", s.ContainersKindTag},
		{"schema.pressure_resource_tag", s.PressureResourceTag}, {"schema.pressure_type_tag", s.PressureTypeTag},
	} {
		if strings.HasPrefix(f.v, "_") || f.v == "result" || f.v == "table" || f.v == "time" {
			return invalid(f.name, "%q is a reserved column name", f.v)
		}
	}
	// Rows are told apart by (measurement, field).
	seen := map[[2]string]string{}
	for _, f := range []struct{ name, m, f string }{
		{"schema.cpu_idle_field", s.CPUMeasurement, s.CPUIdleField},
		{"schema.cpu_iowait_field", s.CPUMeasurement, s.CPUIOWaitField},
		{"schema.disk_read_field", s.DiskMeasurement, s.DiskReadField},
		{"schema.disk_write_field", s.DiskMeasurement, s.DiskWriteField},
		{"schema.net_recv_field", s.NetMeasurement, s.NetRecvField},
		{"schema.net_sent_field", s.NetMeasurement, s.NetSentField},
		{"schema.pressure_total_field", s.PressureMeasurement, s.PressureTotalField},
	} {
		k := [2]string{f.m, f.f}
		if other, dup := seen[k]; dup {
			return invalid(f.name, "names the same measurement and field as %s (%q.%q)", other, f.m, f.f)
		}
		seen[k] = f.name
	}
	return nil
}

func (s Schema) isZero() bool {
	return s.HostTag == "" && s.CPUMeasurement == "" && s.CPUTag == "" && s.CPUTotal == "" &&
		s.CPUIdleField == "" && s.CPUIOWaitField == "" && s.DiskMeasurement == "" &&
		s.DiskNameTag == "" && s.DiskReadField == "" && s.DiskWriteField == "" &&
		len(s.DiskExclude) == 0 && s.NetMeasurement == "" && s.NetInterfaceTag == "" &&
		s.NetRecvField == "" && s.NetSentField == "" && len(s.NetInclude) == 0 &&
		len(s.NetExclude) == 0 && s.ContainersMeasurement == "" &&
		s.ContainersKindTag == "" && s.ContainersField == "" && s.PressureMeasurement == "" &&
		s.PressureResourceTag == "" && s.PressureTypeTag == "" && s.PressureTotalField == ""
}

// checkBounds checks the settings both readers share and returns the host
// pattern maximum to use (0 means defaultHostPatternMax).
func checkBounds(timeout, staleAfter time.Duration, hostPatternMax int) (int, error) {
	switch {
	case timeout <= 0:
		return 0, invalid("timeout", "must be positive, got %v", timeout)
	case staleAfter <= 0:
		return 0, invalid("stale_after", "must be positive, got %v", staleAfter)
	case hostPatternMax < 0:
		return 0, invalid("host_pattern_max", "must not be negative, got %d", hostPatternMax)
	case hostPatternMax == 0:
		return defaultHostPatternMax, nil
	}
	return hostPatternMax, nil
}

// checkMaxAnswer checks an answer cap and returns the one to use (0
// means def).
func checkMaxAnswer(v, def int64) (int64, error) {
	switch {
	case v < 0:
		return 0, invalid("max_answer_bytes", "must not be negative, got %d", v)
	case v == 0:
		return def, nil
	case v < minMaxAnswer:
		return 0, invalid("max_answer_bytes", "must be 0 (the default, %d) or at least %d, got %d", def, minMaxAnswer, v)
	}
	return v, nil
}

// minMaxAnswer is the least answer cap: an empty answer's headers and
// envelope.
const minMaxAnswer = 4 << 10

// checkURL parses a server's base URL: http or https, a host, an
// optional path prefix, no query or fragment.
func checkURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return nil, invalid(field, "is empty")
	case err != nil:
		return nil, invalid(field, "does not parse: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, invalid(field, "scheme must be http or https, got %q", u.Scheme)
	case u.Host == "":
		return nil, invalid(field, "has no host: %q", raw)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, invalid(field, "must not have a query or fragment: %q", raw)
	}
	return u, nil
}

// checkName accepts any non-empty UTF-8 name without control characters;
// names reach Flux only as escaped string literals.
func checkName(field, v string) error {
	switch {
	case v == "":
		return invalid(field, "is empty")
	case !utf8.ValidString(v):
		return invalid(field, "is not valid UTF-8: %q", v)
	case strings.ContainsFunc(v, unicode.IsControl):
		return invalid(field, "contains a control character: %q", v)
	}
	return nil
}

// joinPatterns compiles each pattern and returns one anchored alternation
// as a Flux regex literal, "" for an empty list.
func joinPatterns(field string, pats []string) (string, error) {
	alt, err := alternation(field, pats)
	if alt == "" || err != nil {
		return "", err
	}
	lit, err := fluxRegex("^(?:" + alt + ")$")
	if err != nil {
		return "", invalid(field, "does not compile: %v", err)
	}
	return lit, nil
}

// alternation compiles each pattern and returns them, sorted and without
// repeats, as one unanchored alternation "(?:a)|(?:b)"; "" for an empty
// list. A bad pattern is a *fieldError naming its index.
func alternation(field string, pats []string) (string, error) {
	parts := make([]string, 0, len(pats))
	for i, p := range pats {
		if p == "" {
			return "", invalid(fmt.Sprintf("%s[%d]", field, i), "is empty")
		}
		if _, err := regexp.Compile(p); err != nil {
			return "", invalid(fmt.Sprintf("%s[%d]", field, i), "does not compile: %v", err)
		}
		parts = append(parts, "(?:"+p+")")
	}
	slices.Sort(parts)
	return strings.Join(slices.Compact(parts), "|"), nil
}

// fieldError is a Config field or argument that failed validation.
// errors.Is(err, errInvalid) holds for every fieldError.
type fieldError struct {
	Field  string // e.g. "timeout", "schema.disk_exclude[2]", "hosts[0]", "window"
	Reason string
}

func (e *fieldError) Error() string { return "collector: invalid " + e.Field + ": " + e.Reason }

// Unwrap makes errors.Is(err, errInvalid) true.
func (e *fieldError) Unwrap() error { return errInvalid }

// FieldReason is the field and the reason, for a config loader that
// names the whole key.
func (e *fieldError) FieldReason() (field, reason string) { return e.Field, e.Reason }

func invalid(field, format string, args ...any) error {
	return &fieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
