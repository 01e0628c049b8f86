package main

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/daemon"
)

// clientConfig is the client's own configuration file,
// $XDG_CONFIG_HOME/colocd/config.yaml (~/.config/colocd/config.yaml):
// where the servers are and how to authenticate to them. Flags and
// COLOCD_SERVER, COLOCD_TOKEN override it.
//
//	server: https://colocd1.example.org:8443,https://colocd2.example.org:8443
//	auth: kerberos            # auto | kerberos | token | tls
//	ca_file: /etc/pki/tls/certs/ca-bundle.crt
//	kerberos:
//	  service_principal: HTTP/_HOST
//	output: wide
type clientConfig struct {
	Server    string `yaml:"server"`     // a URL, or the replicas' comma-separated
	Auth      string `yaml:"auth"`       // auto (default) | kerberos | token | tls
	TokenFile string `yaml:"token_file"` // a file holding the bearer token
	CAFile    string `yaml:"ca_file"`    // PEM CAs of the servers' certificates
	CertFile  string `yaml:"cert_file"`  // a client certificate (PEM)
	KeyFile   string `yaml:"key_file"`   // its key
	Kerberos  struct {
		CCache           string `yaml:"ccache"`            // "": KRB5CCNAME, else /tmp/krb5cc_<uid>
		Krb5Conf         string `yaml:"krb5_conf"`         // "": KRB5_CONFIG, else /etc/krb5.conf
		ServicePrincipal string `yaml:"service_principal"` // "": HTTP/_HOST (the server URL's host)
	} `yaml:"kerberos"`
	Output  string        `yaml:"output"` // table | json | yaml | wide | name
	Timeout time.Duration `yaml:"timeout"`
}

// Client authentication modes (--auth, auth:).
const (
	authAuto     = "auto"
	authKerberos = "kerberos"
	authToken    = "token"
	authTLS      = "tls"
)

// clientConfigPath is where the client configuration is read from.
func clientConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "colocd", "config.yaml")
}

// loadClientConfig reads path strictly (an unknown key is an error naming
// it); a default path that does not exist is no configuration.
func loadClientConfig(path string, explicit bool) (clientConfig, error) {
	var c clientConfig
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return c, nil
	case err != nil:
		return c, usagef("client configuration: %v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, usagef("client configuration %s: %v (keys: server, auth, token_file, ca_file, cert_file, key_file, kerberos.ccache, kerberos.krb5_conf, kerberos.service_principal, output, timeout)", path, err)
	}
	return c, nil
}

// defaultCCache is the credential cache kinit writes: KRB5CCNAME, else
// MIT's default FILE:/tmp/krb5cc_<uid>.
func defaultCCache() string {
	if v := os.Getenv("KRB5CCNAME"); v != "" {
		return v
	}
	return fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())
}

// haveCCache reports whether the credential cache at path exists.
func haveCCache(path string) bool {
	_, err := os.Stat(strings.TrimPrefix(path, "FILE:"))
	return err == nil
}

// settle fills in what the flags did not set from the environment and
// the client configuration, then checks it.
func (c *clientFlags) settle(cmd *cobra.Command) (clientConfig, error) {
	f := cmd.Flags()
	path, explicit := clientConfigPath(), f.Changed("client-config")
	if explicit {
		path = c.clientConfig
	}
	cfg, err := loadClientConfig(path, explicit)
	if err != nil {
		return cfg, err
	}
	c.serverFrom = "--server"
	if !f.Changed("server") {
		switch v := os.Getenv(envServer); {
		case v != "":
			c.server, c.serverFrom = v, "environment variable "+envServer
		case cfg.Server != "":
			c.server, c.serverFrom = cfg.Server, "server in "+path
		}
	}
	if !f.Changed("token") {
		c.token = os.Getenv(envToken)
		if c.token == "" && cfg.TokenFile != "" {
			b, err := os.ReadFile(cfg.TokenFile)
			if err != nil {
				return cfg, usagef("token_file in %s: %v", path, err)
			}
			c.token = strings.TrimSpace(string(b))
		}
	}
	for _, s := range []struct {
		flag string
		dst  *string
		v    string
	}{{"ca-file", &c.caFile, cfg.CAFile}, {"cert-file", &c.certFile, cfg.CertFile}, {"key-file", &c.keyFile, cfg.KeyFile},
		{"auth", &c.auth, cfg.Auth}, {"output", &c.output, cfg.Output}} {
		if !f.Changed(s.flag) && s.v != "" {
			*s.dst = s.v
		}
	}
	if !f.Changed("timeout") && cfg.Timeout > 0 {
		c.timeout = cfg.Timeout
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return cfg, usagef("--cert-file and --key-file go together")
	}
	switch c.output {
	case "", "table", "json", "yaml", "wide", "name":
	default:
		return cfg, usagef("-o %q: want table, json, yaml, wide or name", c.output)
	}
	return cfg, nil
}

// authenticator is how the client authenticates, as --auth (or auth:)
// says: auto takes a token if one is given, else the person's Kerberos
// ticket cache if there is one, else a client certificate.
func (c *clientFlags) authenticator(cfg clientConfig) (apiclient.Authenticator, error) {
	mode := c.auth
	if mode == "" {
		mode = authAuto
	}
	ccache := cfg.Kerberos.CCache
	if ccache == "" {
		ccache = defaultCCache()
	}
	if mode == authAuto {
		switch {
		case c.token != "":
			mode = authToken
		case haveCCache(ccache):
			mode = authKerberos
		case c.certFile != "":
			mode = authTLS
		default:
			return nil, usagef("no credentials: run kinit (a Kerberos ticket), or pass --token (env %s), or a client certificate (--cert-file)", envToken)
		}
	}
	switch mode {
	case authToken:
		if c.token == "" {
			return nil, usagef("no token: pass --token or set %s", envToken)
		}
		return nil, nil
	case authTLS:
		if c.certFile == "" {
			return nil, usagef("--auth tls needs --cert-file and --key-file")
		}
		c.token = ""
		return nil, nil
	case authKerberos:
		c.token = ""
		krb5 := cfg.Kerberos.Krb5Conf
		if krb5 == "" {
			krb5 = os.Getenv("KRB5_CONFIG")
		}
		a, err := daemon.KerberosLogin(ccache, krb5, cfg.Kerberos.ServicePrincipal)
		if errors.Is(err, daemon.ErrNoKerberosTicket) {
			return nil, fmt.Errorf("no Kerberos ticket: %w (run kinit)", err)
		}
		if err != nil {
			return nil, usagef("kerberos: %v", err)
		}
		return a, nil
	}
	return nil, usagef("--auth %q: want auto, kerberos, token or tls", mode)
}

// httpClient is the client's HTTP client: the timeout, the servers' CA
// bundle and a client certificate.
func (c *clientFlags) httpClient() (*http.Client, error) {
	hc := &http.Client{Timeout: c.timeout}
	if c.caFile == "" && c.certFile == "" {
		return hc, nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if c.caFile != "" {
		b, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, usagef("--ca-file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, usagef("--ca-file %s holds no PEM certificate", c.caFile)
		}
		t.TLSClientConfig.RootCAs = pool
	}
	if c.certFile != "" {
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return nil, usagef("--cert-file/--key-file: %v", err)
		}
		t.TLSClientConfig.Certificates = []tls.Certificate{cert}
	}
	hc.Transport = t
	return hc, nil
}

// format is the output format: the --json of a command that still has
// one wins, then -o (table when unset).
func (c *clientFlags) format(asJSON bool) string {
	switch {
	case asJSON:
		return "json"
	case c.output == "":
		return "table"
	}
	return c.output
}

// writeYAML prints the server's JSON as YAML, keys in the server's order.
func writeYAML(w io.Writer, raw []byte) error {
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("the server's reply as YAML: %w", err)
	}
	var plain func(*yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style &^= yaml.FlowStyle
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
			n.Style &^= yaml.DoubleQuotedStyle
		}
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&n)
	b, err := yaml.Marshal(&n)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// writeNames prints what v holds as kind/name lines (-o name).
func writeNames(w io.Writer, v any) error {
	var names []string
	switch x := v.(type) {
	case v1.Job:
		names = []string{"job/" + x.ID}
	case v1.JobList:
		for _, j := range x.Jobs {
			names = append(names, "job/"+j.ID)
		}
	case v1.WhoAmI:
		names = []string{"user/" + x.User}
	default:
		return usagef("-o name lists jobs; use -o json or yaml here")
	}
	for _, n := range names {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// newIdempotencyKey is the key of a submission made without
// --idempotency-key: random, so that the client's own retries (a 503, a
// replica that did not answer) never make a second job.
func newIdempotencyKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "colocd-cli-" + hex.EncodeToString(b[:])
}

// completeKinds completes a kind from the server: the kinds the learner
// knows (GET /v1/preferences?limit=0).
func completeKinds(c *clientFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		api, err := c.client(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		zero := 0
		r, err := api.PreferencesPage(cmd.Context(), apiclient.Page{Limit: &zero})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, k := range r.Body.Kinds {
			if strings.HasPrefix(k, prefix) {
				out = append(out, k)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeJobIDs completes a job id from the server: the caller's live
// jobs first, then the newest of any state, with kind and state beside.
func completeJobIDs(c *clientFlags, states ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		api, err := c.client(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		limit := 200
		r, err := api.Jobs(cmd.Context(), apiclient.ListOptions{States: states, Limit: &limit})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, j := range r.Body.Jobs {
			if strings.HasPrefix(j.ID, strings.ToUpper(prefix)) {
				out = append(out, cobra.CompletionWithDesc(j.ID, j.Kind+" "+j.User+" "+j.State.String()))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
