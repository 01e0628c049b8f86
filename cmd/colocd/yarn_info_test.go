package main

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/yarnclient/yarntest"
	"github.com/google/go-cmp/cmp"
)

// TestYarnInfoSubmission: yarn info says whose applications colocd submits
// and which delegation tokens it fetches at admission.
func TestYarnInfoSubmission(t *testing.T) {
	isolate(t)
	rm := yarntest.NewFakeRM(t)
	cfg := filepath.Join(t.TempDir(), "colocd.yaml")
	yaml := "yarn:\n  rm_urls: [\"" + rm.URL() + "\"]\n  user: colocd\n  submit_as: job_user\n" +
		"  tokens:\n    hdfs:\n      - {urls: [\"http://127.0.0.1:1\"], service: \"ha-hdfs:ns1\"}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "yarn", "info", "--config", cfg)
	if code != 0 {
		t.Fatalf("yarn info: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"submit as", "each job's user (yarn.submit_as job_user", "delegation tokens", "HDFS ha-hdfs:ns1, fetched at admission, renewer yarn"} {
		if !strings.Contains(out, want) {
			t.Errorf("yarn info lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCmd(t, "yarn", "info", "--json", "--config", cfg)
	var info struct {
		Submission daemon.YarnSubmission `json:"submission"`
	}
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil {
		t.Fatalf("yarn info --json: exit %d, %v:\n%s", code, err, out)
	}
	want := daemon.YarnSubmission{SubmitAs: "job_user", HDFS: []string{"ha-hdfs:ns1"}, Renewer: "yarn"}
	if diff := cmp.Diff(want, info.Submission); diff != "" {
		t.Errorf("yarn info --json submission (-want +got):\n%s", diff)
	}
}

// TestYarnInfoHadoopConfDir: with HADOOP_CONF_DIR naming a Hadoop
// client's configuration, yarn info finds the RM from yarn-site.xml and
// says so beside each value it took.
func TestYarnInfoHadoopConfDir(t *testing.T) {
	isolate(t)
	rm := yarntest.NewFakeRM(t, yarntest.AutoStart())
	u, err := url.Parse(rm.URL())
	if err != nil {
		t.Fatal(err)
	}
	conf := t.TempDir()
	site := `<configuration><property><name>yarn.resourcemanager.webapp.address</name><value>` + u.Host + `</value></property></configuration>`
	if err := os.WriteFile(filepath.Join(conf, "yarn-site.xml"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "colocd.yaml")
	if err := os.WriteFile(cfg, []byte("backend: yarn\ninflux: {url: \"http://127.0.0.1:1\", bucket: telegraf/autogen}\n"+
		"goodness: {disk_read_mbps: 500, disk_write_mbps: 500, net_recv_mbps: 125, net_sent_mbps: 125}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HADOOP_CONF_DIR", conf)
	code, out, errOut := runCmd(t, "yarn", "info", "--config", cfg)
	if code != 0 {
		t.Fatalf("yarn info: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"yarn.hadoop_conf_dir  " + conf + "  (env HADOOP_CONF_DIR)",
		"yarn.rm_urls  [\"" + rm.URL() + "\"]  (hadoop yarn-site.xml: yarn.resourcemanager.webapp.address in " + conf + ")",
		"yarn.auth  simple  (default)",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), "  "), strings.Join(strings.Fields(want), "  ")) {
			t.Errorf("yarn info lacks %q:\n%s", want, out)
		}
	}
}

// TestYarnInfoClientCertificate: with yarn.cert_file, yarn info says whose
// client certificate colocd presents, who signed it and until when; and
// marks one whose time has passed.
func TestYarnInfoClientCertificate(t *testing.T) {
	isolate(t)
	rm := yarntest.NewFakeRM(t)
	dir := t.TempDir()
	srv := httptest.NewTLSServer(http.NotFoundHandler()) // its certificate and key, as colocd's
	srv.Close()
	pair := srv.TLS.Certificates[0]
	key, err := x509.MarshalPKCS8PrivateKey(pair.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pair.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "colocd.yaml")
	yaml := "yarn:\n  rm_urls: [\"" + rm.URL() + "\"]\n  user: colocd\n  cert_file: " + certFile + "\n  key_file: " + keyFile + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "yarn", "info", "--config", cfg)
	if code != 0 {
		t.Fatalf("yarn info: exit %d: %s", code, errOut)
	}
	want := regexp.MustCompile(`client certificate +` + regexp.QuoteMeta(leaf.Subject.String()+", issued by "+leaf.Issuer.String()+
		", valid until "+leaf.NotAfter.UTC().Format(time.RFC3339)+" ("+certFile+")"))
	if !want.MatchString(out) {
		t.Errorf("yarn info lacks %v:\n%s", want, out)
	}
	var b strings.Builder
	printClientCert(&b, &daemon.YarnClientCert{File: certFile, Subject: "CN=colocd", Issuer: "CN=ca", NotAfter: leaf.NotAfter}, leaf.NotAfter.Add(time.Second))
	if !strings.Contains(b.String(), "EXPIRED") {
		t.Errorf("a certificate past its NotAfter: %q, want EXPIRED", b.String())
	}
}
