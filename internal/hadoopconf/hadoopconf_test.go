package hadoopconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDerive(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
		want Derivation
	}{
		{"secure HA over HTTPS", "testdata/secure-ha", Derivation{
			RMURLs: derived[[]string]{Value: []string{"https://rm1.example.org:8090", "https://rm2.example.org:8443"}, Exists: true,
				From: []string{"yarn-site.xml: yarn.http.policy", "yarn-site.xml: yarn.resourcemanager.ha.enabled", "yarn-site.xml: yarn.resourcemanager.ha.rm-ids",
					"yarn-site.xml: yarn.resourcemanager.hostname.rm1", "yarn-site.xml: yarn.resourcemanager.webapp.https.address.rm2"}},
			Kerberos:        derived[bool]{Value: true, Exists: true, From: []string{"core-site.xml: hadoop.security.authentication"}},
			SPNEGOPrincipal: derived[string]{Value: "HTTP/_HOST@EXAMPLE.ORG", Exists: true, From: []string{"yarn-site.xml: yarn.resourcemanager.webapp.spnego-principal"}},
			Renewer:         derived[string]{Value: "yarn/_HOST@EXAMPLE.ORG", Exists: true, From: []string{"yarn-site.xml: yarn.resourcemanager.principal"}},
			AuthToLocal: derived[string]{Value: "RULE:[2:$1@$0](yarn@EXAMPLE.ORG)s/.*/yarn-rm/\n    RULE:[2:$1@$0](colocd@EXAMPLE.ORG)s/.*/svc-colocd/\n    DEFAULT",
				Exists: true, From: []string{"core-site.xml: hadoop.security.auth_to_local"}},
			RMService: derived[string]{Value: "rm1.example.org:8032,rm2.example.org:8032", Exists: true,
				From: []string{"yarn-site.xml: yarn.resourcemanager.hostname.rm1", "yarn-site.xml: yarn.resourcemanager.hostname.rm2"}},
			NameServices: derived[[]nameService]{Exists: true,
				Value: []nameService{{Name: "prod", Service: "ha-hdfs:prod", URLs: []string{"https://nn1.example.org:9871", "https://nn2.example.org:9871"}}},
				From: []string{"hdfs-site.xml: dfs.http.policy", "hdfs-site.xml: dfs.nameservices", "hdfs-site.xml: dfs.ha.namenodes.prod",
					"hdfs-site.xml: dfs.namenode.https-address.prod.nn1", "hdfs-site.xml: dfs.namenode.https-address.prod.nn2"}},
		}},
		{"one RM, simple security", "testdata/simple", Derivation{
			RMURLs:    derived[[]string]{Value: []string{"http://rm.example.org:8088"}, Exists: true, From: []string{"yarn-site.xml: yarn.resourcemanager.hostname"}},
			RMService: derived[string]{Value: "rm.example.org:8032", Exists: true, From: []string{"yarn-site.xml: yarn.resourcemanager.hostname"}},
			NameServices: derived[[]nameService]{Exists: true, Value: []nameService{{Name: "nn.example.org", URLs: []string{"http://nn.example.org:9870"}}},
				From: []string{"core-site.xml: fs.defaultFS"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Read(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Derive()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Derive (-want,+got):\n%s", d)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "none")); !errors.Is(err, ErrNoDir) {
		t.Errorf("a missing directory: %v, want ErrNoDir", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte("<configuration><property>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || !contains(err.Error(), "yarn-site.xml") {
		t.Errorf("a broken file: %v, want an error naming it", err)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "yarn-site.xml"), []byte(`<configuration><property><name>yarn.resourcemanager.webapp.address</name><value>0.0.0.0:8088</value></property></configuration>`), 0o644)
	c, err := Read(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Derive(); err == nil || !contains(err.Error(), "yarn.resourcemanager.webapp.address") {
		t.Errorf("a wildcard RM address: %v, want an error naming the property", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
