package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/profile"
	"github.com/robfig/cron/v3"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
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

	Backend Backend      `mapstructure:"backend"` // sim|yarn
	Sim     SimConfig    `mapstructure:"sim"`
	Yarn    YarnConfig   `mapstructure:"yarn"`
	Influx  InfluxConfig `mapstructure:"influx"`

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
	Token string `mapstructure:"token"`
	User  string `mapstructure:"user"`
	Role  string `mapstructure:"role"` // reader|submitter|admin
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

// YarnConfig configures the YARN backend.
type YarnConfig struct {
	RMURLs  []string          `mapstructure:"rm_urls"` // HA: tried in order
	User    string            `mapstructure:"user"`    // simple auth user.name
	CAFile  string            `mapstructure:"ca_file"`
	Timeout time.Duration     `mapstructure:"timeout"`
	Submit  SubmitMode        `mapstructure:"submit"` // rest|command
	Command YarnCommandConfig `mapstructure:"command"`
}

// SubmitMode is how jobs reach YARN.
type SubmitMode string

// Submit modes.
const (
	SubmitREST    SubmitMode = "rest"    // new-application + submit application context
	SubmitCommand SubmitMode = "command" // run a command with the job's tags
)

// YarnCommandConfig is the command run per job in command submit mode; the
// job's submit.args are appended to Argv and its tags are passed in the
// environment variable COLOCD_YARN_TAGS.
type YarnCommandConfig struct {
	Argv    []string      `mapstructure:"argv"`
	Timeout time.Duration `mapstructure:"timeout"`
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
	Schedule        string     `mapstructure:"schedule"` // cron spec, e.g. "@every 60s"
	StepSize        float64    `mapstructure:"step_size"`
	Baseline        string     `mapstructure:"baseline"` // global|row|recency
	RecencyAlpha    float64    `mapstructure:"recency_alpha"`
	Clip            float64    `mapstructure:"clip"`       // 0 = no clipping
	SelfPrior       float64    `mapstructure:"self_prior"` // H₀(a|a) = −self_prior; 0 = the paper's H₀ = 0
	Credit          CreditMode `mapstructure:"credit"`
	Aggregate       Aggregate  `mapstructure:"aggregate"`
	MaxKindsPerNode int        `mapstructure:"max_kinds_per_node"`
	// PairReward is what the pair preferences learn from: the observed
	// goodness (the paper), or its residual from the profiles' prediction
	// (what the profiles cannot see: the correction of the model).
	PairReward PairReward    `mapstructure:"pair_reward"`
	Profile    ProfileConfig `mapstructure:"profile"`
}

// PairReward is the reward of the pair preferences.
type PairReward string

// Pair rewards.
const (
	RewardGoodness PairReward = "goodness"
	RewardResidual PairReward = "residual"
)

// ProfileConfig configures the per-kind resource profile model
// (profile.Config).
type ProfileConfig struct {
	HalfLife      float64 `mapstructure:"half_life"` // learning ticks
	PriorStrength float64 `mapstructure:"prior_strength"`
	Saturation    float64 `mapstructure:"saturation"`
}

// ModelConfig translates the profile section; errors name the key.
func (p ProfileConfig) ModelConfig() (profile.Config, error) {
	c := profile.Config{HalfLife: p.HalfLife, PriorStrength: p.PriorStrength, Saturation: p.Saturation}
	if err := c.Validate(); err != nil {
		var fe *profile.FieldError
		if errors.As(err, &fe) {
			return c, cfgErr("learning.profile."+fe.Field, "%s", fe.Reason)
		}
		return c, cfgErr("learning.profile", "%v", err)
	}
	return c, nil
}

// Aggregate says how many updates one learning tick makes.
type Aggregate string

// Aggregations.
const (
	// AggregatePair: one update per co-located kind pair, with the mean
	// goodness of the nodes it shared (the paper's "goodness per
	// combination of co-located jobs").
	AggregatePair Aggregate = "pair"
	// AggregateNode: one update per node (a pair on 16 nodes counts 16 times).
	AggregateNode Aggregate = "node"
)

// CreditMode says which preference a co-location's goodness updates.
type CreditMode string

// Credit modes.
const (
	CreditLater     CreditMode = "later"     // H(later | earlier), the paper's
	CreditSymmetric CreditMode = "symmetric" // also H(earlier | later)
)

// AdmissionConfig configures the admission loop.
type AdmissionConfig struct {
	Tick       time.Duration `mapstructure:"tick"`
	MaxRunning int           `mapstructure:"max_running"` // 0 = no cap
	Mode       AdmissionMode `mapstructure:"mode"`
}

// AdmissionMode is active (admit the learned choice) or shadow (admit FIFO,
// journal the learned choice).
type AdmissionMode string

// Admission modes.
const (
	ModeActive AdmissionMode = "active"
	ModeShadow AdmissionMode = "shadow"
)

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
		Yarn: YarnConfig{
			RMURLs:  []string{},
			Timeout: 30 * time.Second,
			Submit:  SubmitREST,
			Command: YarnCommandConfig{Argv: []string{}, Timeout: 5 * time.Minute},
		},
		Influx: InfluxConfig{
			Timeout:    10 * time.Second,
			StaleAfter: 30 * time.Second,
			Schema:     defaultSchema(),
		},
		Learning: LearningConfig{
			Schedule:        "@every 60s",
			StepSize:        DefaultStepSize,
			Baseline:        "global",
			RecencyAlpha:    0.1,
			SelfPrior:       1,
			Credit:          CreditLater,
			Aggregate:       AggregatePair,
			MaxKindsPerNode: 2,
			PairReward:      RewardResidual,
			Profile: ProfileConfig{HalfLife: profile.DefaultHalfLife, PriorStrength: profile.DefaultPriorStrength,
				Saturation: profile.DefaultSaturation},
		},
		Admission: AdmissionConfig{Tick: 10 * time.Second, Mode: ModeActive},
		Pipeline:  DefaultPipelineConfig(),
		Retention: RetentionConfig{FinishedAfter: 30 * 24 * time.Hour, Schedule: "@every 1h"},

		ShutdownTimeout: 30 * time.Second,
	}
}

func defaultSchema() SchemaConfig { return schemaConfig(collector.DefaultSchema()) }

// ConfigError names the key that is wrong and why.
type ConfigError struct {
	Key    string // e.g. "learning.step_size"
	Reason string // e.g. "must be > 0, got -1"
}

func (e *ConfigError) Error() string { return "config key " + e.Key + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Unwrap() error { return ErrConfig }

func cfgErr(key, format string, args ...any) error {
	return &ConfigError{Key: key, Reason: fmt.Sprintf(format, args...)}
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
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// SkipTokenFile leaves token_file unread (commands other than serve
	// need no API tokens, and may run as a user who cannot read them).
	SkipTokenFile bool
}

// flagKeys maps flag names to config keys.
var flagKeys = map[string]string{"listen": "listen", "data-dir": "data_dir", "log-level": "log_level"}

// EnvName is the environment variable for a config key: "yarn.rm_urls" →
// "COLOCD_YARN_RM_URLS".
func EnvName(key string) string {
	return "COLOCD_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Keys lists every config key, sorted.
func Keys() []string {
	keys := leafKeys(reflect.TypeOf(Config{}), "")
	sort.Strings(keys)
	return keys
}

// Load reads the configuration: defaults, then the YAML file, then COLOCD_*
// environment variables (known keys only), then flags; unknown keys in the
// file stop it naming the key; then Validate. Token files are read here.
func Load(opts LoadOptions) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	known := map[string]bool{}
	for _, k := range Keys() {
		known[k] = true
	}
	for k, val := range flatten(reflect.ValueOf(DefaultConfig()), "") {
		v.SetDefault(k, val)
	}
	if opts.File != "" {
		b, err := os.ReadFile(opts.File)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return Config{}, fmt.Errorf("%w: config file %s does not exist", ErrConfig, opts.File)
			}
			return Config{}, fmt.Errorf("read config: %w", err)
		}
		if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
			return Config{}, fmt.Errorf("%w: parse %s: %v", ErrConfig, opts.File, err)
		}
		var unknown []string
		for _, k := range v.AllKeys() {
			if !known[k] && !underMap(k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			reason := fmt.Sprintf("unknown key in %s", opts.File)
			if near := nearest(unknown[0], Keys()); near != "" {
				reason += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return Config{}, &ConfigError{Key: unknown[0], Reason: reason + "; configs/colocd.yaml lists every key"}
		}
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	// The environment replaces whole values: a list or map from the
	// environment replaces the file's instead of merging into it.
	envVals := map[string]string{}
	for _, k := range Keys() {
		if s, ok := lookup(EnvName(k)); ok {
			envVals[k] = s
		}
	}
	if len(envVals) > 0 {
		settings := v.AllSettings()
		for k, s := range envVals {
			setPath(settings, strings.Split(k, "."), s)
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
	if opts.Flags != nil {
		fk := maps.Clone(flagKeys)
		maps.Copy(fk, opts.FlagKeys)
		for name, key := range fk {
			if f := opts.Flags.Lookup(name); f != nil {
				if err := v.BindPFlag(key, f); err != nil {
					return Config{}, fmt.Errorf("bind flag --%s: %w", name, err)
				}
			}
		}
	}
	var cfg Config
	err := v.Unmarshal(&cfg, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		tokensHook(),
		weightsHook(),
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
	)), func(dc *mapstructure.DecoderConfig) { dc.ErrorUnused = true })
	if err != nil {
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
		return Config{}, err
	}
	return cfg, nil
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

// tokensHook decodes "secret:user:role,secret:user:role" (COLOCD_TOKENS)
// into []TokenConfig.
func tokensHook() mapstructure.DecodeHookFuncType {
	return func(from, to reflect.Type, data any) (any, error) {
		if from.Kind() != reflect.String || to != reflect.TypeOf([]TokenConfig{}) {
			return data, nil
		}
		return parseTokens(data.(string), "tokens")
	}
}

// weightsHook decodes "group=weight,group=weight" into map[string]float64.
func weightsHook() mapstructure.DecodeHookFuncType {
	return func(from, to reflect.Type, data any) (any, error) {
		if from.Kind() != reflect.String || to != reflect.TypeOf(map[string]float64{}) {
			return data, nil
		}
		out := map[string]any{}
		for _, item := range strings.Split(data.(string), ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			k, val, ok := strings.Cut(item, "=")
			if !ok {
				return nil, cfgErr("pipeline.fairness.weights", "want \"group=weight\" items, got %q", item)
			}
			out[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
		return out, nil
	}
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
			case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)):
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
		out = append(out, TokenConfig{Token: parts[0], User: parts[1], Role: parts[2]})
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
		case !oneOf(t.Role, "reader", "submitter", "admin"):
			return cfgErr(key+".role", "must be reader|submitter|admin, got %q", t.Role)
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
		if err := c.Yarn.validate(); err != nil {
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
	if c.Admission.Mode != ModeActive && c.Admission.Mode != ModeShadow {
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

func (y YarnConfig) validate() error {
	if len(y.RMURLs) == 0 {
		return cfgErr("yarn.rm_urls", "must list at least one ResourceManager URL when backend is yarn")
	}
	for i, u := range y.RMURLs {
		if err := checkURL(u); err != nil {
			return cfgErr(fmt.Sprintf("yarn.rm_urls[%d]", i), "%v", err)
		}
	}
	if y.Timeout <= 0 {
		return cfgErr("yarn.timeout", "must be > 0, got %v", y.Timeout)
	}
	switch y.Submit {
	case SubmitREST:
	case SubmitCommand:
		if len(y.Command.Argv) == 0 {
			return cfgErr("yarn.command.argv", "must not be empty when yarn.submit is command")
		}
		if y.Command.Timeout <= 0 {
			return cfgErr("yarn.command.timeout", "must be > 0, got %v", y.Command.Timeout)
		}
	default:
		return cfgErr("yarn.submit", "must be rest or command, got %q", y.Submit)
	}
	return nil
}

func (in InfluxConfig) validate() error {
	if in.URL == "" {
		return cfgErr("influx.url", "must be set when backend is yarn")
	}
	if err := checkURL(in.URL); err != nil {
		return cfgErr("influx.url", "%v", err)
	}
	if in.Bucket == "" {
		return cfgErr("influx.bucket", "must not be empty")
	}
	if in.Timeout <= 0 {
		return cfgErr("influx.timeout", "must be > 0, got %v", in.Timeout)
	}
	if in.StaleAfter <= 0 {
		return cfgErr("influx.stale_after", "must be > 0, got %v", in.StaleAfter)
	}
	return nil
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
	if !(l.StepSize > 0 && l.StepSize <= 10) {
		return cfgErr("learning.step_size", "must be in (0, 10], got %v", l.StepSize)
	}
	if !oneOf(l.Baseline, "global", "row", "recency") {
		return cfgErr("learning.baseline", "must be global|row|recency, got %q", l.Baseline)
	}
	if !(l.RecencyAlpha > 0 && l.RecencyAlpha <= 1) {
		return cfgErr("learning.recency_alpha", "must be in (0, 1], got %v", l.RecencyAlpha)
	}
	if !(l.Clip >= 0) {
		return cfgErr("learning.clip", "must be >= 0 (0 = no clipping), got %v", l.Clip)
	}
	if !(l.SelfPrior >= 0 && l.SelfPrior <= bandit.MaxSelfPrior) {
		return cfgErr("learning.self_prior", "must be in [0, %d] (0 = none), got %v", bandit.MaxSelfPrior, l.SelfPrior)
	}
	if l.Credit != CreditLater && l.Credit != CreditSymmetric {
		return cfgErr("learning.credit", "must be later or symmetric, got %q", l.Credit)
	}
	if l.Aggregate != AggregatePair && l.Aggregate != AggregateNode {
		return cfgErr("learning.aggregate", "must be pair or node, got %q", l.Aggregate)
	}
	if l.MaxKindsPerNode < 2 || l.MaxKindsPerNode > 16 {
		return cfgErr("learning.max_kinds_per_node", "must be in [2, 16], got %d", l.MaxKindsPerNode)
	}
	if l.PairReward != RewardGoodness && l.PairReward != RewardResidual {
		return cfgErr("learning.pair_reward", "must be goodness or residual, got %q", l.PairReward)
	}
	if _, err := l.Profile.ModelConfig(); err != nil {
		return err
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("must be an http or https URL, got %q", s)
	}
	if u.Host == "" {
		return fmt.Errorf("has no host: %q", s)
	}
	return nil
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

// leafKeys lists the config keys below t (structs recurse; everything else,
// including lists of structs and durations, is a leaf).
func leafKeys(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == "" || tag == "-" {
			continue
		}
		key := prefix + tag
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
			out = append(out, leafKeys(f.Type, key+".")...)
			continue
		}
		out = append(out, key)
	}
	return out
}

// flatten maps every leaf key to its value (durations as strings, lists of
// structs as lists of maps) for viper.SetDefault.
func flatten(v reflect.Value, prefix string) map[string]any {
	out := map[string]any{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == "" || tag == "-" {
			continue
		}
		key := prefix + tag
		fv := v.Field(i)
		switch {
		case f.Type == reflect.TypeOf(time.Duration(0)):
			out[key] = fv.Interface().(time.Duration).String()
		case f.Type.Kind() == reflect.Struct:
			for k, x := range flatten(fv, key+".") {
				out[k] = x
			}
		case f.Type == reflect.TypeOf([]TokenConfig{}):
			var list []any
			for _, tc := range fv.Interface().([]TokenConfig) {
				list = append(list, map[string]any{"token": tc.Token, "user": tc.User, "role": tc.Role})
			}
			out[key] = list
		case f.Type.Kind() == reflect.String:
			out[key] = fv.String()
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
