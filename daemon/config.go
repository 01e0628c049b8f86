package daemon

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/internal/metricsource"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/plan"
	"github.com/colocd/colocd/profile"
)

// Config is colocd's whole configuration. Every field has a key (its
// mapstructure tag path) that can be set in the YAML file, as an environment
// variable COLOCD_<KEY> (path upper-cased, "." → "_"; lists comma-separated)
// or, for a few, as a flag. Load applies defaults → file → env → flags and
// then Validate.
type Config struct {
	Listen  string `mapstructure:"listen"`   // HTTP listen address, host:port
	DataDir string `mapstructure:"data_dir"` // store, journal and simulator state
	// DataDirReserveBytes is the free space kept on data_dir's file system
	// for the jobs already accepted: below it submissions are refused (503)
	// and /readyz fails; 0: no reserve (queue.Options.Reserve).
	DataDirReserveBytes int64  `mapstructure:"data_dir_reserve_bytes"`
	LogLevel            string `mapstructure:"log_level"`  // debug|info|warn|error
	LogFormat           string `mapstructure:"log_format"` // auto|text|json|journal (NewLogger)

	TLS       tlsConfig     `mapstructure:"tls"`
	Tokens    []tokenConfig `mapstructure:"tokens"`
	TokenFile string        `mapstructure:"token_file"` // lines "secret:user:role"; merged with tokens
	API       apiConfig     `mapstructure:"api"`
	Journal   journalConfig `mapstructure:"journal"`

	Backend    backendKind        `mapstructure:"backend"` // sim|yarn
	Sim        simConfig          `mapstructure:"sim"`
	Yarn       yarncluster.Config `mapstructure:"yarn"`
	Metrics    metricsConfig      `mapstructure:"metrics"`
	Influx     influxSection      `mapstructure:"influx"`
	Prometheus prometheusSection  `mapstructure:"prometheus"`

	Goodness  goodnessConfig  `mapstructure:"goodness"`
	Learning  learningConfig  `mapstructure:"learning"`
	Admission admissionConfig `mapstructure:"admission"`
	Pipeline  pipelineConfig  `mapstructure:"pipeline"`
	Retention retentionConfig `mapstructure:"retention"`
	HA        haConfig        `mapstructure:"ha"`

	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
}

// backendKind names the cluster the daemon admits jobs to.
type backendKind string

// Backends.
const (
	backendSim  backendKind = "sim"  // the embedded simulator (no outside service)
	backendYarn backendKind = "yarn" // a YARN ResourceManager, metrics from metrics.source
)

// metricsConfig says where the yarn backend reads node usage.
type metricsConfig struct {
	// Source is sourceInfluxDB (section influx: Telegraf's measurements,
	// Flux or InfluxQL) or sourcePrometheus (section prometheus:
	// node_exporter's metrics).
	Source string `mapstructure:"source"`
	// Hosts maps YARN's node names to the names the source knows the
	// machines by (metricsource.HostsConfig), and how often the source's hosts are
	// listed to report those YARN does not run.
	Hosts metricsource.HostsConfig `mapstructure:"hosts"`
}

// Metrics sources.
const (
	sourceInfluxDB   = "influxdb"
	sourcePrometheus = "prometheus"
)

// tlsConfig enables HTTPS when both files are set.
type tlsConfig struct {
	CertFile string `mapstructure:"cert_file"`
	KeyFile  string `mapstructure:"key_file"`
	// ClientAuth asks clients for a certificate: none, optional (a
	// certificate signed by ClientCAFile identifies its sender, whose
	// subject's common name is the user) or require (every connection
	// must present one).
	ClientAuth string `mapstructure:"client_auth"`
	// ClientCAFile is the PEM bundle of the CAs that sign client
	// certificates.
	ClientCAFile string `mapstructure:"client_ca_file"`
}

// Client certificate modes (tls.client_auth).
const (
	clientAuthNone     = "none"
	clientAuthOptional = "optional"
	clientAuthRequire  = "require"
)

// tokenConfig is one API bearer token, for a service account. From the
// environment, COLOCD_TOKENS takes "secret:user:role[:expires]" items
// separated by commas.
type tokenConfig struct {
	Token string   `mapstructure:"token"`
	User  string   `mapstructure:"user"`
	Role  api.Role `mapstructure:"role"` // reader|submitter|admin
	// Expires is when the token stops being accepted; zero: never.
	Expires time.Time `mapstructure:"expires"`
}

// apiConfig bounds the HTTP API.
type apiConfig struct {
	MaxBodyBytes int64 `mapstructure:"max_body_bytes"`
	// ReadTimeout bounds reading a whole request, headers and body: a
	// client that sends its body slowly is cut off after it.
	ReadTimeout time.Duration `mapstructure:"read_timeout"`
	// WriteTimeout bounds writing a response (from the end of the request
	// headers): a client that does not read is cut off after it.
	WriteTimeout time.Duration `mapstructure:"write_timeout"`
	// MaxConnections caps the open client connections; more wait in the
	// listen backlog until one closes.
	MaxConnections int `mapstructure:"max_connections"`
	// MaxKinds caps the job kinds colocd learns about (the pair
	// preferences are K×K): a submission of a new kind beyond it is
	// rejected with 422.
	MaxKinds int `mapstructure:"max_kinds"`
	// PublicMetrics serves GET /metrics without a token, for scrapers that
	// cannot send one; by default it takes a reader token. Everything
	// else still needs one.
	PublicMetrics bool `mapstructure:"public_metrics"`
	// Auth is how callers authenticate: tokens, kerberos (SPNEGO) or both.
	Auth api.AuthMode `mapstructure:"auth"`
	// Kerberos is the SPNEGO acceptor, with auth kerberos or both.
	Kerberos apiKerberosConfig `mapstructure:"kerberos"`
	// ACL grants roles to the users Kerberos or a client certificate
	// authenticated, in Hadoop's ACL shape ("*", or "users groups").
	ACL apiACLConfig `mapstructure:"acl"`
	// GroupsFile lists groups, "group: user1,user2" per line; "": none.
	GroupsFile string `mapstructure:"groups_file"`
	// HostGroups adds the groups this host gives a user (os/user).
	HostGroups bool `mapstructure:"host_groups"`
	// ProxyUsers let users act for others (?doAs=), in the shape of
	// hadoop.proxyuser.<user>.users, .groups and .hosts.
	ProxyUsers []proxyUserConfig `mapstructure:"proxy_users"`
	// JobGroups are groups whose members read each other's jobs whole and
	// cancel them.
	JobGroups []string `mapstructure:"job_groups"`
}

// apiKerberosConfig is the API's SPNEGO acceptor.
type apiKerberosConfig struct {
	// Keytab holds the service's HTTP/<host> keys.
	Keytab string `mapstructure:"keytab"`
	// Principal is the service principal accepted, Hadoop's
	// hadoop.http.authentication.kerberos.principal: _HOST is this host's
	// name; a comma-separated list; "*": any the keytab holds.
	Principal string `mapstructure:"principal"`
	// AuthToLocal maps client principals to users, in the shape of
	// hadoop.security.auth_to_local (one rule per item).
	AuthToLocal []string `mapstructure:"auth_to_local"`
}

// apiACLConfig grants each role to users and groups.
type apiACLConfig struct {
	Reader    string `mapstructure:"reader"`
	Submitter string `mapstructure:"submitter"`
	Admin     string `mapstructure:"admin"`
}

// proxyUserConfig lets User act for the users listed, the members of the
// groups listed ("*": anyone), from the client addresses listed ("*", an
// address or a CIDR prefix).
type proxyUserConfig struct {
	User   string   `mapstructure:"user"`
	Users  []string `mapstructure:"users"`
	Groups []string `mapstructure:"groups"`
	Hosts  []string `mapstructure:"hosts"`
}

// journalConfig bounds the decision and goodness journal (in memory and on disk).
type journalConfig struct {
	MaxDecisions int `mapstructure:"max_decisions"`
	MaxGoodness  int `mapstructure:"max_goodness"`
}

// The journal's caps: about 1 GB of memory for both rings full of typical
// records. Measured (go1.26, amd64) as the heap of records decoded from
// their JSON lines, ring slot included:
//
//   - a decision of the profile-model pipeline, 20 kinds, 16 nodes, windows
//     of 8 to 10,000 jobs: 4.0–11.1 KB (JSON 3.3–8.9 KB); one with every
//     list at pipeline.max_recorded's default (32 drops per stage, 32
//     candidates with 16 running kinds each, 32 groups) and 63-character
//     kinds: 88 KB;
//   - a goodness record: 218 B (JSON 357 B); with 63-character node and
//     kind names 368 B.
//
// At the caps: 50,000 × 11.1 KB = 0.56 GB of decisions (4.4 GB if every
// one were full) and 2,000,000 × 218 B = 0.44 GB of goodness (0.74 GB with
// long names). The rings grow as records arrive, so memory follows what is
// kept. On disk a file is compacted past 2 × cap + 16 lines: about 0.9 GB
// of typical decisions (8.9 KB a line) and 1.4 GB of goodness (357 B) at
// the caps.
const (
	maxJournalDecisions = 50_000
	maxJournalGoodness  = 2_000_000
)

// simConfig configures the embedded simulator backend.
type simConfig struct {
	Workload string `mapstructure:"workload"` // workload YAML (cluster and kinds)
	// Seed of the simulator and the admission sampler; 0 picks one at first
	// start. Either way it is logged and kept in data_dir, so a restart
	// replays the same simulated cluster.
	Seed            uint64        `mapstructure:"seed"`
	Speed           float64       `mapstructure:"speed"`            // virtual seconds per wall second
	MetricsInterval time.Duration `mapstructure:"metrics_interval"` // virtual
	// Pressure makes the simulated node metrics carry pressure stall
	// information (io and cpu "some", sim.Options.Pressure), as a metrics
	// source with influx.pressure or prometheus.pressure on reads it.
	Pressure bool `mapstructure:"pressure"`
}

// goodnessConfig holds a node's hardware maxima in MB/s (10^6 bytes/s), the
// paper's r_max and w_max. On the simulator, zero means "the workload's node".
// That node is the reference node the profiles' amounts are fractions of;
// ReferenceVCores is its advertised vcores, so that a node the resource
// manager reports with k times as many counts k times its CPU
// (engine.Options.ReferenceVCores); zero: every node's CPU counts alike (on
// the simulator: the workload's reference node's vcores).
type goodnessConfig struct {
	DiskReadMBps    float64 `mapstructure:"disk_read_mbps"`
	DiskWriteMBps   float64 `mapstructure:"disk_write_mbps"`
	NetRecvMBps     float64 `mapstructure:"net_recv_mbps"`
	NetSentMBps     float64 `mapstructure:"net_sent_mbps"`
	ReferenceVCores int64   `mapstructure:"reference_vcores"`
	// NodeGroups are the maxima of nodes whose disks or NICs differ from
	// the reference node's (no resource manager reports them): a node
	// takes the first group whose hosts pattern matches its name.
	NodeGroups []nodeGroupConfig `mapstructure:"node_groups"`
}

// nodeGroupConfig is one group of nodes of other hardware: Hosts is an
// RE2 pattern that must match a node's whole name (as YARN reports it);
// a maximum left at zero is the reference node's.
type nodeGroupConfig struct {
	Hosts         string  `mapstructure:"hosts"`
	DiskReadMBps  float64 `mapstructure:"disk_read_mbps"`
	DiskWriteMBps float64 `mapstructure:"disk_write_mbps"`
	NetRecvMBps   float64 `mapstructure:"net_recv_mbps"`
	NetSentMBps   float64 `mapstructure:"net_sent_mbps"`
}

// learningConfig configures the learning tick and the bandit.
type learningConfig struct {
	Schedule string `mapstructure:"schedule"` // cron spec, e.g. "@every 60s"
	// The pair preferences' learner: step_size, baseline (global|row|
	// recency), recency_alpha, clip (0 = none), self_prior (H₀(a|a) =
	// −self_prior; 0 = the paper's H₀ = 0).
	bandit.Config   `mapstructure:",squash"`
	Credit          engine.CreditMode `mapstructure:"credit"`
	Aggregate       engine.Aggregate  `mapstructure:"aggregate"`
	MaxKindsPerNode int               `mapstructure:"max_kinds_per_node"`
	// PairReward is what the pair preferences learn from: the observed
	// goodness (the paper), or its residual from the profiles' prediction
	// (what the profiles cannot see: the correction of the model).
	PairReward engine.PairReward `mapstructure:"pair_reward"`
	Profile    profile.Config    `mapstructure:"profile"`
	// Placement is where the learning tick reads which kinds ran on which
	// node: placementRM (the cluster syncs: colocd's own applications) or
	// placementInflux (the yarn_containers points of the
	// colocd-telegraf-yarn plugin in the influx section's InfluxDB: every
	// application, other tenants' as foreign kinds).
	Placement string `mapstructure:"placement"`
	// PlacementTolerance is, with placement influx, how far from each edge
	// of the learning window an application's first and last samples may
	// be for it to count as present over the whole window
	// (engine.PlacementConfig.Tolerance).
	PlacementTolerance time.Duration `mapstructure:"placement_tolerance"`
	// Foreign names other tenants' applications as kinds, with placement
	// influx.
	Foreign foreignSection `mapstructure:"foreign"`
	// ContainerUsage makes the learning tick read each application's own
	// CPU and disk on each node (engine.Options.ContainerUsage): on YARN
	// from the colocd-telegraf-yarn plugin's cgroup counters in the influx
	// section's InfluxDB (the plugin's cgroup_dir), on the simulator from
	// its per-application metrics (sim.Options.ContainerMetrics).
	ContainerUsage bool `mapstructure:"container_usage"`
}

// foreignSection is learning.foreign: how the placement read names other
// tenants' applications as kinds (metricsource.ForeignConfig: kind,
// prefix, names) and how many of those kinds the engine learns
// (max_kinds, engine.PlacementConfig.MaxForeignKinds).
type foreignSection struct {
	metricsource.ForeignConfig `mapstructure:",squash"`
	MaxKinds                   int `mapstructure:"max_kinds"`
}

// Placement sources (learning.placement).
const (
	placementRM     = "rm"
	placementInflux = "influx"
)

// PlacementConfig is the engine's placement read, from
// learning.placement_tolerance and learning.foreign.
func (l learningConfig) PlacementConfig() engine.PlacementConfig {
	return engine.PlacementConfig{Tolerance: l.PlacementTolerance, ForeignKinds: l.Foreign.NamesAny(),
		ForeignPrefix: l.Foreign.Prefix, MaxForeignKinds: l.Foreign.MaxKinds}
}

// admissionConfig configures the admission loop.
type admissionConfig struct {
	Tick time.Duration `mapstructure:"tick"`
	// KickGap is the least time between the start of a pass and one a
	// submission brings on (engine.LoopOptions.KickGap): a burst of
	// submissions shares passes instead of reading the cluster once each.
	KickGap    time.Duration        `mapstructure:"kick_gap"`
	MaxRunning int                  `mapstructure:"max_running"` // 0 = no cap
	Mode       engine.AdmissionMode `mapstructure:"mode"`
	// Backoff is how calls to a failing cluster back off (sync,
	// reconciliation, admission; engine.BackoffConfig).
	Backoff engine.BackoffConfig `mapstructure:"backoff"`
}

// retentionConfig configures store compaction.
type retentionConfig struct {
	FinishedAfter time.Duration `mapstructure:"finished_after"` // 0 = keep forever
	Schedule      string        `mapstructure:"schedule"`       // cron spec
}

// DefaultConfig is the configuration before the file, env and flags:
// every owner's defaults with colocd's choices (PresetColocd).
func DefaultConfig() Config {
	return PresetColocd.Apply(ownerDefaults())
}

// ownerDefaults is every section at its owner's defaults: the daemon's
// own sections here, each other package's from its Default….
func ownerDefaults() Config {
	pc := pipeline.DefaultConfig()
	pc.Fairness.Weights = map[string]float64{} // empty, not nil: a value the file and environment can replace
	pc.Fairness.Queues = []pipeline.ServiceQueue{}
	return Config{
		Listen:  "127.0.0.1:8080",
		DataDir: "/var/lib/colocd",
		// 64 MiB: thousands of state changes even if none reused the
		// store file's free pages.
		DataDirReserveBytes: 64 << 20,
		LogLevel:            "info",
		LogFormat:           logAuto,
		TLS:                 tlsConfig{ClientAuth: clientAuthNone},
		API: apiConfig{MaxBodyBytes: 1 << 20, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
			MaxConnections: 1024, MaxKinds: 1000, Auth: api.AuthTokens,
			Kerberos:  apiKerberosConfig{Principal: "HTTP/_HOST", AuthToLocal: []string{"DEFAULT"}},
			ACL:       apiACLConfig{Reader: "*", Submitter: "*", Admin: ""},
			JobGroups: []string{}, ProxyUsers: []proxyUserConfig{}},
		Journal: journalConfig{MaxDecisions: 10000, MaxGoodness: 100000},
		Backend: backendSim,
		Sim: simConfig{
			Workload:        "configs/workloads/paper-queue-a.yaml",
			Speed:           1,
			MetricsInterval: 10 * time.Second,
		},
		Yarn:    yarncluster.DefaultConfig(),
		HA:      defaultHA(),
		Metrics: metricsConfig{Source: sourceInfluxDB, Hosts: metricsource.DefaultHostsConfig()},
		Influx: influxSection{Config: collector.Config{
			Language:       collector.LanguageInfluxQL,
			Timeout:        10 * time.Second,
			StaleAfter:     30 * time.Second,
			MaxAnswerBytes: collector.DefaultMaxAnswerBytes,
			Schema:         defaultSchema(),
		}, Headers: map[string]string{}},
		Prometheus: prometheusSection{PrometheusConfig: defaultPrometheus(), Headers: map[string]string{}},
		Learning: learningConfig{
			Schedule:        "@every 60s",
			Config:          bandit.DefaultConfig(),
			Credit:          engine.CreditLater,
			Aggregate:       engine.AggregatePair,
			MaxKindsPerNode: 2,
			PairReward:      engine.RewardGoodness,
			Profile: profile.Config{HalfLife: profile.DefaultHalfLife, PriorStrength: profile.DefaultPriorStrength,
				Saturation: profile.DefaultSaturation},
			Placement:          placementRM,
			PlacementTolerance: engine.DefaultPlacementTolerance,
			Foreign:            foreignSection{ForeignConfig: metricsource.DefaultForeignConfig(), MaxKinds: engine.DefaultForeignMaxKinds},
		},
		Admission: admissionConfig{Tick: 10 * time.Second, KickGap: 100 * time.Millisecond, Mode: engine.ModeActive, Backoff: engine.DefaultBackoffConfig()},
		Pipeline:  pipelineConfig{Config: pc, Scorer: engine.DefaultScorerConfig(), Plan: plan.Config{}.WithDefaults()},
		Retention: retentionConfig{FinishedAfter: 30 * 24 * time.Hour, Schedule: "@every 1h"},

		ShutdownTimeout: 30 * time.Second,
	}
}

// defaultSchema is collector.DefaultSchema with every list non-nil (an
// empty list is a value the file and environment can replace).
func defaultSchema() collector.Schema {
	s := collector.DefaultSchema()
	s.DiskExclude, s.NetInclude, s.NetExclude = nonNil(s.DiskExclude), nonNil(s.NetInclude), nonNil(s.NetExclude)
	return s
}

// defaultPrometheus is collector.DefaultPrometheusConfig without a URL
// (there is no Prometheus unless one is named) and with every list
// non-nil.
func defaultPrometheus() collector.PrometheusConfig {
	p := collector.DefaultPrometheusConfig()
	p.URL = ""
	p.DiskExclude, p.NetInclude, p.NetExclude = nonNil(p.DiskExclude), nonNil(p.NetInclude), nonNil(p.NetExclude)
	return p
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// configError names the key that is wrong and why, and the environment
// variable the value came from, if one did.
type configError struct {
	Key    string // e.g. "learning.step_size"; "" for a variable that names no key
	Env    string // e.g. "COLOCD_LEARNING_STEP_SIZE", when the environment set Key
	Reason string // e.g. "must be > 0, got -1"
}

func (e *configError) Error() string {
	switch {
	case e.Key == "":
		return "environment variable " + e.Env + ": " + e.Reason
	case e.Env != "":
		return "config key " + e.Key + " (environment variable " + e.Env + "): " + e.Reason
	}
	return "config key " + e.Key + ": " + e.Reason
}

// Unwrap makes errors.Is(err, ErrConfig) true.
func (e *configError) Unwrap() error { return ErrConfig }

func cfgErr(key, format string, args ...any) error {
	return &configError{Key: key, Reason: fmt.Sprintf(format, args...)}
}

// fieldError is a section owner's validation error (queue.FieldError,
// yarncluster's fieldError): the key under the section, and why.
type fieldError interface {
	error
	FieldReason() (field, reason string)
}

// sectionErr names the whole key of an owner's validation error.
func sectionErr(section string, err error) error {
	if err == nil {
		return nil
	}
	var fe fieldError
	if errors.As(err, &fe) {
		f, r := fe.FieldReason()
		return &configError{Key: section + "." + f, Reason: r}
	}
	return &configError{Key: section, Reason: err.Error()}
}
