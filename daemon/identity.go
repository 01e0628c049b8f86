package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/colocd/colocd/daemon/api"
)

// identityDeps fills in how the API authenticates and authorises callers,
// from api.auth, api.kerberos, api.acl, api.groups_file, api.host_groups,
// api.proxy_users, api.job_groups, tls.client_auth and
// ha.forward_key_file; it reads the keytab, the groups file and the key.
func identityDeps(cfg Config, d *api.Deps, log *slog.Logger) error {
	a := cfg.API
	d.Auth, d.WallNow = a.Auth, time.Now
	if a.Auth == api.AuthKerberos {
		d.Tokens = nil
	}
	if a.Auth != api.AuthTokens {
		k, err := api.LoadKerberos(a.Kerberos.Keytab, a.Kerberos.Principal, api.Hostname(), a.Kerberos.AuthToLocal)
		if err != nil {
			key := "api.kerberos.keytab"
			if strings.Contains(err.Error(), "principal:") {
				key = "api.kerberos.principal"
			}
			return cfgErr(key, "%v", err)
		}
		d.Kerberos = k
		log.Info("API accepts Kerberos (SPNEGO)", "keytab", a.Kerberos.Keytab, "principals", cmpOr(strings.Join(k.Principals, ","), "any in the keytab"))
	}
	d.ClientCerts = cfg.TLS.ClientAuth != clientAuthNone
	var err error
	if d.ACLs.Reader, err = api.ParseACL(a.ACL.Reader); err != nil {
		return cfgErr("api.acl.reader", "%v", err)
	}
	if d.ACLs.Submitter, err = api.ParseACL(a.ACL.Submitter); err != nil {
		return cfgErr("api.acl.submitter", "%v", err)
	}
	if d.ACLs.Admin, err = api.ParseACL(a.ACL.Admin); err != nil {
		return cfgErr("api.acl.admin", "%v", err)
	}
	var groups api.Groups
	if a.GroupsFile != "" {
		f, err := os.Open(a.GroupsFile)
		if err != nil {
			return cfgErr("api.groups_file", "%v", err)
		}
		g, err := api.ParseGroupsFile(f)
		f.Close()
		if err != nil {
			return cfgErr("api.groups_file", "%s: %v", a.GroupsFile, err)
		}
		groups = append(groups, g)
	}
	if a.HostGroups {
		groups = append(groups, &api.HostGroups{})
	}
	if len(groups) > 0 {
		d.Groups = groups
	}
	if d.ProxyUsers, err = apiProxyRules(a.ProxyUsers); err != nil {
		return err
	}
	d.JobGroups = a.JobGroups
	if cfg.HA.Enabled() && cfg.HA.ForwardKeyFile != "" {
		b, err := os.ReadFile(cfg.HA.ForwardKeyFile)
		if err != nil {
			return cfgErr("ha.forward_key_file", "%v", err)
		}
		if b = []byte(strings.TrimSpace(string(b))); len(b) < 32 {
			return cfgErr("ha.forward_key_file", "%s holds %d bytes, want at least 32 (e.g. head -c 48 /dev/urandom | base64 > the file)", cfg.HA.ForwardKeyFile, len(b))
		}
		d.ForwardKey = b
	}
	return nil
}

// clientCerts makes t ask for client certificates as tls.client_auth says,
// verified against tls.client_ca_file.
func clientCerts(c tlsConfig, t *tls.Config) error {
	if c.ClientAuth == clientAuthNone || c.ClientAuth == "" {
		return nil
	}
	b, err := os.ReadFile(c.ClientCAFile)
	if err != nil {
		return cfgErr("tls.client_ca_file", "%v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return cfgErr("tls.client_ca_file", "%s holds no PEM certificate", c.ClientCAFile)
	}
	t.ClientCAs = pool
	t.ClientAuth = tls.VerifyClientCertIfGiven
	if c.ClientAuth == clientAuthRequire {
		t.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
