package daemon

import (
	"os"
	"path/filepath"
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
		HDFS                  []yarncluster.HDFSTokens
	}
	want := got{
		RMURLs: []string{"https://rm1.example.org:8090", "https://rm2.example.org:8443"}, Auth: yarncluster.AuthKerberos,
		SPNEGO: "HTTP/_HOST@EXAMPLE.ORG", Renewer: "mapred", RMSv: "rm1.example.org:8032,rm2.example.org:8032",
		HDFS: []yarncluster.HDFSTokens{{URLs: []string{"https://nn1.example.org:9871", "https://nn2.example.org:9871"}, Service: "ha-hdfs:prod"}},
	}
	y := cfg.Yarn
	if d := cmp.Diff(want, got{y.RMURLs, y.Auth, y.Kerberos.ServicePrincipal, y.Tokens.Renewer, y.Tokens.RMService, y.Tokens.HDFS}); d != "" {
		t.Errorf("yarn keys (-want,+got):\n%s", d)
	}
	for key, src := range map[string]string{
		"yarn.hadoop_conf_dir": "env HADOOP_CONF_DIR",
		"yarn.auth":            "hadoop core-site.xml: hadoop.security.authentication in " + dir,
		"yarn.tokens.renewer":  "file " + file + ":7",
		"yarn.rm_urls": "hadoop yarn-site.xml: yarn.http.policy, yarn-site.xml: yarn.resourcemanager.ha.enabled, yarn-site.xml: yarn.resourcemanager.ha.rm-ids, " +
			"yarn-site.xml: yarn.resourcemanager.hostname.rm1, yarn-site.xml: yarn.resourcemanager.webapp.https.address.rm2 in " + dir,
	} {
		if sources[key] != src {
			t.Errorf("source of %s = %q, want %q", key, sources[key], src)
		}
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
