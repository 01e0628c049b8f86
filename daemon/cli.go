package daemon

import (
	"github.com/colocd/colocd/telemetry"
	"github.com/colocd/colocd/yarnclient/kerberos"
)

// What the command-line client needs of colocd's own packages, named here
// so that cmd/colocd imports nothing of ours but the daemon, the bench,
// the API client and its wire types.

// BuildInfo labels colocd_build_info (ServeOptions.Build).
type BuildInfo = telemetry.BuildInfo

// kerberosAuth authenticates HTTP requests with SPNEGO from a Kerberos
// credential cache; it satisfies apiclient.Authenticator and Refresher.
type kerberosAuth = kerberos.Auth

// ErrNoKerberosTicket is wrapped by KerberosLogin's error when the
// credential cache holds no valid ticket (run kinit).
var ErrNoKerberosTicket = kerberos.ErrNoTicket

// KerberosLogin is the command-line client's Kerberos login: the user's
// ticket cache ccache (as kinit left it), the krb5.conf at krb5Conf (""
// for /etc/krb5.conf), and the API's service principal (servicePrincipal,
// "" for HTTP/_HOST, _HOST the server's host name).
func KerberosLogin(ccache, krb5Conf, servicePrincipal string) (*kerberosAuth, error) {
	return kerberos.New(kerberos.Config{CCache: ccache, Krb5Conf: krb5Conf, ServicePrincipal: servicePrincipal})
}
