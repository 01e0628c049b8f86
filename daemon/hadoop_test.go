package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/colocd/colocd/internal/yarncluster"
)

// TestConfigHadoopConfDir: with HADOOP_CONF_DIR a secure HA cluster's
// configuration, the yarn keys the file does not set come from it (each
// with its source), those it sets win, and nothing is read on the
// simulator.
func TestConfigHadoopConfDir(t *testing.T) {
	dir, err := filepath.Abs("../internal/hadoopconf/testdata/secure-ha")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	file, krb5 := filepath.Join(tmp, "colocd.yaml"), filepath.Join(tmp, "krb5.conf")
	if err := os.WriteFile(krb5, []byte("[libdefaults]\n  default_realm = EXAMPLE.ORG\n[realms]\n  EXAMPLE.ORG = {\n    kdc = kdc.example.org:88\n  }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := keytab.New()
	if err := k.AddEntry("colocd/admit1.example.org", "EXAMPLE.ORG", "secret", time.Now(), 1, 18); err != nil {
		t.Fatal(err)
	}
	kt := filepath.Join(tmp, "colocd.keytab")
	b, err := k.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kt, b, 0o600); err != nil {
		t.Fatal(err)
	}
	body := "backend: yarn\ntokens: [{token: hadoop-conf-token-0123, user: ops, role: admin}]\ninflux: {url: \"http://127.0.0.1:1\", bucket: telegraf/autogen}\ngoodness: {disk_read_mbps: 500, disk_write_mbps: 500, net_recv_mbps: 125, net_sent_mbps: 125}\n" +
		"yarn:\n  kerberos: {principal: colocd/admit1.example.org@EXAMPLE.ORG, keytab: " + kt + ", krb5_conf: " + krb5 + "}\n  tokens: {renewer: mapred, rm: true}\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	cfg, err := Load(LoadOptions{File: file, LookupEnv: env(map[string]string{"HADOOP_CONF_DIR": dir}), Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		RMURLs                []string
		Auth                  yarncluster.AuthMode
		SPNEGO, Renewer, RMSv string
		AppUser               string
		HDFS                  []yarncluster.HDFSTokens
	}
	want := got{
		RMURLs: []string{"https://rm1.example.org:8090", "https://rm2.example.org:8443"}, Auth: yarncluster.AuthKerberos,
		SPNEGO: "HTTP/_HOST@EXAMPLE.ORG", Renewer: "mapred", RMSv: "rm1.example.org:8032,rm2.example.org:8032",
		AppUser: "svc-colocd", // colocd/admit1.example.org@EXAMPLE.ORG under core-site's auth_to_local
		HDFS:    []yarncluster.HDFSTokens{{URLs: []string{"https://nn1.example.org:9871", "https://nn2.example.org:9871"}, Service: "ha-hdfs:prod"}},
	}
	y := cfg.Yarn
	if d := cmp.Diff(want, got{y.RMURLs, y.Auth, y.Kerberos.ServicePrincipal, y.Tokens.Renewer, y.Tokens.RMService, y.AppUser, y.Tokens.HDFS}); d != "" {
		t.Errorf("yarn keys (-want,+got):\n%s", d)
	}
	for key, src := range map[string]string{
		"yarn.hadoop_conf_dir": "env HADOOP_CONF_DIR",
		"yarn.auth":            "hadoop core-site.xml: hadoop.security.authentication in " + dir,
		"yarn.tokens.renewer":  "file " + file + ":7",
		"yarn.app_user":        "hadoop core-site.xml: hadoop.security.auth_to_local in " + dir,
		"yarn.rm_urls": "hadoop yarn-site.xml: yarn.http.policy, yarn-site.xml: yarn.resourcemanager.ha.enabled, yarn-site.xml: yarn.resourcemanager.ha.rm-ids, " +
			"yarn-site.xml: yarn.resourcemanager.hostname.rm1, yarn-site.xml: yarn.resourcemanager.webapp.https.address.rm2 in " + dir,
	} {
		if sources[key] != src {
			t.Errorf("source of %s = %q, want %q", key, sources[key], src)
		}
	}

	// Without colocd's renewer key, the RM principal's short name under
	// the same rules (yarn/_HOST@EXAMPLE.ORG → yarn-rm, not "yarn"); an
	// explicit yarn.app_user wins over the rules.
	body2 := strings.Replace(body, "renewer: mapred, ", "", 1) + "  app_user: colocd-svc\n"
	if err := os.WriteFile(file, []byte(body2), 0o600); err != nil {
		t.Fatal(err)
	}
	sources = map[string]string{}
	cfg, err = Load(LoadOptions{File: file, LookupEnv: env(map[string]string{"HADOOP_CONF_DIR": dir}), Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Yarn.Tokens.Renewer != "yarn-rm" || cfg.Yarn.AppUser != "colocd-svc" {
		t.Errorf("renewer %q, app_user %q; want yarn-rm and colocd-svc", cfg.Yarn.Tokens.Renewer, cfg.Yarn.AppUser)
	}
	if want := "hadoop yarn-site.xml: yarn.resourcemanager.principal, core-site.xml: hadoop.security.auth_to_local in " + dir; sources["yarn.tokens.renewer"] != want {
		t.Errorf("source of yarn.tokens.renewer = %q, want %q", sources["yarn.tokens.renewer"], want)
	}

	// Rules that map colocd's principal to nobody: the RM would refuse
	// it; colocd says so at start, naming yarn.app_user.
	strict := t.TempDir()
	for _, name := range []string{"yarn-site.xml", "hdfs-site.xml"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(strict, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	core := `<configuration><property><name>hadoop.security.authentication</name><value>kerberos</value></property>` +
		`<property><name>hadoop.security.auth_to_local</name><value>RULE:[2:$1@$0](yarn@EXAMPLE.ORG)s/.*/yarn-rm/</value></property></configuration>`
	if err := os.WriteFile(filepath.Join(strict, "core-site.xml"), []byte(core), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(LoadOptions{File: file, LookupEnv: env(map[string]string{"HADOOP_CONF_DIR": strict})})
	var ce *configError
	if !errors.As(err, &ce) || ce.Key != "yarn.app_user" || !strings.Contains(err.Error(), "colocd/admit1.example.org@EXAMPLE.ORG") {
		t.Errorf("rules that map colocd to nobody: %v; want a config error of yarn.app_user naming the principal", err)
	}

	// The simulator reads no Hadoop configuration from the environment.
	sim, err := Load(LoadOptions{File: "../configs/demo.yaml", LookupEnv: env(map[string]string{"HADOOP_CONF_DIR": "/nonexistent"})})
	if err != nil {
		t.Fatalf("the demo with a HADOOP_CONF_DIR that does not exist: %v", err)
	}
	if sim.Yarn.HadoopConfDir != "" {
		t.Errorf("demo: yarn.hadoop_conf_dir = %q, want none", sim.Yarn.HadoopConfDir)
	}
}
