package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"gopkg.in/yaml.v3"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/colocd/colocd/daemon/api"
)

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
	// Sources, when not nil, receives where each key's value came from:
	// "default", "file PATH:LINE", "env COLOCD_…", "flag --…" (colocd
	// config check prints them).
	Sources map[string]string
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
	"COLOCD_JOB_USER":  "yarnclient: the job's user, in the environment of yarn.command.argv",
	"COLOCD_JOB_QUEUE": "yarnclient: the job's queue, in the environment of yarn.command.argv (COLOCD_PARAM_<NAME>: its parameters)",

	"COLOCD_TOOLS":                   "Makefile, scripts/install-tools.sh: where the test tools are built",
	"COLOCD_INFLUXD":                 "collector/influxtest.Tool: the influxd binary (COLOCD_<TOOL>; set by the Makefile)",
	"COLOCD_TELEGRAF":                "collector/influxtest.Tool: the telegraf binary (COLOCD_<TOOL>; set by the Makefile)",
	"COLOCD_PROMETHEUS":              "collector/influxtest.Tool: the prometheus binary (COLOCD_<TOOL>)",
	"COLOCD_PROMTOOL":                "collector/influxtest.Tool: the promtool binary (COLOCD_<TOOL>)",
	"COLOCD_NODE_EXPORTER":           "collector/influxtest.Tool: the node_exporter binary (COLOCD_<TOOL>)",
	"COLOCD_REQUIRE_TOOLS":           "tests: 1 fails instead of skipping a test whose tool is missing (Makefile)",
	"COLOCD_SCREENSHOT_DIR":          "daemon/api tests: where the status page's screenshots go",
	"COLOCD_QUEUE_SEED":              "queue tests: replays the property tests' seed",
	"COLOCD_QUEUE_CRASH_SEED":        "queue tests: replays the crash test's seed",
	"COLOCD_QUEUE_DAMAGE_SEED":       "queue tests: replays the damaged-file test's seed",
	"COLOCD_QUEUE_DAMAGE_FILE":       "queue tests: replays one damaged file exactly",
	"COLOCD_QUEUE_CRASH_CHILD":       "queue tests: makes the test binary the crash test's child (its store path)",
	"COLOCD_QUEUE_CRASH_PREFIX":      "queue tests: a setting passed to the crash test's child",
	"COLOCD_ZOOKEEPER_JAR":           "internal/testing/zktest, scripts/install-tools.sh: ZooKeeper's jar (default /usr/share/java/zookeeper.jar)",
	"COLOCD_HA_DEBUG":                "ha tests: log each replica's lines to stderr",
	"COLOCD_HA_STUDY":                "daemon: 1 runs the HA failover study (TestHAStudy, docs/ha.md)",
	"COLOCD_HA_STUDY_FAILOVERS":      "daemon: the failover study's rounds of each kind (20)",
	"COLOCD_HA_STUDY_LOAD_FAILOVERS": "daemon: the failover study's failovers under load (50)",
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
// here. It stops at the first mistake, as a *configError naming the key:
// a key the file or a COLOCD_* variable names that does not exist (with
// the nearest key), a key given twice in the file (keys are
// case-insensitive), or a value that is not of its key's type, converted
// by decodeValue without rounding, truncating or guessing.
func Load(opts LoadOptions) (Config, error) {
	v := newViper()
	fileNodes, err := readFile(v, opts.File)
	if err != nil {
		return Config{}, err
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
		v = newViper()
		if err := v.MergeConfigMap(settings); err != nil {
			return Config{}, fmt.Errorf("%w: environment: %v", ErrConfig, err)
		}
	}
	flagSet, err := bindFlags(v, opts)
	if err != nil {
		return Config{}, err
	}
	sources := opts.Sources
	if sources == nil {
		sources = map[string]string{}
	}
	cfg, err := decodeConfig(v, flagSet, envVals, fileNodes, opts.File, sources)
	if err != nil {
		return Config{}, err
	}
	cfg.normalize()
	if err := hadoopDefaults(&cfg, sources, loadLookupEnv(opts)); err != nil {
		return Config{}, err
	}
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
		var ce *configError
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

// newViper is a viper holding the defaults.
func newViper() *viper.Viper {
	v := viper.New()
	v.SetConfigType("yaml")
	for k, val := range flatten(reflect.ValueOf(DefaultConfig()), "") {
		v.SetDefault(k, val)
	}
	return v
}

// readFile reads the YAML config file into v (nothing when file is "")
// and returns its values by key; a key that does not exist, or a section
// given a value, is a *configError.
func readFile(v *viper.Viper, file string) (map[string]*yaml.Node, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: config file %s does not exist", ErrConfig, file)
		}
		// Unreadable is a configuration error too (exit status 2, which
		// the unit's RestartPreventExitStatus= does not restart): a
		// restart cannot make the file readable.
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w: read config: %w (colocd runs as uid %d: the file, and every directory above it, must be readable by it)", ErrConfig, err, os.Getuid())
		}
		return nil, fmt.Errorf("%w: read config: %w", ErrConfig, err)
	}
	fileNodes, err := fileValues(file, b)
	if err != nil {
		return nil, err
	}
	if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("%w: parse %s: %v", ErrConfig, file, err)
	}
	known := map[string]bool{}
	for _, k := range configKeys() {
		known[k] = true
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
				return nil, cfgErr(k, "is a section, not a value: set its keys (%s.*), got %s", k, shown)
			}
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		reason := fmt.Sprintf("unknown key in %s", file)
		if near := nearest(unknown[0], configKeys()); near != "" {
			reason += fmt.Sprintf(" (did you mean %s?)", near)
		}
		return nil, &configError{Key: unknown[0], Reason: reason + "; configs/colocd.yaml lists every key"}
	}
	return fileNodes, nil
}

// bindFlags binds the command-line flags that map to keys and returns the
// keys whose flag was set (key → its flag).
func bindFlags(v *viper.Viper, opts LoadOptions) (map[string]*pflag.Flag, error) {
	flagSet := map[string]*pflag.Flag{}
	if opts.Flags == nil {
		return flagSet, nil
	}
	fk := maps.Clone(flagKeys)
	maps.Copy(fk, opts.FlagKeys)
	for name, key := range fk {
		if f := opts.Flags.Lookup(name); f != nil {
			if err := v.BindPFlag(key, f); err != nil {
				return nil, fmt.Errorf("bind flag --%s: %w", name, err)
			}
			if f.Changed {
				flagSet[key] = f
			}
		}
	}
	return flagSet, nil
}

// decodeConfig converts each key's value, from the source that won, to
// its field's type; then mapstructure only assigns.
func decodeConfig(v *viper.Viper, flagSet map[string]*pflag.Flag, envVals map[string]*string, fileNodes map[string]*yaml.Node,
	file string, sources map[string]string) (Config, error) {
	values := map[string]any{}
	for _, lf := range leafFields(reflect.TypeOf(Config{}), "") {
		var src source
		from := "default"
		switch f, s, n := flagSet[lf.key], envVals[lf.key], fileNodes[lf.key]; {
		case f != nil:
			src, from = source{set: true, text: f.Value.String()}, "flag --"+f.Name
		case s != nil:
			src, from = source{set: true, text: *s, env: envName(lf.key)}, "env "+envName(lf.key)
		case n != nil:
			src, from = source{set: true, node: n}, fmt.Sprintf("file %s:%d", file, n.Line)
		}
		if sources != nil {
			sources[lf.key] = from
		}
		val, err := decodeValue(lf.key, lf.typ, v.Get(lf.key), src)
		if err != nil {
			var ce *configError
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
	return nil, &configError{Env: unknown[0], Reason: reason}
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
	c.Prometheus.DiskExclude = trim(c.Prometheus.DiskExclude)
	c.Prometheus.NetInclude = trim(c.Prometheus.NetInclude)
	c.Prometheus.NetExclude = trim(c.Prometheus.NetExclude)
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
			tag, squash := fieldTag(f)
			switch {
			case squash:
				walk(f.Type, prefix)
			case tag == "":
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

func parseTokens(s, key string) ([]tokenConfig, error) {
	var out []tokenConfig
	for i, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		item = strings.TrimSpace(item)
		if item == "" || strings.HasPrefix(item, "#") {
			continue
		}
		parts := strings.SplitN(item, ":", 4)
		if len(parts) < 3 {
			return nil, cfgErr(fmt.Sprintf("%s[%d]", key, i), `want "secret:user:role" or "secret:user:role:expires"`)
		}
		role, err := api.ParseRole(parts[2])
		if err != nil {
			return nil, cfgErr(fmt.Sprintf("%s[%d].role", key, i), "%v", err)
		}
		tc := tokenConfig{Token: parts[0], User: parts[1], Role: role}
		if len(parts) == 4 {
			if tc.Expires, err = parseExpiry(parts[3]); err != nil {
				return nil, cfgErr(fmt.Sprintf("%s[%d].expires", key, i), "%v", err)
			}
		}
		out = append(out, tc)
	}
	return out, nil
}

func readTokenFile(path string) ([]tokenConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cfgErr("token_file", "%v", err)
	}
	defer f.Close()
	var out []tokenConfig
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

// parseExpiry reads a token's expiry: an RFC 3339 time, or a date (its
// midnight, UTC).
func parseExpiry(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (2027-01-31T00:00:00Z) or a date (2027-01-31)", s)
}
