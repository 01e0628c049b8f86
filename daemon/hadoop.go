package daemon

import (
	"errors"
	"os"
	"strings"

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
// does not make sense, is a *ConfigError naming yarn.hadoop_conf_dir.
func hadoopDefaults(cfg *Config, sources map[string]string, lookupEnv func(string) (string, bool)) error {
	y := &cfg.Yarn
	if sources["yarn.hadoop_conf_dir"] == "default" || sources["yarn.hadoop_conf_dir"] == "" {
		if cfg.Backend != BackendYarn {
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
	if d.Renewer.Exists && unset("yarn.tokens.renewer") {
		y.Tokens.Renewer = d.Renewer.Value
		take("yarn.tokens.renewer", d.Renewer.Source())
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
