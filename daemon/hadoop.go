package daemon

import (
	"errors"
	"os"
	"strings"

	"github.com/colocd/colocd/internal/authtolocal"
	"github.com/colocd/colocd/internal/hadoopconf"
	"github.com/colocd/colocd/internal/yarncluster"
)

// envHadoopConfDir is the Hadoop client's own variable, yarn.hadoop_conf_dir's
// default.
const envHadoopConfDir = "HADOOP_CONF_DIR"

// hadoopDefaults fills the yarn keys that no file, variable or flag set
// (sources[key] == "default") from the Hadoop configuration in
// yarn.hadoop_conf_dir (default $HADOOP_CONF_DIR): what a Hadoop client on
// this node already knows is not typed again, and an explicit colocd key
// always wins. Each value taken is recorded in sources as "hadoop FILE:
// PROPERTY, …". It does nothing on the simulator unless the key was set
// explicitly. A directory or file that does not read, or a property that
// does not make sense, is a *configError naming yarn.hadoop_conf_dir.
func hadoopDefaults(cfg *Config, sources map[string]string, lookupEnv func(string) (string, bool)) error {
	y := &cfg.Yarn
	if sources["yarn.hadoop_conf_dir"] == "default" || sources["yarn.hadoop_conf_dir"] == "" {
		if cfg.Backend != backendYarn {
			return nil
		}
		dir, ok := lookupEnv(envHadoopConfDir)
		if !ok || dir == "" {
			return nil
		}
		y.HadoopConfDir, sources["yarn.hadoop_conf_dir"] = dir, "env "+envHadoopConfDir
	}
	if y.HadoopConfDir == "" {
		return nil
	}
	conf, err := hadoopconf.Read(y.HadoopConfDir)
	if err != nil {
		if errors.Is(err, hadoopconf.ErrNoDir) {
			return cfgErr("yarn.hadoop_conf_dir", "%s does not exist (from %s)", y.HadoopConfDir, sources["yarn.hadoop_conf_dir"])
		}
		return cfgErr("yarn.hadoop_conf_dir", "%v", err)
	}
	d, err := conf.Derive()
	if err != nil {
		return cfgErr("yarn.hadoop_conf_dir", "%s: %v", y.HadoopConfDir, err)
	}
	unset := func(key string) bool { s := sources[key]; return s == "" || s == "default" }
	take := func(key, source string) { sources[key] = source + " in " + y.HadoopConfDir }
	if d.RMURLs.Exists && unset("yarn.rm_urls") {
		y.RMURLs = d.RMURLs.Value
		take("yarn.rm_urls", d.RMURLs.Source())
	}
	if d.Kerberos.Exists && unset("yarn.auth") {
		y.Auth = yarncluster.AuthSimple
		if d.Kerberos.Value {
			y.Auth = yarncluster.AuthKerberos
		}
		take("yarn.auth", d.Kerberos.Source())
	}
	if d.SPNEGOPrincipal.Exists && unset("yarn.kerberos.service_principal") {
		y.Kerberos.ServicePrincipal = d.SPNEGOPrincipal.Value
		take("yarn.kerberos.service_principal", d.SPNEGOPrincipal.Source())
	}
	if err := hadoopNames(y, d, unset, take); err != nil {
		return err
	}
	if d.RMService.Exists && y.Tokens.RM && unset("yarn.tokens.rm_service") {
		y.Tokens.RMService = d.RMService.Value
		take("yarn.tokens.rm_service", d.RMService.Source())
	}
	// HDFS delegation tokens are what a secure cluster's jobs need: taken
	// with Kerberos only.
	if d.NameServices.Exists && y.Auth == yarncluster.AuthKerberos && unset("yarn.tokens.hdfs") {
		y.Tokens.HDFS = nil
		for _, ns := range d.NameServices.Value {
			y.Tokens.HDFS = append(y.Tokens.HDFS, yarncluster.HDFSTokens{URLs: ns.URLs, Service: ns.Service})
		}
		take("yarn.tokens.hdfs", d.NameServices.Source())
	}
	return nil
}

// loadLookupEnv reads one environment variable the way Load reads the
// keys' variables (opts.Environ, opts.LookupEnv or the process's).
func loadLookupEnv(opts LoadOptions) func(string) (string, bool) {
	switch {
	case opts.Environ != nil:
		return func(name string) (string, bool) {
			for _, kv := range opts.Environ() {
				if k, v, ok := strings.Cut(kv, "="); ok && k == name {
					return v, true
				}
			}
			return "", false
		}
	case opts.LookupEnv != nil:
		return opts.LookupEnv
	}
	return os.LookupEnv
}

// hadoopNames takes the names the cluster's services give principals
// (their short names under hadoop.security.auth_to_local): the RM names
// colocd's applications by colocd's principal's (yarn.app_user), and the
// tokens' renewer is the RM principal's.
func hadoopNames(y *yarncluster.Config, d hadoopconf.Derivation, unset func(string) bool, take func(key, source string)) error {
	var rules *authtolocal.Rules
	if d.AuthToLocal.Exists {
		var err error
		if rules, err = authtolocal.Parse([]string{d.AuthToLocal.Value}, ""); err != nil {
			return cfgErr("yarn.hadoop_conf_dir", "%s: %s: %v", y.HadoopConfDir, d.AuthToLocal.Source(), err)
		}
	}
	if d.Renewer.Exists && unset("yarn.tokens.renewer") {
		r, from := firstComponent(d.Renewer.Value), d.Renewer.Source()
		if rules != nil {
			var err error
			if r, err = shortName(rules, d.Renewer.Value); err != nil {
				return cfgErr("yarn.hadoop_conf_dir", "%s: the RM principal %s: %v (%s)", y.HadoopConfDir, d.Renewer.Value, err, d.AuthToLocal.Source())
			}
			from += ", " + strings.Join(d.AuthToLocal.From, ", ")
		}
		y.Tokens.Renewer = r
		take("yarn.tokens.renewer", from)
	}
	if rules != nil && y.Auth == yarncluster.AuthKerberos && y.Kerberos.Principal != "" && unset("yarn.app_user") {
		u, err := shortName(rules, y.Kerberos.Principal)
		if err != nil {
			return cfgErr("yarn.app_user", "the cluster's auth_to_local (%s in %s) maps colocd's principal to no user: %v; the RM would refuse it too — fix the rules or set yarn.app_user", d.AuthToLocal.Source(), y.HadoopConfDir, err)
		}
		y.AppUser = u
		take("yarn.app_user", d.AuthToLocal.Source())
	}
	return nil
}

// firstComponent is a principal's first component: Hadoop's DEFAULT rule
// for the default realm.
func firstComponent(principal string) string {
	name, _, _ := strings.Cut(principal, "@")
	name, _, _ = strings.Cut(name, "/")
	return name
}

// shortName maps principal by rules. DEFAULT takes the principal's own
// realm for the default realm: a service that colocd can talk to at all
// mapped colocd's principal by some rule, and DEFAULT is the one for the
// default realm's principals. A principal with "_HOST" is mapped as it is
// (rules match on the components they name).
func shortName(rules *authtolocal.Rules, principal string) (string, error) {
	_, realm, _ := strings.Cut(principal, "@")
	return rules.InRealm(realm).Short(principal)
}
