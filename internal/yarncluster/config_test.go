package yarncluster_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
)

// kerberosFiles writes a krb5.conf for EXAMPLE.COM and a keytab with a key
// of colocd@EXAMPLE.COM, without a KDC.
func kerberosFiles(t *testing.T) (krb5conf, kt string) {
	t.Helper()
	dir := t.TempDir()
	krb5conf = filepath.Join(dir, "krb5.conf")
	conf := "[libdefaults]\n default_realm = EXAMPLE.COM\n[realms]\n EXAMPLE.COM = {\n  kdc = kdc.example.com:88\n }\n"
	if err := os.WriteFile(krb5conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	k := keytab.New()
	if err := k.AddEntry("colocd", "EXAMPLE.COM", "secret", time.Now(), 1, 18); err != nil {
		t.Fatal(err)
	}
	kt = filepath.Join(dir, "colocd.keytab")
	f, err := os.Create(kt)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := k.Write(f); err != nil {
		t.Fatal(err)
	}
	return krb5conf, kt
}

// kerberized is a valid yarn section with yarn.auth kerberos and two RMs
// on one host, each with its own service principal.
func kerberized(t *testing.T) yarncluster.Config {
	t.Helper()
	krb5conf, kt := kerberosFiles(t)
	y := yarncluster.DefaultConfig()
	y.RMURLs = []string{"http://127.0.0.1:18088", "http://127.0.0.1:18089"}
	y.Auth = yarncluster.AuthKerberos
	y.Kerberos.Principal = "colocd@EXAMPLE.COM"
	y.Kerberos.Keytab = kt
	y.Kerberos.Krb5Conf = krb5conf
	y.Kerberos.ServicePrincipal = "HTTP/_HOST@EXAMPLE.COM"
	y.Kerberos.ServicePrincipals = []yarncluster.ServicePrincipal{
		{URL: "http://127.0.0.1:18088", Principal: "HTTP/rm1.example.com@EXAMPLE.COM"},
		{URL: "http://127.0.0.1:18089/", Principal: "HTTP/rm2.example.com"},
	}
	return y
}

// TestKerberosConfig: a valid kerberos section becomes the client's
// kerberos.Auth, each RM with its own service principal; a keytab gone
// since Validate makes every request fail naming the key.
func TestKerberosConfig(t *testing.T) {
	y := kerberized(t)
	if err := y.Validate(); err != nil {
		t.Fatal(err)
	}
	cc := y.ClientConfig(nil)
	a, ok := cc.Auth.(*kerberos.Auth)
	if cc.User != "" || !ok {
		t.Fatalf("ClientConfig: user %q, Auth %T; want no user and a *kerberos.Auth", cc.User, cc.Auth)
	}
	if a.Principal() != "colocd@EXAMPLE.COM" {
		t.Errorf("principal %q", a.Principal())
	}
	got := map[string]string{}
	for _, raw := range append(y.RMURLs, "http://nm7.example.com:8042") {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		got[raw] = a.ServicePrincipal(u)
	}
	want := map[string]string{"http://127.0.0.1:18088": "HTTP/rm1.example.com@EXAMPLE.COM",
		"http://127.0.0.1:18089": "HTTP/rm2.example.com@EXAMPLE.COM", "http://nm7.example.com:8042": "HTTP/nm7.example.com@EXAMPLE.COM"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("service principals (-want +got):\n%s", diff)
	}
	if _, err := yarnclient.New(cc); err != nil {
		t.Fatal(err)
	}

	if err := os.Remove(y.Kerberos.Keytab); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:18088/ws/v1/cluster/info", nil)
	err := y.ClientConfig(nil).Auth.Authenticate(req)
	var fe *yarncluster.FieldError
	if !errors.As(err, &fe) || fe.Field != "kerberos.keytab" {
		t.Errorf("keytab gone: %v, want a FieldError for kerberos.keytab", err)
	}

	simple := yarncluster.DefaultConfig()
	simple.RMURLs, simple.User = []string{"http://rm1:8088"}, "colocd"
	if err := simple.Validate(); err != nil {
		t.Fatal(err)
	}
	if cc := simple.ClientConfig(nil); cc.Auth != nil || cc.User != "colocd" {
		t.Errorf("simple auth ClientConfig: %+v", cc)
	}
}

// TestKerberosConfigRefusals: each mistake is a *FieldError naming the
// key under yarn.
func TestKerberosConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mod   func(*yarncluster.Config)
		field string
	}{
		{"unknown auth", func(y *yarncluster.Config) { y.Auth = "ntlm" }, "auth"},
		{"simple with a principal", func(y *yarncluster.Config) { y.Auth = yarncluster.AuthSimple }, "auth"},
		{"kerberos with a user", func(y *yarncluster.Config) { y.User = "colocd" }, "user"},
		{"no principal", func(y *yarncluster.Config) { y.Kerberos.Principal = "" }, "kerberos.principal"},
		{"principal not in the keytab", func(y *yarncluster.Config) { y.Kerberos.Principal = "alice" }, "kerberos.keytab"},
		{"no keytab", func(y *yarncluster.Config) { y.Kerberos.Keytab = "" }, "kerberos.keytab"},
		{"missing keytab", func(y *yarncluster.Config) { y.Kerberos.Keytab = "/nonexistent/colocd.keytab" }, "kerberos.keytab"},
		{"missing krb5.conf", func(y *yarncluster.Config) { y.Kerberos.Krb5Conf = "/nonexistent/krb5.conf" }, "kerberos.krb5_conf"},
		{"bad service principal", func(y *yarncluster.Config) { y.Kerberos.ServicePrincipal = "HTTP" }, "kerberos.service_principal"},
		{"cross-realm service principal", func(y *yarncluster.Config) { y.Kerberos.ServicePrincipal = "HTTP/_HOST@OTHER.COM" }, "kerberos.service_principal"},
		{"override with a bad URL", func(y *yarncluster.Config) { y.Kerberos.ServicePrincipals[0].URL = "rm1:8088" }, "kerberos.service_principals[0].url"},
		{"override twice", func(y *yarncluster.Config) { y.Kerberos.ServicePrincipals[1].URL = "http://127.0.0.1:18088/x" }, "kerberos.service_principals[1].url"},
		{"override without a principal", func(y *yarncluster.Config) { y.Kerberos.ServicePrincipals[1].Principal = "" }, "kerberos.service_principals[1].principal"},
		{"override with a bad principal", func(y *yarncluster.Config) { y.Kerberos.ServicePrincipals[1].Principal = "rm2" }, "kerberos.service_principals[1].principal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := kerberized(t)
			tc.mod(&y)
			wantFieldError(t, y, tc.field)
		})
	}
}

// TestSubmitAsAndTokensConfig: yarn.submit_as and yarn.tokens take what
// works and refuse, naming the key, what cannot: tokens without a REST
// submission, an RM token without Kerberos or a service, a namespace
// without NameNodes or with a bad URL, two tokens for one service.
func TestSubmitAsAndTokensConfig(t *testing.T) {
	valid := func(t *testing.T) yarncluster.Config {
		y := kerberized(t)
		y.SubmitAs = yarncluster.SubmitAsJobUser
		y.Tokens = yarncluster.TokensConfig{RM: true, RMService: "10.0.0.1:8032", Renewer: "yarn", HDFS: []yarncluster.HDFSTokens{
			{URLs: []string{"http://nn1.example.org:9870", "http://nn2.example.org:9870"}, Service: "ha-hdfs:ns1"},
			{URLs: []string{"https://nn3.example.org:9871"}},
		}}
		return y
	}
	if err := valid(t).Validate(); err != nil {
		t.Fatalf("valid section: %v", err)
	}
	d := yarncluster.DefaultConfig()
	if d.SubmitAs != yarncluster.SubmitAsDaemon || d.Tokens.Renewer != "yarn" || d.Tokens.RM || len(d.Tokens.HDFS) != 0 {
		t.Errorf("defaults: submit_as %q, tokens %+v; want daemon, none, renewer yarn", d.SubmitAs, d.Tokens)
	}
	command := func(y *yarncluster.Config) {
		y.Submit, y.Command.Argv = yarncluster.SubmitCommand, []string{"spark-submit"}
	}
	for _, tc := range []struct {
		name  string
		mod   func(*yarncluster.Config)
		field string
	}{
		{"unknown submit_as", func(y *yarncluster.Config) { y.SubmitAs = "root" }, "submit_as"},
		{"job_user with command submission", func(y *yarncluster.Config) { command(y); y.Tokens = yarncluster.TokensConfig{} }, "submit_as"},
		{"tokens with command submission", func(y *yarncluster.Config) { command(y); y.SubmitAs = yarncluster.SubmitAsDaemon }, "tokens.rm"},
		{"hdfs tokens with command submission", func(y *yarncluster.Config) {
			command(y)
			y.SubmitAs, y.Tokens.RM, y.Tokens.RMService = yarncluster.SubmitAsDaemon, false, ""
		}, "tokens.hdfs"},
		{"RM token over simple auth", func(y *yarncluster.Config) {
			y.Auth, y.User, y.Kerberos.Principal, y.Kerberos.Keytab = yarncluster.AuthSimple, "colocd", "", ""
		}, "tokens.rm"},
		{"RM token without a service", func(y *yarncluster.Config) { y.Tokens.RMService = " " }, "tokens.rm_service"},
		{"a service without the RM token", func(y *yarncluster.Config) { y.Tokens.RM = false }, "tokens.rm_service"},
		{"a service and nothing to fetch", func(y *yarncluster.Config) { y.Tokens.RM, y.Tokens.HDFS = false, nil }, "tokens.rm_service"},
		{"no renewer", func(y *yarncluster.Config) { y.Tokens.Renewer = "" }, "tokens.renewer"},
		{"namespace without NameNodes", func(y *yarncluster.Config) { y.Tokens.HDFS[1].URLs = nil }, "tokens.hdfs[1].urls"},
		{"bad NameNode URL", func(y *yarncluster.Config) { y.Tokens.HDFS[0].URLs[1] = "nn2:9870" }, "tokens.hdfs[0].urls[1]"},
		{"two tokens for one service", func(y *yarncluster.Config) { y.Tokens.HDFS[1].Service = "ha-hdfs:ns1" }, "tokens.hdfs[1].service"},
		{"the RM's service for HDFS", func(y *yarncluster.Config) { y.Tokens.HDFS[0].Service = "10.0.0.1:8032" }, "tokens.hdfs[0].service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := valid(t)
			tc.mod(&y)
			wantFieldError(t, y, tc.field)
		})
	}
}

// wantFieldError checks that y is refused with a FieldError naming field.
func wantFieldError(t *testing.T, y yarncluster.Config, field string) {
	t.Helper()
	err := y.Validate()
	var fe *yarncluster.FieldError
	if !errors.As(err, &fe) || fe.Field != field {
		t.Fatalf("err = %v, want a FieldError for %s", err, field)
	}
	t.Logf("error: %v", err)
}

// TestCommandConfig: yarn.command takes an argv whose placeholders are
// all known and declared, parameters with a name, a pattern and a bound,
// and the operator's environment and directory; it refuses, naming the
// key, what a shell would have expanded but exec never does, placeholders
// in a shell's script, and COLOCD_* variables (colocd's own).
func TestCommandConfig(t *testing.T) {
	valid := func() yarncluster.Config {
		y := yarncluster.DefaultConfig()
		y.RMURLs, y.User, y.Submit = []string{"http://127.0.0.1:18088"}, "colocd", yarncluster.SubmitCommand
		y.Command.Argv = []string{"spark-submit", "--queue", "{{queue}}", "--conf", "spark.yarn.tags={{tags}}",
			"--proxy-user", "{{user}}", "--class", "{{param.main_class}}", "{{param.jar}}"}
		y.Command.Params = []yarncluster.CommandParam{
			{Name: "main_class", Pattern: `[A-Za-z_][A-Za-z0-9_.]*`, Required: true},
			{Name: "jar", Pattern: `hdfs:///apps/[a-z0-9_./-]+\.jar`, MaxLength: 4096},
		}
		y.Command.Env = []string{"SPARK_HOME=/opt/spark"}
		y.Command.Dir = "/var/lib/colocd/submit"
		return y
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid section: %v", err)
	}
	d := yarncluster.DefaultConfig().Command
	if !slices.Contains(d.InheritEnv, "PATH") || slices.Contains(d.InheritEnv, "BASH_ENV") || len(d.Env) != 0 || d.Dir != "" || len(d.Params) != 0 {
		t.Errorf("defaults %+v: want PATH inherited, no env, dir or params", d)
	}
	for _, tc := range []struct {
		name  string
		mod   func(*yarncluster.CommandConfig)
		field string
	}{
		{"a variable exec never expands", func(c *yarncluster.CommandConfig) { c.Argv[4] = "spark.yarn.tags=${COLOCD_YARN_TAGS}" }, "command.argv[4]"},
		{"an unknown placeholder", func(c *yarncluster.CommandConfig) { c.Argv[2] = "{{queue_name}}" }, "command.argv[2]"},
		{"an undeclared parameter", func(c *yarncluster.CommandConfig) { c.Argv[9] = "{{param.jars}}" }, "command.argv[9]"},
		{"a placeholder in a shell script", func(c *yarncluster.CommandConfig) {
			c.Argv = []string{"/bin/bash", "-c", "spark-submit --class {{param.main_class}}"}
		}, "command.argv[2]"},
		{"no argv", func(c *yarncluster.CommandConfig) { c.Argv = nil }, "command.argv"},
		{"no timeout", func(c *yarncluster.CommandConfig) { c.Timeout = 0 }, "command.timeout"},
		{"a bad name", func(c *yarncluster.CommandConfig) { c.Params[0].Name = "Main-Class" }, "command.params[0].name"},
		{"a name twice", func(c *yarncluster.CommandConfig) { c.Params[1].Name = "main_class" }, "command.params[1].name"},
		{"no pattern", func(c *yarncluster.CommandConfig) { c.Params[1].Pattern = "" }, "command.params[1].pattern"},
		{"a bad pattern", func(c *yarncluster.CommandConfig) { c.Params[0].Pattern = "[a-z" }, "command.params[0].pattern"},
		{"too long a bound", func(c *yarncluster.CommandConfig) { c.Params[1].MaxLength = 4097 }, "command.params[1].max_length"},
		{"a COLOCD_ variable", func(c *yarncluster.CommandConfig) { c.Env = append(c.Env, "COLOCD_JOB_USER=hdfs") }, "command.env[1]"},
		{"not KEY=VALUE", func(c *yarncluster.CommandConfig) { c.Env[0] = "SPARK_HOME" }, "command.env[0]"},
		{"inheriting colocd's settings", func(c *yarncluster.CommandConfig) { c.InheritEnv = []string{"PATH", "COLOCD_TOKENS"} }, "command.inherit_env[1]"},
		{"a bad variable name", func(c *yarncluster.CommandConfig) { c.InheritEnv = []string{"PATH=/bin"} }, "command.inherit_env[0]"},
		{"a relative dir", func(c *yarncluster.CommandConfig) { c.Dir = "submit" }, "command.dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := valid()
			tc.mod(&y.Command)
			wantFieldError(t, y, tc.field)
		})
	}
}

// TestClientCertConfig: yarn.cert_file and yarn.key_file, a certificate
// and its own key, pass Validate and reach the yarn client's
// configuration; a key of another certificate is refused naming
// yarn.cert_file.
func TestClientCertConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pair := func(name string) (cert, key string) {
		srv := httptest.NewTLSServer(http.NotFoundHandler()) // its certificate and key, as a client's
		srv.Close()
		c := srv.TLS.Certificates[0]
		k, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", c.Certificate[0]), write(name+".key", "PRIVATE KEY", k)
	}
	cert, key := pair("colocd")
	y := yarncluster.DefaultConfig()
	y.RMURLs = []string{"https://127.0.0.1:18090"}
	y.CertFile, y.KeyFile = cert, key
	if err := y.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if c := y.ClientConfig(nil); c.CertFile != cert || c.KeyFile != key {
		t.Errorf("the client's CertFile, KeyFile = %q, %q, want the section's", c.CertFile, c.KeyFile)
	}
	y.KeyFile = write("other.key", "PRIVATE KEY", func() []byte {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := x509.MarshalPKCS8PrivateKey(k)
		return b
	}())
	var fe interface{ FieldReason() (string, string) }
	if err := y.Validate(); err == nil || !errors.As(err, &fe) || func() string { f, _ := fe.FieldReason(); return f }() != "cert_file" {
		t.Errorf("a key of another certificate: Validate = %v, want an error on cert_file", err)
	}
}
