package daemon

import (
	"bufio"
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"gopkg.in/yaml.v3"

	"github.com/robfig/cron/v3"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/profile"
)

// Config is colocd's whole configuration. Every field has a key (its
// mapstructure tag path) that can be set in the YAML file, as an environment
// variable COLOCD_<KEY> (path upper-cased, "." → "_"; lists comma-separated)
// or, for a few, as a flag. Load applies defaults → file → env → flags and
// then Validate.
type Config struct {
	Listen    string `mapstructure:"listen"`     // HTTP listen address, host:port
	DataDir   string `mapstructure:"data_dir"`   // store, journal and simulator state
	LogLevel  string `mapstructure:"log_level"`  // debug|info|warn|error
	LogFormat string `mapstructure:"log_format"` // text|json

	TLS       TLSConfig     `mapstructure:"tls"`
	Tokens    []TokenConfig `mapstructure:"tokens"`
	TokenFile string        `mapstructure:"token_file"` // lines "secret:user:role"; merged with tokens
	API       APIConfig     `mapstructure:"api"`
	Journal   JournalConfig `mapstructure:"journal"`

	Backend Backend            `mapstructure:"backend"` // sim|yarn
	Sim     SimConfig          `mapstructure:"sim"`
	Yarn    yarncluster.Config `mapstructure:"yarn"`
	Influx  InfluxConfig       `mapstructure:"influx"`

	Goodness  GoodnessConfig  `mapstructure:"goodness"`
	Learning  LearningConfig  `mapstructure:"learning"`
	Admission AdmissionConfig `mapstructure:"admission"`
	Pipeline  PipelineConfig  `mapstructure:"pipeline"`
	Retention RetentionConfig `mapstructure:"retention"`

	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
}

// Backend names the cluster the daemon admits jobs to.
type Backend string

// Backends.
const (
	BackendSim  Backend = "sim"  // the embedded simulator (no outside service)
	BackendYarn Backend = "yarn" // a YARN ResourceManager, metrics from InfluxDB
)

// TLSConfig enables HTTPS when both files are set.
type TLSConfig struct {
	CertFile string `mapstructure:"cert_file"`
	KeyFile  string `mapstructure:"key_file"`
}

// TokenConfig is one API bearer token. From the environment, COLOCD_TOKENS
// takes "secret:user:role" items separated by commas.
type TokenConfig struct {
	Token string   `mapstructure:"token"`
	User  string   `mapstructure:"user"`
	Role  api.Role `mapstructure:"role"` // reader|submitter|admin
}

// APIConfig bounds the HTTP API.
type APIConfig struct {
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
}

// JournalConfig bounds the decision and goodness journal (in memory and on disk).
type JournalConfig struct {
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
	MaxJournalDecisions = 50_000
	MaxJournalGoodness  = 2_000_000
)

// SimConfig configures the embedded simulator backend.
type SimConfig struct {
	Workload string `mapstructure:"workload"` // workload YAML (cluster and kinds)
	// Seed of the simulator and the admission sampler; 0 picks one at first
	// start. Either way it is logged and kept in data_dir, so a restart
	// replays the same simulated cluster.
	Seed            uint64        `mapstructure:"seed"`
	Speed           float64       `mapstructure:"speed"`            // virtual seconds per wall second
	MetricsInterval time.Duration `mapstructure:"metrics_interval"` // virtual
}

// InfluxConfig configures the metrics source of the YARN backend.
type InfluxConfig struct {
	URL        string        `mapstructure:"url"`
	Org        string        `mapstructure:"org"`
	Bucket     string        `mapstructure:"bucket"` // 1.8: "db/rp"
	Token      string        `mapstructure:"token"`  // 1.8: "user:password"
	Timeout    time.Duration `mapstructure:"timeout"`
	StaleAfter time.Duration `mapstructure:"stale_after"`
	Schema     SchemaConfig  `mapstructure:"schema"`
}

// SchemaConfig names Telegraf's measurements, tags and fields (collector.Schema).
type SchemaConfig struct {
	HostTag               string   `mapstructure:"host_tag"`
	CPUMeasurement        string   `mapstructure:"cpu_measurement"`
	CPUTag                string   `mapstructure:"cpu_tag"`
	CPUTotal              string   `mapstructure:"cpu_total"`
	CPUIdleField          string   `mapstructure:"cpu_idle_field"`
	CPUIOWaitField        string   `mapstructure:"cpu_iowait_field"`
	DiskMeasurement       string   `mapstructure:"disk_measurement"`
	DiskNameTag           string   `mapstructure:"disk_name_tag"`
	DiskReadField         string   `mapstructure:"disk_read_field"`
	DiskWriteField        string   `mapstructure:"disk_write_field"`
	DiskExclude           []string `mapstructure:"disk_exclude"`
	NetMeasurement        string   `mapstructure:"net_measurement"`
	NetInterfaceTag       string   `mapstructure:"net_interface_tag"`
	NetRecvField          string   `mapstructure:"net_recv_field"`
	NetSentField          string   `mapstructure:"net_sent_field"`
	NetInclude            []string `mapstructure:"net_include"`
	NetExclude            []string `mapstructure:"net_exclude"`
	ContainersMeasurement string   `mapstructure:"containers_measurement"`
	ContainersKindTag     string   `mapstructure:"containers_kind_tag"`
	ContainersField       string   `mapstructure:"containers_field"`
}

// GoodnessConfig holds a node's hardware maxima in MB/s (10^6 bytes/s), the
// paper's r_max and w_max. On the simulator, zero means "the workload's node".
type GoodnessConfig struct {
	DiskReadMBps  float64 `mapstructure:"disk_read_mbps"`
	DiskWriteMBps float64 `mapstructure:"disk_write_mbps"`
	NetRecvMBps   float64 `mapstructure:"net_recv_mbps"`
	NetSentMBps   float64 `mapstructure:"net_sent_mbps"`
}

// LearningConfig configures the learning tick and the bandit.
type LearningConfig struct {
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
}

// AdmissionConfig configures the admission loop.
type AdmissionConfig struct {
	Tick       time.Duration        `mapstructure:"tick"`
	MaxRunning int                  `mapstructure:"max_running"` // 0 = no cap
	Mode       engine.AdmissionMode `mapstructure:"mode"`
}

// RetentionConfig configures store compaction.
type RetentionConfig struct {
	FinishedAfter time.Duration `mapstructure:"finished_after"` // 0 = keep forever
	Schedule      string        `mapstructure:"schedule"`       // cron spec
}

// DefaultStepSize is learning.step_size's default: γ of the pair
// preferences, which in preference mode model learn from the profiles'
// goodness residuals. A tick's residual is mostly the jobs' phases, which
// mean profiles do not see, so the correction must follow what persists: at
// γ = 0.05 (bandit.DefaultStepSize, the paper mode's) the preferences chased
// that noise and, carried into a second run, cost queue A seven points of
// makespan (−19.6 % → −12.7 % for ra-warm, tuning seeds); at 0.005 ra-warm
// keeps −19.4 % and the workload with interference keeps the correction's
// gain (noisy: ra −7.6 % without a correction, −9.5 % with it).
const DefaultStepSize = 0.005

// DefaultConfig is the configuration before the file, env and flags.
func DefaultConfig() Config {
	return Config{
		Listen:    "127.0.0.1:8080",
		DataDir:   "/var/lib/colocd",
		LogLevel:  "info",
		LogFormat: "text",
		API: APIConfig{MaxBodyBytes: 1 << 20, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
			MaxConnections: 1024, MaxKinds: 1000},
		Journal: JournalConfig{MaxDecisions: 10000, MaxGoodness: 100000},
		Backend: BackendSim,
		Sim: SimConfig{
			Workload:        "configs/workloads/paper-queue-a.yaml",
			Speed:           1,
			MetricsInterval: 10 * time.Second,
		},
		Yarn: yarncluster.DefaultConfig(),
		Influx: InfluxConfig{
			Timeout:    10 * time.Second,
			StaleAfter: 30 * time.Second,
			Schema:     defaultSchema(),
		},
		Learning: LearningConfig{
			Schedule:        "@every 60s",
			Config:          bandit.Config{StepSize: DefaultStepSize, Baseline: bandit.GlobalMean, RecencyAlpha: 0.1, SelfPrior: 1},
			Credit:          engine.CreditLater,
			Aggregate:       engine.AggregatePair,
			MaxKindsPerNode: 2,
			PairReward:      engine.RewardResidual,
			Profile: profile.Config{HalfLife: profile.DefaultHalfLife, PriorStrength: profile.DefaultPriorStrength,
				Saturation: profile.DefaultSaturation},
		},
		Admission: AdmissionConfig{Tick: 10 * time.Second, Mode: engine.ModeActive},
		Pipeline:  DefaultPipelineConfig(),
		Retention: RetentionConfig{FinishedAfter: 30 * 24 * time.Hour, Schedule: "@every 1h"},

		ShutdownTimeout: 30 * time.Second,
	}
}

func defaultSchema() SchemaConfig { return schemaConfig(collector.DefaultSchema()) }

// ConfigError names the key that is wrong and why, and the environment
// variable the value came from, if one did.
type ConfigError struct {
	Key    string // e.g. "learning.step_size"; "" for a variable that names no key
	Env    string // e.g. "COLOCD_LEARNING_STEP_SIZE", when the environment set Key
	Reason string // e.g. "must be > 0, got -1"
}

func (e *ConfigError) Error() string {
	switch {
	case e.Key == "":
		return "environment variable " + e.Env + ": " + e.Reason
	case e.Env != "":
		return "config key " + e.Key + " (environment variable " + e.Env + "): " + e.Reason
	}
	return "config key " + e.Key + ": " + e.Reason
}

// Unwrap makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Unwrap() error { return ErrConfig }

func cfgErr(key, format string, args ...any) error {
	return &ConfigError{Key: key, Reason: fmt.Sprintf(format, args...)}
}

// fieldError is a section owner's validation error (queue.FieldError,
// yarncluster.FieldError): the key under the section, and why.
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
		return &ConfigError{Key: section + "." + f, Reason: r}
	}
	return &ConfigError{Key: section, Reason: err.Error()}
}

// LoadOptions are Load's inputs besides the file.
type LoadOptions struct {
	// File is the YAML config path; "" uses defaults, env and flags only.
	File string
	// Flags, when set, may hold "listen", "data-dir" and "log-level"; those
	// that were set on the command line override every other source.
	Flags *pflag.FlagSet
	// FlagKeys maps more flag names to config keys (e.g. "influx-url" →
	// "influx.url" for `colocd metrics`).
	FlagKeys map[string]string
	// Environ lists the environment as "NAME=value" items; nil means
	// os.Environ. Every COLOCD_* variable in it must be a key's (envName)
	// or one of envNotKeys.
	Environ func() []string
	// LookupEnv, when set and Environ is not, reads the keys' variables
	// one by one instead (an environment that cannot be listed: tests that
	// set a few keys). Unknown COLOCD_* names cannot be seen through it.
	LookupEnv func(string) (string, bool)
	// SkipTokenFile leaves token_file unread (commands other than serve
	// need no API tokens, and may run as a user who cannot read them).
	SkipTokenFile bool
}

// envNotKeys are the COLOCD_* environment variables that are not config
// keys, and who reads them. Load leaves these alone and refuses every
// other COLOCD_* variable that is not a key's, so a misspelt key is not
// silently ignored. TestEnvNotKeysComplete finds every COLOCD_* name in
// the repository and checks that it is a key's or listed here.
var envNotKeys = map[string]string{
	"COLOCD_CONFIG": "cmd/colocd: the config file when --config is not given",
	"COLOCD_SERVER": "cmd/colocd client commands: the daemon's URL (--server)",
	"COLOCD_TOKEN":  "cmd/colocd client commands: the API token (--token)",

	"COLOCD_YARN_TAGS": "yarnclient: the application tags, in the environment of yarn.command.argv",
	"COLOCD_JOB_ID":    "yarnclient: the job id, in the environment of yarn.command.argv",
	"COLOCD_JOB_KIND":  "yarnclient: the job kind, in the environment of yarn.command.argv",

	"COLOCD_TOOLS":              "Makefile, scripts/install-tools.sh: where the test tools are built",
	"COLOCD_INFLUXD":            "collector/influxtest.Tool: the influxd binary (COLOCD_<TOOL>; set by the Makefile)",
	"COLOCD_TELEGRAF":           "collector/influxtest.Tool: the telegraf binary (COLOCD_<TOOL>; set by the Makefile)",
	"COLOCD_REQUIRE_TOOLS":      "tests: 1 fails instead of skipping a test whose tool is missing (Makefile)",
	"COLOCD_SCREENSHOT_DIR":     "daemon/api tests: where the status page's screenshots go",
	"COLOCD_QUEUE_SEED":         "queue tests: replays the property tests' seed",
	"COLOCD_QUEUE_CRASH_SEED":   "queue tests: replays the crash test's seed",
	"COLOCD_QUEUE_DAMAGE_SEED":  "queue tests: replays the damaged-file test's seed",
	"COLOCD_QUEUE_DAMAGE_FILE":  "queue tests: replays one damaged file exactly",
	"COLOCD_QUEUE_CRASH_CHILD":  "queue tests: makes the test binary the crash test's child (its store path)",
	"COLOCD_QUEUE_CRASH_PREFIX": "queue tests: a setting passed to the crash test's child",
}

// EnvNotKeys returns the COLOCD_* variables that are not config keys,
// each with who reads it (a copy of the one list Load consults).
func EnvNotKeys() map[string]string { return maps.Clone(envNotKeys) }

// flagKeys maps flag names to config keys.
var flagKeys = map[string]string{"listen": "listen", "data-dir": "data_dir", "log-level": "log_level"}

// envName is the environment variable for a config key: "yarn.rm_urls" →
// "COLOCD_YARN_RM_URLS".
func envName(key string) string {
	return "COLOCD_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// configKeys lists every config key, sorted.
func configKeys() []string {
	var keys []string
	for _, lf := range leafFields(reflect.TypeOf(Config{}), "") {
		keys = append(keys, lf.key)
	}
	sort.Strings(keys)
	return keys
}

// Load reads the configuration: defaults, then the YAML file, then COLOCD_*
// environment variables, then flags; then Validate. Token files are read
// here. It stops at the first mistake, as a *ConfigError naming the key:
// a key the file or a COLOCD_* variable names that does not exist (with
// the nearest key), a key given twice in the file (keys are
// case-insensitive), or a value that is not of its key's type, converted
// by decodeValue without rounding, truncating or guessing.
func Load(opts LoadOptions) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	known := map[string]bool{}
	for _, k := range configKeys() {
		known[k] = true
	}
	for k, val := range flatten(reflect.ValueOf(DefaultConfig()), "") {
		v.SetDefault(k, val)
	}
	var fileNodes map[string]*yaml.Node
	if opts.File != "" {
		b, err := os.ReadFile(opts.File)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return Config{}, fmt.Errorf("%w: config file %s does not exist", ErrConfig, opts.File)
			}
			return Config{}, fmt.Errorf("read config: %w", err)
		}
		if fileNodes, err = fileValues(opts.File, b); err != nil {
			return Config{}, err
		}
		if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
			return Config{}, fmt.Errorf("%w: parse %s: %v", ErrConfig, opts.File, err)
		}
		var unknown []string
		for _, k := range v.AllKeys() {
			switch {
			case known[k] || underMap(k):
			case isSection(k):
				// A section left empty ("tls:") sets nothing; one given a
				// value instead of keys is a mistake.
				if src := (source{set: true, node: fileNodes[k]}); src.node != nil && !src.null() {
					_, shown := src.scalar(nil)
					return Config{}, cfgErr(k, "is a section, not a value: set its keys (%s.*), got %s", k, shown)
				}
			default:
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			reason := fmt.Sprintf("unknown key in %s", opts.File)
			if near := nearest(unknown[0], configKeys()); near != "" {
				reason += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return Config{}, &ConfigError{Key: unknown[0], Reason: reason + "; configs/colocd.yaml lists every key"}
		}
	}
	envVals, err := readEnv(opts)
	if err != nil {
		return Config{}, err
	}
	// The environment replaces whole values: a list or map from the
	// environment replaces the file's instead of merging into it.
	if len(envVals) > 0 {
		settings := v.AllSettings()
		for k, s := range envVals {
			setPath(settings, strings.Split(k, "."), *s)
		}
		v = viper.New()
		v.SetConfigType("yaml")
		for k, val := range flatten(reflect.ValueOf(DefaultConfig()), "") {
			v.SetDefault(k, val)
		}
		if err := v.MergeConfigMap(settings); err != nil {
			return Config{}, fmt.Errorf("%w: environment: %v", ErrConfig, err)
		}
	}
	flagSet := map[string]*pflag.Flag{} // key → its flag, when given on the command line
	if opts.Flags != nil {
		fk := maps.Clone(flagKeys)
		maps.Copy(fk, opts.FlagKeys)
		for name, key := range fk {
			if f := opts.Flags.Lookup(name); f != nil {
				if err := v.BindPFlag(key, f); err != nil {
					return Config{}, fmt.Errorf("bind flag --%s: %w", name, err)
				}
				if f.Changed {
					flagSet[key] = f
				}
			}
		}
	}
	// Each key's value, from the source that won, converted to its field's
	// type; then mapstructure only assigns.
	values := map[string]any{}
	for _, lf := range leafFields(reflect.TypeOf(Config{}), "") {
		var src source
		switch f, s, n := flagSet[lf.key], envVals[lf.key], fileNodes[lf.key]; {
		case f != nil:
			src = source{set: true, text: f.Value.String()}
		case s != nil:
			src = source{set: true, text: *s, env: envName(lf.key)}
		case n != nil:
			src = source{set: true, node: n}
		}
		val, err := decodeValue(lf.key, lf.typ, v.Get(lf.key), src)
		if err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				ce.Env = src.env
			}
			return Config{}, err
		}
		setPath(values, strings.Split(lf.key, "."), val)
	}
	var cfg Config
	if err := mapstructure.Decode(values, &cfg); err != nil {
		return Config{}, fmt.Errorf("%w: %s", ErrConfig, strings.Join(strings.Fields(err.Error()), " "))
	}
	cfg.normalize()
	if cfg.TokenFile != "" && !opts.SkipTokenFile {
		toks, err := readTokenFile(cfg.TokenFile)
		if err != nil {
			return Config{}, err
		}
		cfg.Tokens = append(cfg.Tokens, toks...)
	}
	if err := cfg.Validate(); err != nil {
		// Name the variable too when the environment set the key (and no
		// flag overrode it).
		var ce *ConfigError
		if errors.As(err, &ce) && ce.Env == "" {
			key, _, _ := strings.Cut(ce.Key, "[")
			if _, ok := envVals[key]; ok && flagSet[key] == nil {
				ce.Env = envName(key)
			}
		}
		return Config{}, err
	}
	return cfg, nil
}

// readEnv returns the keys the environment sets (key → value). A COLOCD_*
// variable that is neither a key's nor in envNotKeys is an error naming
// it, with the nearest key's variable.
func readEnv(opts LoadOptions) (map[string]*string, error) {
	vals := map[string]*string{}
	if opts.Environ == nil && opts.LookupEnv != nil {
		for _, k := range configKeys() {
			if s, ok := opts.LookupEnv(envName(k)); ok {
				vals[k] = &s
			}
		}
		return vals, nil
	}
	list := opts.Environ
	if list == nil {
		list = os.Environ
	}
	keyOf := map[string]string{} // variable → key
	var names []string
	for _, k := range configKeys() {
		keyOf[envName(k)] = k
		names = append(names, envName(k))
	}
	var unknown []string
	for _, kv := range list() {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "COLOCD_") {
			continue
		}
		if k, ok := keyOf[name]; ok {
			vals[k] = &val
		} else if _, ok := envNotKeys[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return vals, nil
	}
	sort.Strings(unknown)
	reason := "names no config key"
	if near := nearest(unknown[0], names); near != "" {
		reason += fmt.Sprintf(" (did you mean %s?)", near)
	}
	if len(unknown) > 1 {
		reason += fmt.Sprintf(" (nor do %s)", strings.Join(unknown[1:], ", "))
	}
	reason += "; a key's variable is COLOCD_ and the key path upper-cased, \".\" → \"_\" (configs/colocd.yaml lists every key)"
	return nil, &ConfigError{Env: unknown[0], Reason: reason}
}

// normalize trims list items (env lists may be "a, b").
func (c *Config) normalize() {
	trim := func(xs []string) []string {
		out := xs[:0]
		for _, x := range xs {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
		return out
	}
	c.Yarn.RMURLs = trim(c.Yarn.RMURLs)
	c.Influx.Schema.DiskExclude = trim(c.Influx.Schema.DiskExclude)
	c.Influx.Schema.NetInclude = trim(c.Influx.Schema.NetInclude)
	c.Influx.Schema.NetExclude = trim(c.Influx.Schema.NetExclude)
}

// isSection reports whether key is a section of keys (e.g. "tls").
func isSection(key string) bool {
	for _, k := range configKeys() {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// underMap reports whether key lies inside a map-valued key (e.g.
// "pipeline.fairness.weights.alice").
func underMap(key string) bool {
	for _, m := range mapKeys() {
		if strings.HasPrefix(key, m+".") {
			return true
		}
	}
	return false
}

func mapKeys() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("mapstructure")
			switch {
			case tag == "" || tag == "-":
			case f.Type.Kind() == reflect.Map:
				out = append(out, prefix+tag)
			case f.Type.Kind() == reflect.Struct && f.Type != durationType:
				walk(f.Type, prefix+tag+".")
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	return out
}

func parseTokens(s, key string) ([]TokenConfig, error) {
	var out []TokenConfig
	for i, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		item = strings.TrimSpace(item)
		if item == "" || strings.HasPrefix(item, "#") {
			continue
		}
		parts := strings.Split(item, ":")
		if len(parts) != 3 {
			return nil, cfgErr(fmt.Sprintf("%s[%d]", key, i), `want "secret:user:role"`)
		}
		role, err := api.ParseRole(parts[2])
		if err != nil {
			return nil, cfgErr(fmt.Sprintf("%s[%d].role", key, i), "%v", err)
		}
		out = append(out, TokenConfig{Token: parts[0], User: parts[1], Role: role})
	}
	return out, nil
}

func readTokenFile(path string) ([]TokenConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cfgErr("token_file", "%v", err)
	}
	defer f.Close()
	var out []TokenConfig
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		toks, err := parseTokens(line, fmt.Sprintf("token_file line %d", n))
		if err != nil {
			return nil, err
		}
		out = append(out, toks...)
	}
	if err := sc.Err(); err != nil {
		return nil, cfgErr("token_file", "%v", err)
	}
	return out, nil
}

// Validate reports the first key whose value is out of bounds, naming the
// key and the bound (*ConfigError wrapping ErrConfig).
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return cfgErr("listen", "must be host:port, got %q", c.Listen)
	}
	if c.DataDir == "" {
		return cfgErr("data_dir", "must not be empty")
	}
	if !oneOf(c.LogLevel, "debug", "info", "warn", "error") {
		return cfgErr("log_level", "must be one of debug|info|warn|error, got %q", c.LogLevel)
	}
	if !oneOf(c.LogFormat, "text", "json") {
		return cfgErr("log_format", "must be text or json, got %q", c.LogFormat)
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		if c.TLS.CertFile == "" {
			return cfgErr("tls.cert_file", "must be set when tls.key_file is")
		}
		return cfgErr("tls.key_file", "must be set when tls.cert_file is")
	}
	seen := map[string]bool{}
	for i, t := range c.Tokens {
		key := fmt.Sprintf("tokens[%d]", i)
		switch {
		case len(t.Token) < 8:
			return cfgErr(key+".token", "must be at least 8 characters")
		case seen[t.Token]:
			return cfgErr(key+".token", "duplicates an earlier token")
		case t.User == "":
			return cfgErr(key+".user", "must not be empty")
		case t.Role == 0:
			return cfgErr(key+".role", "must be set (reader, submitter or admin)")
		}
		seen[t.Token] = true
	}
	if c.API.MaxBodyBytes < 1024 || c.API.MaxBodyBytes > 1<<30 {
		return cfgErr("api.max_body_bytes", "must be in [1024, 2^30], got %d", c.API.MaxBodyBytes)
	}
	if c.API.ReadTimeout < time.Second || c.API.ReadTimeout > time.Hour {
		return cfgErr("api.read_timeout", "must be in [1s, 1h], got %v", c.API.ReadTimeout)
	}
	if c.API.WriteTimeout < time.Second || c.API.WriteTimeout > time.Hour {
		return cfgErr("api.write_timeout", "must be in [1s, 1h], got %v", c.API.WriteTimeout)
	}
	if c.API.MaxConnections < 8 || c.API.MaxConnections > 1<<20 {
		return cfgErr("api.max_connections", "must be in [8, 1048576], got %d", c.API.MaxConnections)
	}
	if c.API.MaxKinds < 1 || c.API.MaxKinds > 100000 {
		return cfgErr("api.max_kinds", "must be in [1, 100000], got %d", c.API.MaxKinds)
	}
	if c.Journal.MaxDecisions < 1 || c.Journal.MaxDecisions > MaxJournalDecisions {
		return cfgErr("journal.max_decisions", "must be in [1, %d], got %d", MaxJournalDecisions, c.Journal.MaxDecisions)
	}
	if c.Journal.MaxGoodness < 1 || c.Journal.MaxGoodness > MaxJournalGoodness {
		return cfgErr("journal.max_goodness", "must be in [1, %d], got %d", MaxJournalGoodness, c.Journal.MaxGoodness)
	}
	switch c.Backend {
	case BackendSim:
		if err := c.Sim.validate(); err != nil {
			return err
		}
	case BackendYarn:
		if err := sectionErr("yarn", c.Yarn.Validate()); err != nil {
			return err
		}
		if err := c.Influx.validate(); err != nil {
			return err
		}
	default:
		return cfgErr("backend", "must be sim or yarn, got %q", c.Backend)
	}
	if err := c.Goodness.validate(c.Backend == BackendYarn); err != nil {
		return err
	}
	if err := c.Learning.validate(); err != nil {
		return err
	}
	if c.Admission.Tick < time.Millisecond {
		return cfgErr("admission.tick", "must be >= 1ms, got %v", c.Admission.Tick)
	}
	if c.Admission.MaxRunning < 0 {
		return cfgErr("admission.max_running", "must be >= 0 (0 = no cap), got %d", c.Admission.MaxRunning)
	}
	if c.Admission.Mode != engine.ModeActive && c.Admission.Mode != engine.ModeShadow {
		return cfgErr("admission.mode", "must be active or shadow, got %q", c.Admission.Mode)
	}
	if err := c.Pipeline.validate(); err != nil {
		return err
	}
	if c.Retention.FinishedAfter < 0 {
		return cfgErr("retention.finished_after", "must be >= 0 (0 = keep forever), got %v", c.Retention.FinishedAfter)
	}
	if _, err := cron.ParseStandard(c.Retention.Schedule); err != nil {
		return cfgErr("retention.schedule", "not a cron spec: %v", err)
	}
	if c.ShutdownTimeout < 100*time.Millisecond {
		return cfgErr("shutdown_timeout", "must be >= 100ms, got %v", c.ShutdownTimeout)
	}
	return nil
}

func (s SimConfig) validate() error {
	if s.Workload == "" {
		return cfgErr("sim.workload", "must be set when backend is sim")
	}
	if !(s.Speed > 0 && s.Speed <= 1e6) {
		return cfgErr("sim.speed", "must be in (0, 1e6], got %v", s.Speed)
	}
	if s.MetricsInterval < time.Second {
		return cfgErr("sim.metrics_interval", "must be >= 1s, got %v", s.MetricsInterval)
	}
	return nil
}

// validate is the collector's own validation of the section (URL, bucket,
// org, timeouts, every schema name and pattern).
func (in InfluxConfig) validate() error {
	return sectionErr("influx", in.CollectorConfig().Validate())
}

func (g GoodnessConfig) validate(required bool) error {
	for _, f := range []struct {
		key string
		v   float64
	}{
		{"goodness.disk_read_mbps", g.DiskReadMBps}, {"goodness.disk_write_mbps", g.DiskWriteMBps},
		{"goodness.net_recv_mbps", g.NetRecvMBps}, {"goodness.net_sent_mbps", g.NetSentMBps},
	} {
		switch {
		case f.v < 0 || f.v != f.v:
			return cfgErr(f.key, "must be >= 0, got %v", f.v)
		case required && f.v == 0:
			return cfgErr(f.key, "must be > 0 on the yarn backend (the node's hardware maximum)")
		}
	}
	return nil
}

func (l LearningConfig) validate() error {
	if _, err := cron.ParseStandard(l.Schedule); err != nil {
		return cfgErr("learning.schedule", "not a cron spec: %v", err)
	}
	if err := sectionErr("learning", l.Config.Validate()); err != nil {
		return err
	}
	// The file states the values: a zero, which bandit reads as "its
	// default" (not colocd's), is refused.
	if !(l.StepSize > 0 && l.StepSize <= 10) {
		return cfgErr("learning.step_size", "must be in (0, 10], got %v", l.StepSize)
	}
	if !(l.RecencyAlpha > 0) {
		return cfgErr("learning.recency_alpha", "must be in (0, 1], got %v", l.RecencyAlpha)
	}
	if l.Credit != engine.CreditLater && l.Credit != engine.CreditSymmetric {
		return cfgErr("learning.credit", "must be later or symmetric, got %q", l.Credit)
	}
	if l.Aggregate != engine.AggregatePair && l.Aggregate != engine.AggregateNode {
		return cfgErr("learning.aggregate", "must be pair or node, got %q", l.Aggregate)
	}
	if l.MaxKindsPerNode < 2 || l.MaxKindsPerNode > 16 {
		return cfgErr("learning.max_kinds_per_node", "must be in [2, 16], got %d", l.MaxKindsPerNode)
	}
	if l.PairReward != engine.RewardGoodness && l.PairReward != engine.RewardResidual {
		return cfgErr("learning.pair_reward", "must be goodness or residual, got %q", l.PairReward)
	}
	return sectionErr("learning.profile", l.Profile.Validate())
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

// leafField is one config key and its field's type.
type leafField struct {
	key string
	typ reflect.Type
}

// leafFields lists the config keys below t (structs recurse; everything
// else, including lists of structs and durations, is a leaf).
func leafFields(t reflect.Type, prefix string) []leafField {
	var out []leafField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, squash := fieldTag(f)
		if squash {
			out = append(out, leafFields(f.Type, prefix)...)
			continue
		}
		if tag == "" {
			continue
		}
		key := prefix + tag
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			out = append(out, leafFields(f.Type, key+".")...)
			continue
		}
		out = append(out, leafField{key, f.Type})
	}
	return out
}

// fieldTag is f's key ("" for none) and whether its fields belong to the
// enclosing section (an embedded struct tagged ",squash").
func fieldTag(f reflect.StructField) (key string, squash bool) {
	tag := f.Tag.Get("mapstructure")
	if tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	return name, name == "" && f.Anonymous && opts == "squash"
}

// flatten maps every leaf key to its value (durations as strings, lists of
// structs as lists of maps) for viper.SetDefault.
func flatten(v reflect.Value, prefix string) map[string]any {
	out := map[string]any{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, squash := fieldTag(f)
		if squash {
			maps.Copy(out, flatten(v.Field(i), prefix))
			continue
		}
		if tag == "" {
			continue
		}
		key := prefix + tag
		fv := v.Field(i)
		switch {
		case f.Type == durationType:
			out[key] = fv.Interface().(time.Duration).String()
		case f.Type.Kind() == reflect.Struct:
			for k, x := range flatten(fv, key+".") {
				out[k] = x
			}
		case f.Type == reflect.TypeOf([]TokenConfig{}):
			var list []any
			for _, tc := range fv.Interface().([]TokenConfig) {
				list = append(list, map[string]any{"token": tc.Token, "user": tc.User, "role": tc.Role.String()})
			}
			out[key] = list
		case f.Type.Kind() == reflect.String:
			out[key] = fv.String()
		case f.Type.Implements(textMarshalerType):
			if b, err := fv.Interface().(encoding.TextMarshaler).MarshalText(); err == nil {
				out[key] = string(b)
			} else { // not a valid value: Validate names it
				out[key] = fmt.Sprint(fv.Interface())
			}
		default:
			out[key] = fv.Interface()
		}
	}
	return out
}

func setPath(m map[string]any, path []string, val any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = val
}

// The types decodeValue converts to besides scalars.
var (
	durationType = reflect.TypeOf(time.Duration(0))
	tokensType   = reflect.TypeOf([]TokenConfig{})
	stringsType  = reflect.TypeOf([]string{})
	weightsType  = reflect.TypeOf(map[string]float64{})

	textMarshalerType = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

// fileValues parses the YAML config and returns its values by key path,
// lower-cased as viper reads them. Two keys of one mapping that are equal
// or differ only in case are an error naming both: viper would keep one
// of them silently. Below a map-valued key (pipeline.fairness.weights)
// the keys are group names, which keep their case.
func fileValues(file string, b []byte) (map[string]*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: parse %s: %v", ErrConfig, file, err)
	}
	mapValued := map[string]bool{}
	for _, k := range mapKeys() {
		mapValued[k] = true
	}
	out := map[string]*yaml.Node{}
	var walk func(n *yaml.Node, path string, exact bool) error
	walk = func(n *yaml.Node, path string, exact bool) error {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if err := walk(c, path, false); err != nil {
					return err
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if err := walk(c, fmt.Sprintf("%s[%d]", path, i), false); err != nil {
					return err
				}
			}
		case yaml.MappingNode:
			seen := map[string]*yaml.Node{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, val := n.Content[i], n.Content[i+1]
				name := k.Value
				if !exact {
					name = strings.ToLower(name)
				}
				key := name
				if path != "" {
					key = path + "." + name
				}
				if prev, ok := seen[name]; ok {
					how := "given twice"
					if prev.Value != k.Value {
						how += " (keys are case-insensitive)"
					}
					return &ConfigError{Key: key, Reason: fmt.Sprintf("%s in %s: %q on line %d and %q on line %d",
						how, file, prev.Value, prev.Line, k.Value, k.Line)}
				}
				seen[name] = k
				out[key] = val
				if err := walk(val, key, mapValued[key]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(&doc, "", false); err != nil {
		return nil, err
	}
	return out, nil
}

// source is where a key's value came from; the zero source is the default.
type source struct {
	set  bool       // the file, the environment or a flag set the key
	env  string     // the variable, when the environment did
	text string     // what the environment or the flag said
	node *yaml.Node // the file's value, when the file did
}

// scalar returns what the user wrote for a scalar value and how to show
// it in a message: YAML numbers and booleans bare, strings quoted.
func (s source) scalar(raw any) (text, shown string) {
	switch {
	case s.node != nil && s.node.Kind == yaml.ScalarNode:
		if s.node.ShortTag() == "!!str" {
			return s.node.Value, strconv.Quote(s.node.Value)
		}
		return s.node.Value, s.node.Value
	case s.node != nil && s.node.Kind == yaml.SequenceNode:
		return "", "a list"
	case s.node != nil:
		return "", "a mapping"
	case s.set:
		return s.text, strconv.Quote(s.text)
	}
	text = fmt.Sprint(raw)
	return text, text
}

// null reports whether the file gave the key no value ("key:" or "key: ~").
func (s source) null() bool {
	return s.node != nil && s.node.Kind == yaml.ScalarNode && s.node.ShortTag() == "!!null"
}

// decodeValue converts raw, the value viper holds for key, to t, or
// returns a *ConfigError naming the key and what is wrong. Nothing is
// rounded, truncated, wrapped or guessed:
//
//   - integers: decimal digits (0x, 0o, 0b and _ accepted; a leading 0 is
//     decimal), or an integral number such as 1e6; a fraction, or a value
//     outside the type, is an error quoting what was written;
//   - durations: Go durations with a unit (30s, 1h30m) and never negative;
//     a bare number other than 0 is an error, not nanoseconds;
//   - numbers: finite;
//   - booleans: true or false (strconv.ParseBool: also 1/0, t/f);
//   - strings: exactly what was written, also for a YAML number (0123);
//   - lists: YAML lists, or comma-separated items;
//   - tokens: a list of {token, user, role}, or "secret:user:role" items;
//   - weights: a map of group → number, or "group=weight" items, each group
//     once, its case kept.
//
// A key the file gives no value, or a variable set to "", is an error for
// numbers, durations and booleans; strings and lists become empty.
func decodeValue(key string, t reflect.Type, raw any, src source) (any, error) {
	text, shown := src.scalar(raw)
	empty := src.null() || (src.set && src.node == nil && strings.TrimSpace(text) == "")
	switch t {
	case durationType:
		if empty {
			return nil, noValue(key, src)
		}
		if !isScalar(raw) {
			return nil, cfgErr(key, "must be a duration such as 30s, 5m or 1h30m, got %s", describe(raw))
		}
		d, err := decodeDuration(text)
		if err != nil {
			return nil, cfgErr(key, "%v, got %s", err, shown)
		}
		return d, nil
	case tokensType:
		return decodeTokens(key, raw, src)
	case stringsType:
		return decodeStrings(key, raw, src)
	case weightsType:
		return decodeWeights(key, raw, src)
	}
	out := reflect.New(t).Elem()
	if u, ok := out.Addr().Interface().(encoding.TextUnmarshaler); ok && t.Kind() != reflect.String {
		// A named value of its owner's (bandit.BaselineMode): its own
		// names, its own error.
		if !isScalar(raw) || empty {
			return nil, cfgErr(key, "must be a name, got %s", describe(raw))
		}
		if err := u.UnmarshalText([]byte(strings.TrimSpace(text))); err != nil {
			return nil, cfgErr(key, "%v", err)
		}
		return out.Interface(), nil
	}
	switch t.Kind() {
	case reflect.String:
		if !isScalar(raw) {
			return nil, cfgErr(key, "must be a string, got %s", describe(raw))
		}
		if src.null() {
			text = ""
		}
		out.SetString(text)
	case reflect.Bool:
		if empty {
			return nil, noValue(key, src)
		}
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil || !isScalar(raw) {
			return nil, cfgErr(key, "must be true or false, got %s", shown)
		}
		out.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if empty {
			return nil, noValue(key, src)
		}
		n, err := decodeInt(raw, text, t.Bits(), true)
		if err != nil {
			return nil, cfgErr(key, "%v, got %s", err, shown)
		}
		out.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if empty {
			return nil, noValue(key, src)
		}
		n, err := decodeInt(raw, text, t.Bits(), false)
		if err != nil {
			return nil, cfgErr(key, "%v, got %s", err, shown)
		}
		out.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		if empty {
			return nil, noValue(key, src)
		}
		f, err := decodeFloat(raw, text)
		if err != nil {
			return nil, cfgErr(key, "%v, got %s", err, shown)
		}
		out.SetFloat(f)
	default:
		return nil, cfgErr(key, "has type %s, which the config loader does not decode", t)
	}
	return out.Interface(), nil
}

func noValue(key string, src source) error {
	if src.env != "" {
		return cfgErr(key, "is empty; unset the variable to keep the default")
	}
	return cfgErr(key, "has no value; give one or remove the key to keep the default")
}

var (
	errNotInteger = errors.New("must be an integer")
	errIntRange   = errors.New("out of range for an integer")
)

// decodeInt reads an integer of the given bits (signed or not) from what
// was written, or from raw when that is an integral number. For an
// unsigned type the result is the uint64's bits.
func decodeInt(raw any, text string, bits int, signed bool) (int64, error) {
	if !isScalar(raw) {
		return 0, errNotInteger
	}
	s := strings.TrimSpace(text)
	parse := func(base int) (int64, error) {
		if signed {
			return strconv.ParseInt(s, base, bits)
		}
		if strings.HasPrefix(s, "-") {
			return 0, errors.New("must not be negative")
		}
		u, err := strconv.ParseUint(s, base, bits)
		return int64(u), err
	}
	n, err := parse(10)
	if err != nil && errors.Is(err, strconv.ErrSyntax) {
		n, err = parse(0) // 0x1f, 0o17, 0b101, 1_000 (a leading 0 alone was decimal above)
	}
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, strconv.ErrRange):
		return 0, errIntRange
	case !errors.Is(err, strconv.ErrSyntax):
		return 0, err
	}
	f, ferr := strconv.ParseFloat(s, 64) // 1e6
	if ferr != nil {
		return 0, errNotInteger
	}
	switch {
	case math.IsInf(f, 0):
		return 0, errIntRange
	case math.IsNaN(f) || f != math.Trunc(f):
		return 0, errNotInteger
	}
	lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
	if !signed {
		lo, hi = 0, math.Ldexp(1, bits)
	}
	switch {
	case f < 0 && !signed:
		return 0, errors.New("must not be negative")
	case f < lo || f >= hi:
		return 0, errIntRange
	case !signed:
		return int64(uint64(f)), nil
	}
	return int64(f), nil
}

// decodeFloat reads a finite number from what was written, or from raw
// when that is a YAML number written in a way Go does not parse (.inf).
func decodeFloat(raw any, text string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		switch x := raw.(type) {
		case float64:
			f, err = x, nil
		case int:
			f, err = float64(x), nil
		case int64:
			f, err = float64(x), nil
		case uint64:
			f, err = float64(x), nil
		}
	}
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, errors.New("must be a finite number")
	case err != nil || !isScalar(raw):
		return 0, errors.New("must be a number")
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, errors.New("must be a finite number")
	}
	return f, nil
}

// decodeDuration reads a non-negative duration with a unit; a bare 0 is
// zero.
func decodeDuration(text string) (time.Duration, error) {
	s := strings.TrimSpace(text)
	d, err := time.ParseDuration(s)
	if err != nil {
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil && f != 0 {
			return 0, errors.New("must be a duration with a unit, such as 30s, 5m or 1h30m (a bare number is no duration)")
		}
		return 0, errors.New("must be a duration such as 30s, 5m or 1h30m")
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	return d, nil
}

// decodeStrings reads a list: a YAML list of scalars, or comma-separated
// items (the environment, a flag, or a YAML string).
func decodeStrings(key string, raw any, src source) ([]string, error) {
	switch x := raw.(type) {
	case nil:
		return []string{}, nil
	case []string:
		return slices.Clone(x), nil
	case []any:
		out := make([]string, len(x))
		for i, item := range x {
			if !isScalar(item) || item == nil {
				return nil, cfgErr(fmt.Sprintf("%s[%d]", key, i), "must be a string, got %s", describe(item))
			}
			out[i] = fmt.Sprint(item)
			if src.node != nil && src.node.Kind == yaml.SequenceNode && i < len(src.node.Content) {
				out[i] = src.node.Content[i].Value // as written: 0123, not 83
			}
		}
		return out, nil
	}
	if !isScalar(raw) {
		return nil, cfgErr(key, "must be a list, got %s", describe(raw))
	}
	text, _ := src.scalar(raw)
	if src.null() || text == "" {
		return []string{}, nil
	}
	return strings.Split(text, ","), nil
}

// decodeTokens reads tokens: a YAML list of {token, user, role}, or
// "secret:user:role" items.
func decodeTokens(key string, raw any, src source) ([]TokenConfig, error) {
	switch x := raw.(type) {
	case nil:
		return nil, nil
	case string:
		return parseTokens(x, key)
	case []any:
		var out []TokenConfig
		for i, item := range x {
			ik := fmt.Sprintf("%s[%d]", key, i)
			m, ok := item.(map[string]any)
			if !ok {
				return nil, cfgErr(ik, "must be a mapping with token, user and role, got %s", describe(item))
			}
			var node *yaml.Node
			if src.node != nil && src.node.Kind == yaml.SequenceNode && i < len(src.node.Content) {
				node = src.node.Content[i]
			}
			var tc TokenConfig
			var role string
			for f, val := range m {
				var dst *string
				switch f {
				case "token":
					dst = &tc.Token
				case "user":
					dst = &tc.User
				case "role":
					dst = &role
				default:
					return nil, cfgErr(ik+"."+f, "unknown key; a token has token, user and role")
				}
				if !isScalar(val) {
					return nil, cfgErr(ik+"."+f, "must be a string, got %s", describe(val))
				}
				*dst = fmt.Sprint(val)
				if n := mappingValue(node, f); n != nil {
					*dst = n.Value
				}
			}
			if _, ok := m["role"]; ok {
				r, err := api.ParseRole(role)
				if err != nil {
					return nil, cfgErr(ik+".role", "%v", err)
				}
				tc.Role = r
			}
			out = append(out, tc)
		}
		return out, nil
	}
	return nil, cfgErr(key, "must be a list of {token, user, role}, got %s", describe(raw))
}

// decodeWeights reads group weights: a YAML mapping, whose group names
// keep their case (viper lower-cases them), or "group=weight" items.
func decodeWeights(key string, raw any, src source) (map[string]float64, error) {
	out := map[string]float64{}
	add := func(group string, val any, text, shown string) error {
		gk := fmt.Sprintf("%s[%s]", key, group)
		if _, dup := out[group]; dup {
			return cfgErr(gk, "group %q is given twice", group)
		}
		f, err := decodeFloat(val, text)
		if err != nil {
			return cfgErr(gk, "%v, got %s", err, shown)
		}
		out[group] = f
		return nil
	}
	switch x := raw.(type) {
	case nil:
		return out, nil
	case map[string]float64: // the default
		maps.Copy(out, x)
		return out, nil
	case string:
		if src.null() {
			return out, nil
		}
		for _, item := range strings.Split(x, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			g, w, ok := strings.Cut(item, "=")
			if !ok {
				return nil, cfgErr(key, "want \"group=weight\" items, got %q", item)
			}
			w = strings.TrimSpace(w)
			if err := add(strings.TrimSpace(g), w, w, strconv.Quote(w)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		if n := src.node; n != nil && n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				g, w := n.Content[i].Value, n.Content[i+1]
				var val any
				if err := w.Decode(&val); err != nil {
					return nil, cfgErr(fmt.Sprintf("%s[%s]", key, g), "%v", err)
				}
				_, shown := source{set: true, node: w}.scalar(nil)
				if err := add(g, val, w.Value, shown); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		for g, val := range x {
			if err := add(g, val, fmt.Sprint(val), fmt.Sprint(val)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, cfgErr(key, "must be a mapping of group to weight, got %s", describe(raw))
}

// mappingValue is the value of key f in mapping n (case-insensitive, as
// viper reads keys), or nil.
func mappingValue(n *yaml.Node, f string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if strings.EqualFold(n.Content[i].Value, f) && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1]
		}
	}
	return nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case []any, map[string]any, []string, map[string]float64:
		return false
	}
	return true
}

// describe names the shape of a value that is not the scalar wanted.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "no value"
	case []any, []string:
		return "a list"
	case map[string]any, map[string]float64:
		return "a mapping"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

// nearest is the known key closest to key by edit distance, if close.
func nearest(key string, known []string) string {
	best, bestD := "", 4
	for _, k := range known {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
