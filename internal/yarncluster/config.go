package yarncluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
)

// Config is the config file's yarn section: where the ResourceManager is
// and how jobs reach it.
type Config struct {
	// HadoopConfDir is a Hadoop client's configuration directory
	// (core-site.xml, yarn-site.xml, hdfs-site.xml; default
	// $HADOOP_CONF_DIR): the daemon derives from it the keys of this
	// section that are not set (internal/hadoopconf).
	HadoopConfDir string   `mapstructure:"hadoop_conf_dir"`
	RMURLs        []string `mapstructure:"rm_urls"` // HA: tried in order
	// Auth is how colocd authenticates to the RMs and NodeManagers:
	// simple (User as user.name; also "") or kerberos (SPNEGO, section
	// Kerberos).
	Auth     AuthMode       `mapstructure:"auth"`
	User     string         `mapstructure:"user"` // simple auth user.name
	Kerberos kerberosConfig `mapstructure:"kerberos"`
	// AppUser is the user the RM names colocd's own applications by, with
	// yarn.auth kerberos: the principal's short name under the cluster's
	// hadoop.security.auth_to_local (the daemon derives it from
	// core-site.xml when it is not set). Empty: the principal's first
	// component (Hadoop's DEFAULT rule). Recovery checks a recorded
	// application's user against it (AppOwners): a wrong one parks jobs.
	AppUser string `mapstructure:"app_user"`
	CAFile  string `mapstructure:"ca_file"`
	// CertFile and KeyFile are the PEM client certificate and key colocd
	// presents to https RMs, NMs and the Timeline Server that require one
	// (hadoop.ssl.require.client.cert). Both or neither.
	CertFile string        `mapstructure:"cert_file"`
	KeyFile  string        `mapstructure:"key_file"`
	Timeout  time.Duration `mapstructure:"timeout"`
	Submit   submitMode    `mapstructure:"submit"` // rest|command
	Command  CommandConfig `mapstructure:"command"`
	// TimelineURL is the Timeline Server (application history), asked
	// about an application the RM no longer knows before colocd decides
	// whether it may submit its job again. Empty: none.
	TimelineURL string `mapstructure:"timeline_url"`
	// MaxCompletedApps is the RM's yarn.resourcemanager.max-completed-applications:
	// while fewer applications have ended since the RM started, an
	// application id it issued and does not know was never submitted.
	// Never set it above the RM's value.
	MaxCompletedApps int `mapstructure:"max_completed_applications"`
	// NodesRefresh is how often the running nodes are read (GET
	// /ws/v1/cluster/nodes: a report per node, megabytes on a large
	// cluster); in between, a node's free room follows colocd's own
	// applications' allocations (Cluster.State). The nodes are read
	// sooner when the cluster metrics' node counts change. 0: on every
	// reading of the cluster.
	NodesRefresh time.Duration `mapstructure:"nodes_refresh"`
	// SubmitAs is whose the applications are: the daemon's (colocd's own
	// user) or each job's user (REST submission only). See submitAs.
	SubmitAs submitAs `mapstructure:"submit_as"`
	// Tokens are the delegation tokens fetched for each application when
	// its job is admitted (REST submission only).
	Tokens tokensConfig `mapstructure:"tokens"`
	// MaxAnswerBytes caps one answer of an RM, NodeManager, NameNode or
	// the Timeline Server (yarnclient.Config.MaxAnswerBytes): a bigger
	// one fails the call (yarnclient: "answer over its size cap").
	MaxAnswerBytes int64 `mapstructure:"max_answer_bytes"`
}

// submitAs is whose applications colocd submits.
type submitAs string

// Submit-as modes.
const (
	// SubmitAsDaemon: every application is colocd's user's.
	SubmitAsDaemon submitAs = "daemon"
	// SubmitAsJobUser: each application is its job's user's (the API
	// token's user that submitted it): with yarn.auth kerberos colocd
	// authenticates as itself and asks for doAs=<user>, which the RM's
	// proxy-user rules decide (core-site.xml hadoop.proxyuser.<colocd's
	// short name>.users, .groups and .hosts); with simple auth the calls
	// carry user.name=<user>. The submission (and the delegation tokens)
	// and the kill act as the user; new-application (the RM ties no id to
	// a user) and every read stay colocd's.
	SubmitAsJobUser submitAs = "job_user"
)

// tokensConfig is the yarn.tokens section: the delegation tokens colocd
// fetches for each application when its job is admitted, not when it is
// queued (a job may wait longer than a token lives: HDFS and RM tokens
// expire unless renewed every 24 h, and live 7 days at most), for the
// job's user with submit_as job_user. They go into the submission's
// am-container-spec.credentials.tokens, with cancel-tokens-when-complete
// set (unless the submitter set it): the RM renews them while the
// application runs and cancels them when it ends.
type tokensConfig struct {
	// RM fetches a ResourceManager delegation token (the Cluster
	// Delegation Tokens API, which needs yarn.auth kerberos).
	RM bool `mapstructure:"rm"`
	// RMService is the service the RM token is labelled with: the RMs'
	// RPC addresses as an application's YARN client names them
	// (ClientRMProxy: each RM's yarn.resourcemanager.address, comma-
	// separated with HA, ip:port while hadoop.security.token.service.use_ip
	// is true, its default). The RM issues the token without one.
	RMService string `mapstructure:"rm_service"`
	// Renewer may renew the tokens: the RM principal's short name (yarn),
	// so that the RM renews them while the application runs.
	Renewer string `mapstructure:"renewer"`
	// HDFS lists the HDFS namespaces to fetch a delegation token of
	// (WebHDFS GETDELEGATIONTOKEN, kind HDFS_DELEGATION_TOKEN).
	HDFS []HDFSTokens `mapstructure:"hdfs"`
}

// HDFSTokens is one entry of yarn.tokens.hdfs: a namespace.
type HDFSTokens struct {
	// URLs are the namespace's NameNodes' web addresses (HA: all of them,
	// tried in order; a standby is passed over), e.g.
	// http://nn1.example.org:9870.
	URLs []string `mapstructure:"urls"`
	// Service is the token's service and its alias in the credentials:
	// the NameNode's RPC address, or "ha-hdfs:<nameservice>" for an HA
	// namespace. "": the NameNode's choice (its RPC address).
	Service string `mapstructure:"service"`
}

// fetches reports whether any token is to be fetched.
func (t tokensConfig) fetches() bool { return t.RM || len(t.HDFS) > 0 }

// AuthMode is how colocd authenticates to YARN's web services.
type AuthMode string

// Auth modes, after Hadoop's hadoop.security.authentication.
const (
	AuthSimple   AuthMode = "simple"   // user.name
	AuthKerberos AuthMode = "kerberos" // SPNEGO from a keytab
)

// kerberosConfig is the yarn.kerberos section: colocd's principal and
// keytab, and the RMs' and NodeManagers' HTTP service principals. Used
// when yarn.auth is kerberos; Validate then reads the keytab and krb5.conf.
type kerberosConfig struct {
	// Principal is colocd's principal, e.g. colocd/admit1.example.com@EXAMPLE.COM
	// (without @REALM: krb5.conf's default_realm).
	Principal string `mapstructure:"principal"`
	// Keytab holds Principal's current keys (readable by colocd only).
	Keytab string `mapstructure:"keytab"`
	// Krb5Conf is the krb5.conf naming the realm's KDCs.
	Krb5Conf string `mapstructure:"krb5_conf"`
	// ServicePrincipal is every RM's and NodeManager's HTTP principal,
	// Hadoop-style: _HOST is replaced by the host name of each one's URL
	// (lower-cased), so each RM of an HA pair has its own. The realm, when
	// given, must be the principal's.
	ServicePrincipal string `mapstructure:"service_principal"`
	// ServicePrincipals overrides ServicePrincipal for the server of a
	// URL (matched by host and port): for an RM reached by an address
	// that is not the host name in its principal.
	ServicePrincipals []servicePrincipal `mapstructure:"service_principals"`
}

// servicePrincipal is one entry of yarn.kerberos.service_principals.
type servicePrincipal struct {
	URL       string `mapstructure:"url"`       // e.g. http://10.0.0.7:8088
	Principal string `mapstructure:"principal"` // e.g. HTTP/rm1.example.com@EXAMPLE.COM
}

// submitMode is how jobs reach YARN.
type submitMode string

// Submit modes.
const (
	SubmitREST    submitMode = "rest"    // new-application + submit application context
	SubmitCommand submitMode = "command" // run a command with the job's tags
)

// CommandConfig is the command run per job in command submit mode, and
// everything it runs with: a job chooses nothing but the values of the
// declared parameters (Params), each checked against its rule. The job's
// tags, id, kind, user and queue fill the placeholders {{tags}},
// {{job_id}}, {{kind}}, {{user}} and {{queue}} and the variables
// COLOCD_YARN_TAGS, COLOCD_JOB_ID, COLOCD_JOB_KIND, COLOCD_JOB_USER and
// COLOCD_JOB_QUEUE; parameter NAME fills {{param.NAME}} and
// COLOCD_PARAM_<NAME>.
type CommandConfig struct {
	// Argv is the program and its arguments, run directly (no shell);
	// yarnclient.CheckArgv says where placeholders may go.
	Argv    []string      `mapstructure:"argv"`
	Timeout time.Duration `mapstructure:"timeout"`
	// Env is KEY=VALUE pairs set in the command's environment.
	Env []string `mapstructure:"env"`
	// InheritEnv names the variables of colocd's own environment passed
	// on to the command (when set). Nothing else of colocd's environment
	// reaches it: not its COLOCD_* settings (API tokens, the InfluxDB
	// token), nor anything a launcher script would obey (BASH_ENV,
	// LD_PRELOAD, HADOOP_USER_NAME) unless listed here.
	InheritEnv []string `mapstructure:"inherit_env"`
	// Dir is the command's working directory: an absolute path; "" is
	// colocd's own (/ under systemd).
	Dir string `mapstructure:"dir"`
	// Params are the parameters a job may give in submit.params.
	Params []CommandParam `mapstructure:"params"`
}

// CommandParam is one entry of yarn.command.params: a value a job may give
// (submit.params.NAME), and the rule it must meet.
type CommandParam struct {
	// Name is how the job and argv ({{param.NAME}}) name it:
	// ^[a-z][a-z0-9_]{0,31}$.
	Name string `mapstructure:"name"`
	// Pattern is a regular expression (RE2, Go's syntax) the whole value
	// must match: it is anchored at both ends.
	Pattern string `mapstructure:"pattern"`
	// MaxLength bounds the value in bytes: 1 to maxParamLength;
	// 0 → defaultParamMaxLength.
	MaxLength int `mapstructure:"max_length"`
	// Required refuses a job that does not give it. A parameter left out
	// is empty: an argv element that is only its placeholder is left out.
	Required bool `mapstructure:"required"`
}

// Bounds of yarn.command.params.
const (
	defaultParamMaxLength = 256
	maxParamLength        = 4096
	maxParams             = 64
)

// defaultInheritEnv is yarn.command.inherit_env's default: what Hadoop's,
// Spark's and Flink's launchers need to find Java, the cluster's
// configuration and colocd's Kerberos ticket cache.
var defaultInheritEnv = []string{"PATH", "HOME", "LANG", "TZ", "JAVA_HOME", "HADOOP_CONF_DIR", "YARN_CONF_DIR", "KRB5CCNAME"}

var (
	paramNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	envNameRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// compileParam is p's pattern, anchored at both ends.
func compileParam(p CommandParam) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + p.Pattern + `)$`)
}

// maxLength is p's bound on a value's length.
func (p CommandParam) maxLength() int {
	if p.MaxLength == 0 {
		return defaultParamMaxLength
	}
	return p.MaxLength
}

// validateCommand checks yarn.command for yarn.submit command.
func (y Config) validateCommand() error {
	c := y.Command
	if len(c.Argv) == 0 {
		return fieldErr("command.argv", "must not be empty when yarn.submit is command")
	}
	if c.Timeout <= 0 {
		return fieldErr("command.timeout", "must be > 0, got %v", c.Timeout)
	}
	if len(c.Params) > maxParams {
		return fieldErr("command.params", "at most %d parameters, got %d", maxParams, len(c.Params))
	}
	declared := map[string]bool{}
	for i, p := range c.Params {
		key := fmt.Sprintf("command.params[%d]", i)
		switch {
		case !paramNameRE.MatchString(p.Name):
			return fieldErr(key+".name", "%q must match %s", p.Name, paramNameRE)
		case declared[p.Name]:
			return fieldErr(key+".name", "%q is declared twice", p.Name)
		case p.Pattern == "":
			return fieldErr(key+".pattern", "required: the regular expression every value of %s must match, e.g. '^[A-Za-z0-9_.]+$'", p.Name)
		case p.MaxLength < 0 || p.MaxLength > maxParamLength:
			return fieldErr(key+".max_length", "must be in [1, %d] (0: %d), got %d", maxParamLength, defaultParamMaxLength, p.MaxLength)
		}
		if _, err := compileParam(p); err != nil {
			return fieldErr(key+".pattern", "%v", err)
		}
		declared[p.Name] = true
	}
	if err := yarnclient.CheckArgv(c.Argv, func(name string) bool { return declared[name] }); err != nil {
		var ae *yarnclient.ArgvError
		if errors.As(err, &ae) {
			return fieldErr(fmt.Sprintf("command.argv[%d]", ae.Index), "%s", ae.Reason)
		}
		return fieldErr("command.argv", "%v", err)
	}
	for i, kv := range c.Env {
		k, _, ok := strings.Cut(kv, "=")
		if err := checkEnvName(k); !ok || err != nil {
			if err == nil {
				err = errors.New("must be KEY=VALUE")
			}
			return fieldErr(fmt.Sprintf("command.env[%d]", i), "%q: %v", kv, err)
		}
	}
	for i, k := range c.InheritEnv {
		if err := checkEnvName(k); err != nil {
			return fieldErr(fmt.Sprintf("command.inherit_env[%d]", i), "%q: %v", k, err)
		}
	}
	if c.Dir != "" && !filepath.IsAbs(c.Dir) {
		return fieldErr("command.dir", "must be an absolute path, got %q", c.Dir)
	}
	return nil
}

// checkEnvName checks a variable name of yarn.command.env or inherit_env:
// COLOCD_* are colocd's to set.
func checkEnvName(k string) error {
	switch {
	case !envNameRE.MatchString(k):
		return fmt.Errorf("a variable name must match %s", envNameRE)
	case strings.HasPrefix(strings.ToUpper(k), "COLOCD_"):
		return errors.New("COLOCD_* variables are colocd's own (the job's tags, id, kind, user, queue and parameters); its settings stay out of the command's environment")
	}
	return nil
}

// DefaultConfig is the section's defaults: simple auth (Kerberos: the
// principals HTTP/_HOST, /etc/krb5.conf), REST submission as the daemon,
// no delegation tokens (renewer yarn), a 30 s timeout, Hadoop 3's
// max-completed-applications, the nodes read every defaultNodesRefresh,
// no ResourceManager (which Validate requires).
func DefaultConfig() Config {
	return Config{
		RMURLs: []string{},
		Auth:   AuthSimple,
		Kerberos: kerberosConfig{
			Krb5Conf:          kerberos.DefaultKrb5Conf,
			ServicePrincipal:  kerberos.DefaultServicePrincipal,
			ServicePrincipals: []servicePrincipal{},
		},
		Timeout: 30 * time.Second,
		Submit:  SubmitREST,
		Command: CommandConfig{Argv: []string{}, Timeout: 5 * time.Minute, Env: []string{},
			InheritEnv: slices.Clone(defaultInheritEnv), Params: []CommandParam{}},
		MaxCompletedApps: 1000, // Hadoop 3's default (Hadoop 2: 10000)
		NodesRefresh:     defaultNodesRefresh,
		SubmitAs:         SubmitAsDaemon,
		Tokens:           tokensConfig{Renewer: defaultTokenRenewer, HDFS: []HDFSTokens{}},
		MaxAnswerBytes:   yarnclient.DefaultMaxAnswerBytes,
	}
}

// minMaxAnswer is the least yarn.max_answer_bytes: an empty apps list.
const minMaxAnswer = 4 << 10

// defaultTokenRenewer is yarn.tokens.renewer's default: the short name of
// the RM's principal in Hadoop's usual layout (yarn/_HOST@REALM).
const defaultTokenRenewer = "yarn"

// defaultNodesRefresh is yarn.nodes_refresh's default: at 10,000 nodes the
// node list is 5.7 MB of JSON (the documented 3.x node report; a 3.3 RM
// writes more per node), read every 30 s instead of on every sync and
// admission pass; a node that joins, leaves or changes state is seen at
// once (the metrics' node counts), other tenants' changes to a node's free
// room within 30 s.
const defaultNodesRefresh = 30 * time.Second

// fieldError names the key of the section that is wrong and why.
type fieldError struct {
	Field  string // e.g. "rm_urls[0]"
	Reason string
}

func (e *fieldError) Error() string { return "yarn: " + e.Field + ": " + e.Reason }

// FieldReason is the key under the section and the reason, for the
// config loader, which names the whole key.
func (e *fieldError) FieldReason() (field, reason string) { return e.Field, e.Reason }

func fieldErr(field, format string, args ...any) error {
	return &fieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// validateClientCert checks cert_file and key_file: both or neither, and
// a certificate with its own key (read here, so that a wrong file is named
// at startup rather than at the first request).
func (y Config) validateClientCert() error {
	switch {
	case y.CertFile == "" && y.KeyFile == "":
		return nil
	case y.KeyFile == "":
		return fieldErr("key_file", "must be set with cert_file (the client certificate's private key)")
	case y.CertFile == "":
		return fieldErr("cert_file", "must be set with key_file (the client certificate the key belongs to)")
	}
	if _, err := tls.LoadX509KeyPair(y.CertFile, y.KeyFile); err != nil {
		return fieldErr("cert_file", "with key_file %s: %v", y.KeyFile, err)
	}
	return nil
}

// Validate checks the section; errors are *fieldError.
func (y Config) Validate() error {
	if len(y.RMURLs) == 0 {
		return fieldErr("rm_urls", "must list at least one ResourceManager URL when backend is yarn")
	}
	for i, u := range y.RMURLs {
		if err := yarnclient.CheckURL(u); err != nil {
			return fieldErr(fmt.Sprintf("rm_urls[%d]", i), "%v", err)
		}
	}
	if err := y.validateAuth(); err != nil {
		return err
	}
	if y.Timeout <= 0 {
		return fieldErr("timeout", "must be > 0, got %v", y.Timeout)
	}
	if err := y.validateClientCert(); err != nil {
		return err
	}
	if y.TimelineURL != "" {
		if err := yarnclient.CheckURL(y.TimelineURL); err != nil {
			return fieldErr("timeline_url", "%v", err)
		}
	}
	if y.NodesRefresh < 0 {
		return fieldErr("nodes_refresh", "must be >= 0 (0: read the nodes on every reading of the cluster), got %v", y.NodesRefresh)
	}
	if y.MaxCompletedApps < 0 {
		return fieldErr("max_completed_applications", "must be >= 0 (0: never assume the RM still holds an ended application), got %d", y.MaxCompletedApps)
	}
	if y.MaxAnswerBytes != 0 && y.MaxAnswerBytes < minMaxAnswer {
		return fieldErr("max_answer_bytes", "must be 0 (the default, %d) or at least %d, got %d", yarnclient.DefaultMaxAnswerBytes, minMaxAnswer, y.MaxAnswerBytes)
	}
	switch y.Submit {
	case SubmitREST:
	case SubmitCommand:
		if err := y.validateCommand(); err != nil {
			return err
		}
	default:
		return fieldErr("submit", "must be rest or command, got %q", y.Submit)
	}
	if err := y.validateSubmitAs(); err != nil {
		return err
	}
	return y.validateTokens()
}

// validateSubmitAs checks yarn.submit_as.
func (y Config) validateSubmitAs() error {
	switch y.SubmitAs {
	case SubmitAsDaemon, "":
		return nil
	case SubmitAsJobUser:
		if y.Submit == SubmitCommand {
			return fieldErr("submit_as", "job_user needs yarn.submit rest: a command submits as whoever runs it (pass the job's user to it instead: e.g. --proxy-user {{user}} in yarn.command.argv for spark-submit)")
		}
		return nil
	}
	return fieldErr("submit_as", "must be daemon or job_user, got %q", y.SubmitAs)
}

// validateTokens checks yarn.tokens.
func (y Config) validateTokens() error {
	t := y.Tokens
	if !t.RM && t.RMService != "" {
		return fieldErr("tokens.rm_service", "is set, but tokens.rm is false")
	}
	if !t.fetches() {
		return nil
	}
	if y.Submit == SubmitCommand {
		key := "tokens.hdfs"
		if t.RM {
			key = "tokens.rm"
		}
		return fieldErr(key, "delegation tokens go into a REST submission's credentials, and yarn.submit is command")
	}
	if strings.TrimSpace(t.Renewer) == "" {
		return fieldErr("tokens.renewer", "required when tokens are fetched: the RM principal's short name (%s), so that the RM renews them", defaultTokenRenewer)
	}
	if t.RM && y.Auth != AuthKerberos {
		return fieldErr("tokens.rm", "needs yarn.auth kerberos: the RM issues delegation tokens over Kerberos (SPNEGO) only")
	}
	if t.RM && strings.TrimSpace(t.RMService) == "" {
		return fieldErr("tokens.rm_service", "required with tokens.rm: the RMs' RPC addresses an application's YARN client matches the token against, e.g. rm1.example.org:8032,rm2.example.org:8032")
	}
	services := map[string]string{}
	if t.RM {
		services[t.RMService] = "tokens.rm_service"
	}
	for i, h := range t.HDFS {
		key := fmt.Sprintf("tokens.hdfs[%d]", i)
		if len(h.URLs) == 0 {
			return fieldErr(key+".urls", "must list the namespace's NameNode web addresses, e.g. http://nn1.example.org:9870")
		}
		for j, u := range h.URLs {
			if err := yarnclient.CheckURL(u); err != nil {
				return fieldErr(fmt.Sprintf("%s.urls[%d]", key, j), "%v", err)
			}
		}
		if h.Service == "" {
			continue
		}
		if other, dup := services[h.Service]; dup {
			return fieldErr(key+".service", "%q is %s too: each token needs its own service (its alias in the credentials)", h.Service, other)
		}
		services[h.Service] = key + ".service"
	}
	return nil
}

// validateAuth checks yarn.auth and, for kerberos, the kerberos section,
// reading the keytab and krb5.conf (kerberos.New; no network).
// DaemonUser is the user the RM knows colocd as: yarn.user; with
// Kerberos yarn.app_user (the principal's short name under the cluster's
// auth_to_local), else the principal's first component (Hadoop's DEFAULT
// rule).
func (y Config) DaemonUser() string {
	if y.Auth != AuthKerberos {
		return y.User
	}
	if y.AppUser != "" {
		return y.AppUser
	}
	name, _, _ := strings.Cut(y.Kerberos.Principal, "@")
	name, _, _ = strings.Cut(name, "/")
	return name
}

// appUserRE is a user name as Hadoop's short names are.
var appUserRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

func (y Config) validateAuth() error {
	k := y.Kerberos
	switch y.Auth {
	case AuthSimple, "":
		if y.AppUser != "" {
			return fieldErr("app_user", "is for yarn.auth kerberos; with simple auth the RM names colocd's applications by yarn.user")
		}
		if k.Principal != "" || k.Keytab != "" {
			return fieldErr("auth", "is simple, but kerberos.principal or kerberos.keytab is set: set auth to kerberos, or remove them")
		}
		return nil
	case AuthKerberos:
	default:
		return fieldErr("auth", "must be simple or kerberos, got %q", y.Auth)
	}
	if y.User != "" {
		return fieldErr("user", "must be empty when yarn.auth is kerberos (the RM's user is the principal's short name; yarn.app_user names it when the cluster's auth_to_local maps it otherwise), got %q", y.User)
	}
	if y.AppUser != "" && !appUserRE.MatchString(y.AppUser) {
		return fieldErr("app_user", "%q is not a user name (letters, digits, _ . -)", y.AppUser)
	}
	if k.Principal == "" {
		return fieldErr("kerberos.principal", "required when yarn.auth is kerberos, e.g. colocd/%s@EXAMPLE.COM", "admit1.example.com")
	}
	if k.Keytab == "" {
		return fieldErr("kerberos.keytab", "required when yarn.auth is kerberos: the keytab holding %s", k.Principal)
	}
	seen := map[string]int{}
	for i, sp := range k.ServicePrincipals {
		key := fmt.Sprintf("kerberos.service_principals[%d]", i)
		if err := yarnclient.CheckURL(sp.URL); err != nil {
			return fieldErr(key+".url", "%v", err)
		}
		host := hostOf(sp.URL)
		if j, dup := seen[host]; dup {
			return fieldErr(key+".url", "%s is the server of kerberos.service_principals[%d] too", host, j)
		}
		seen[host] = i
		if sp.Principal == "" {
			return fieldErr(key+".principal", "required, e.g. HTTP/rm1.example.com@EXAMPLE.COM")
		}
	}
	_, err := kerberos.New(y.kerberosConfig(nil))
	return y.kerberosErr(err)
}

// kerberosErr names the key of a *kerberos.ConfigError.
func (y Config) kerberosErr(err error) error {
	var ce *kerberos.ConfigError
	if errors.As(err, &ce) {
		return fieldErr(y.kerberosKey(ce.Field), "%v", ce.Err)
	}
	return err
}

// kerberosKey is the key of a kerberos.Config field.
func (y Config) kerberosKey(field string) string {
	switch field {
	case "Principal":
		return "kerberos.principal"
	case "Keytab":
		return "kerberos.keytab"
	case "Krb5Conf":
		return "kerberos.krb5_conf"
	case "ServicePrincipal":
		return "kerberos.service_principal"
	}
	for i, sp := range y.Kerberos.ServicePrincipals {
		if field == "ServicePrincipals["+hostOf(sp.URL)+"]" {
			return fmt.Sprintf("kerberos.service_principals[%d].principal", i)
		}
	}
	return "kerberos"
}

// hostOf is the lower-cased host:port of a URL CheckURL accepted.
func hostOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// kerberosConfig is the kerberos.Config of the kerberos section.
func (y Config) kerberosConfig(log *slog.Logger) kerberos.Config {
	k := y.Kerberos
	kc := kerberos.Config{Principal: k.Principal, Keytab: k.Keytab, Krb5Conf: k.Krb5Conf,
		ServicePrincipal: k.ServicePrincipal, Logger: log}
	if len(k.ServicePrincipals) > 0 {
		kc.ServicePrincipals = map[string]string{}
		for _, sp := range k.ServicePrincipals {
			kc.ServicePrincipals[hostOf(sp.URL)] = sp.Principal
		}
	}
	return kc
}

// ClientConfig is the yarnclient.Config of the section. With yarn.auth
// kerberos its Auth is a kerberos.Auth (which reads the keytab and
// krb5.conf here, as Validate did); should that fail now, every request
// fails with the *fieldError naming the key.
func (y Config) ClientConfig(log *slog.Logger) yarnclient.Config {
	c := yarnclient.Config{RMURLs: y.RMURLs, User: y.User, CAFile: y.CAFile, CertFile: y.CertFile, KeyFile: y.KeyFile, Timeout: y.Timeout,
		TimelineURL: y.TimelineURL, MaxAnswerBytes: y.MaxAnswerBytes, Logger: log}
	if y.Auth == AuthKerberos {
		c.User = ""
		a, err := kerberos.New(y.kerberosConfig(log))
		if err != nil {
			err = y.kerberosErr(err)
			c.Auth = yarnclient.AuthFunc(func(*http.Request) error { return err })
		} else {
			c.Auth = a
		}
	}
	return c
}
