package kerberos

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/colocd/colocd/yarnclient"
)

// Kerberos defaults.
const (
	// DefaultKrb5Conf is the krb5.conf read when Config.Krb5Conf is
	// empty (MIT's and the JVM's default).
	DefaultKrb5Conf = "/etc/krb5.conf"
	// DefaultServicePrincipal is the RMs' and NodeManagers' SPNEGO
	// principal when Config.ServicePrincipal is empty: Hadoop's
	// HTTP/_HOST, in the client's realm.
	DefaultServicePrincipal = "HTTP/_HOST"

	// renewFraction is how much of a ticket's lifetime may pass before it
	// is replaced: Hadoop's UserGroupInformation re-logs in from the keytab
	// at 80 % of the TGT's lifetime (TICKET_RENEW_WINDOW).
	renewFraction = 0.8
	// renewRetry is how long a still-valid ticket is used after a failed
	// replacement before the KDC is asked again.
	renewRetry = 30 * time.Second
)

// Config configures Kerberos (SPNEGO) authentication to the RMs, the
// NodeManagers and the Timeline Server, from a keytab.
type Config struct {
	// Principal is the client principal, e.g. "colocd/admit1.example.com@EXAMPLE.COM";
	// without "@REALM" the realm is krb5.conf's default_realm.
	Principal string
	// Keytab is the keytab file holding Principal's current keys.
	Keytab string
	// CCache, instead of Keytab, is a person's credential cache (what
	// kinit wrote: KRB5CCNAME, "FILE:" or a path): its TGT gets the
	// service tickets. A TGT cannot be renewed without the person: once
	// it expires, Authenticate fails with ErrNoTicket (run kinit again).
	// Principal may be left empty (the cache's principal).
	CCache string
	// Krb5Conf is the krb5.conf naming the realm's KDCs; "" is
	// DefaultKrb5Conf.
	Krb5Conf string
	// ServicePrincipal is the HTTP service principal of every server the
	// client calls, Hadoop-style: "_HOST" is replaced by the host name of
	// the request's URL, lower-cased ("HTTP/_HOST@EXAMPLE.COM" becomes
	// HTTP/rm1.example.com@EXAMPLE.COM for http://rm1.example.com:8088).
	// Its realm, when given, must be the client's. "" is
	// DefaultServicePrincipal.
	ServicePrincipal string
	// ServicePrincipals overrides ServicePrincipal per server: a
	// "host:port" (as in the URL) or a "host" to its principal. For
	// servers reached by an address that is not the name in their
	// principal (an IP address, a load balancer, two RMs on one host).
	ServicePrincipals map[string]string
	// Now is the clock that decides when a ticket is renewed; nil is
	// time.Now. (The Kerberos messages themselves carry the real time.)
	Now func() time.Time
	// Logger receives renewals and failed renewals; nil discards.
	Logger *slog.Logger
}

// Auth is a yarnclient.Auth that speaks SPNEGO: it logs in from a keytab
// (an AS exchange: the TGT), gets a service ticket per server principal
// (a TGS exchange, cached) and sets "Authorization: Negotiate <token>" on
// each request. It replaces a ticket once 80 % of its lifetime has passed
// by its clock — the TGT by logging in again from the keytab, as Hadoop
// does — and, when that fails while the old ticket is still valid, keeps
// using the old one. It is a yarnclient.Refresher: after a 401 the client
// drops the server's service ticket (Refresh) and tries once more with a
// fresh one.
//
// It is safe for concurrent use, and every exchange with the KDC happens
// inside Authenticate, one at a time, through relays that cap the KDC's
// reply (relay.go); their goroutines end with the exchange. Cross-realm
// service principals are not supported.
type Auth struct {
	principal  string // name@REALM
	cname      types.PrincipalName
	realm      string
	keytabPath string
	ccachePath string // "": the keytab logs in
	krb5Path   string
	krb5       *config.Config
	spn        spnTemplate
	overrides  map[string]spnTemplate // lower-cased host:port or host
	cl         *client.Client
	maxReply   int64 // maxKDCReply (relay.go)
	now        func() time.Time
	log        *slog.Logger

	mu     sync.Mutex
	tgt    *ticket
	svc    map[string]*ticket // by service principal name without the realm
	logins int
}

// spnTemplate is a service principal with "_HOST" still in it.
type spnTemplate struct{ name string } // without the realm

// ticket is a ticket, its session key and its lifetime by the local clock.
type ticket struct {
	tkt        messages.Ticket
	key        types.EncryptionKey
	start, end time.Time // the KDC's
	renewAt    time.Time // local clock: replace from then on
	expireAt   time.Time // local clock: unusable from then on
	retryAt    time.Time // local clock: after a failed replacement, not before
}

var (
	_ yarnclient.Auth      = (*Auth)(nil)
	_ yarnclient.Refresher = (*Auth)(nil)
)

// New reads the keytab and krb5.conf and checks cfg; it does no network
// I/O (the first Authenticate logs in). Errors are *ConfigError.
func New(cfg Config) (*Auth, error) {
	a := &Auth{keytabPath: cfg.Keytab, krb5Path: cfg.Krb5Conf, now: cfg.Now, log: cfg.Logger,
		svc: map[string]*ticket{}, overrides: map[string]spnTemplate{}, maxReply: maxKDCReply}
	if a.krb5Path == "" {
		a.krb5Path = DefaultKrb5Conf
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	var (
		cc  *credentials.CCache
		err error
	)
	if cfg.CCache != "" {
		if cfg.Keytab != "" {
			return nil, configErr("CCache", "give a Keytab or a CCache, not both")
		}
		if cc, err = a.loadCCache(cfg.CCache, cfg.Principal); err != nil {
			return nil, err
		}
		cfg.Principal = cc.DefaultPrincipal.PrincipalName.PrincipalNameString() + "@" + cc.DefaultPrincipal.Realm
	}
	if err := a.loadKrb5Conf(cfg.Principal); err != nil {
		return nil, err
	}
	var kt *keytab.Keytab
	if cc == nil {
		if kt, err = a.loadKeytab(); err != nil {
			return nil, err
		}
	}
	pattern := cfg.ServicePrincipal
	if pattern == "" {
		pattern = DefaultServicePrincipal
	}
	if a.spn, err = a.parseSPN(pattern); err != nil {
		return nil, &ConfigError{Field: "ServicePrincipal", Err: err}
	}
	for host, p := range cfg.ServicePrincipals {
		field := fmt.Sprintf("ServicePrincipals[%s]", host)
		h := strings.ToLower(strings.TrimSpace(host))
		if h == "" || strings.ContainsAny(h, "/@ ") {
			return nil, configErr(field, "%q is not a host or host:port", host)
		}
		if a.overrides[h], err = a.parseSPN(p); err != nil {
			return nil, &ConfigError{Field: field, Err: err}
		}
	}
	if cc == nil {
		a.cl = client.NewWithKeytab(a.cname.PrincipalNameString(), a.realm, kt, a.krb5)
		return a, nil
	}
	return a, a.useCCache(cc)
}

// loadCCache reads a credential cache ("FILE:path" or a path) and checks
// that it is principal's (when one is given).
func (a *Auth) loadCCache(path, principal string) (*credentials.CCache, error) {
	path = strings.TrimPrefix(path, "FILE:")
	if strings.Contains(path, ":") && !strings.HasPrefix(path, "/") {
		return nil, configErr("CCache", "%q: only FILE: credential caches are supported (KRB5CCNAME=FILE:/tmp/krb5cc_<uid>)", path)
	}
	cc, err := credentials.LoadCCache(path)
	if err != nil {
		return nil, &ConfigError{Field: "CCache", Err: noTicketError(fmt.Sprintf("%s: %v (run kinit)", path, err))}
	}
	a.ccachePath = path
	if principal != "" {
		want := strings.TrimSpace(principal)
		got := cc.DefaultPrincipal.PrincipalName.PrincipalNameString()
		if want != got && want != got+"@"+cc.DefaultPrincipal.Realm {
			return nil, configErr("CCache", "%s holds the tickets of %s@%s, not of %s", path, got, cc.DefaultPrincipal.Realm, principal)
		}
	}
	return cc, nil
}

// useCCache takes the cache's TGT, valid until its end by the wall clock
// (measured on a.now from now on).
func (a *Auth) useCCache(cc *credentials.CCache) error {
	cl, err := client.NewFromCCache(cc, a.krb5)
	if err != nil {
		return &ConfigError{Field: "CCache", Err: noTicketError(fmt.Sprintf("%s: %v (run kinit)", a.ccachePath, err))}
	}
	a.cl = cl
	cred, ok := cc.GetEntry(types.PrincipalName{NameType: nametype.KRB_NT_SRV_INST, NameString: []string{"krbtgt", a.realm}})
	if !ok {
		return &ConfigError{Field: "CCache", Err: noTicketError(a.ccachePath + " holds no TGT of realm " + a.realm + " (run kinit)")}
	}
	var tkt messages.Ticket
	if err := tkt.Unmarshal(cred.Ticket); err != nil {
		return configErr("CCache", "%s: the TGT does not decode: %v", a.ccachePath, err)
	}
	left := time.Until(cred.EndTime)
	now := a.now()
	a.tgt = &ticket{tkt: tkt, key: cred.Key, start: cred.StartTime, end: cred.EndTime, renewAt: now.Add(left), expireAt: now.Add(left)}
	return nil
}

// loadKrb5Conf reads krb5.conf and settles the client principal and realm.
func (a *Auth) loadKrb5Conf(principal string) error {
	name, realm, ok := strings.Cut(strings.TrimSpace(principal), "@")
	if name == "" || strings.ContainsAny(name, " \t") || (ok && (realm == "" || strings.Contains(realm, "@"))) ||
		strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
		return configErr("Principal", "%q is not a principal (name[/instance][@REALM])", principal)
	}
	b, err := os.ReadFile(a.krb5Path)
	if err != nil {
		return configErr("Krb5Conf", "%v", err)
	}
	c, err := config.NewFromString(string(b))
	var unsupported config.UnsupportedDirective
	if errors.As(err, &unsupported) && c != nil {
		a.log.Warn("krb5.conf has a directive gokrb5 ignores", "file", a.krb5Path, "err", err)
		err = nil
	}
	if err != nil {
		return configErr("Krb5Conf", "%s: %v", a.krb5Path, err)
	}
	if realm == "" {
		realm = c.LibDefaults.DefaultRealm
	}
	if realm == "" {
		return configErr("Principal", "%q has no @REALM and %s has no default_realm", principal, a.krb5Path)
	}
	if len(kdcsOf(c, realm)) == 0 && !c.LibDefaults.DNSLookupKDC {
		return configErr("Krb5Conf", "%s names no kdc for realm %s under [realms] (and dns_lookup_kdc is off)", a.krb5Path, realm)
	}
	a.krb5, a.realm = c, realm
	a.cname = types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, name)
	a.principal = name + "@" + realm
	return nil
}

// loadKeytab reads the keytab and checks that it holds a key of the
// client principal.
func (a *Auth) loadKeytab() (*keytab.Keytab, error) {
	if a.keytabPath == "" {
		return nil, configErr("Keytab", "required")
	}
	kt, err := keytab.Load(a.keytabPath)
	if err != nil {
		return nil, configErr("Keytab", "%v", err)
	}
	var held []string
	for _, e := range kt.Entries {
		p := e.Principal.String()
		if p == a.principal {
			return kt, nil
		}
		if !slices.Contains(held, p) {
			held = append(held, p)
		}
	}
	return nil, &ConfigError{Field: "Keytab", Err: noKeyError(fmt.Sprintf("%s holds no key of %s (it holds: %s)",
		a.keytabPath, a.principal, strings.Join(held, ", ")))}
}

// parseSPN checks a service principal pattern, service/host[@REALM].
func (a *Auth) parseSPN(s string) (spnTemplate, error) {
	name, realm, hasRealm := strings.Cut(strings.TrimSpace(s), "@")
	svc, host, ok := strings.Cut(name, "/")
	if !ok || svc == "" || host == "" || strings.Contains(host, "/") || strings.ContainsAny(name, " \t") {
		return spnTemplate{}, fmt.Errorf("%q is not a service principal (service/host[@REALM], e.g. HTTP/_HOST@%s)", s, a.realm)
	}
	if hasRealm && realm != a.realm {
		return spnTemplate{}, fmt.Errorf("%q: realm %s is not the client's (%s); cross-realm service principals are not supported", s, realm, a.realm)
	}
	return spnTemplate{name: name}, nil
}

// kdcsOf lists the KDCs krb5.conf names for realm.
func kdcsOf(c *config.Config, realm string) []string {
	for _, r := range c.Realms {
		if r.Realm == realm {
			return r.KDC
		}
	}
	return nil
}

// Principal is the client principal, name@REALM.
func (a *Auth) Principal() string { return a.principal }

// ServicePrincipal is the principal a request to u authenticates to,
// service/host@REALM.
func (a *Auth) ServicePrincipal(u *url.URL) string { return a.spnFor(u) + "@" + a.realm }

// spnFor is the service principal of u without the realm.
func (a *Auth) spnFor(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	t, ok := a.overrides[strings.ToLower(u.Host)]
	if !ok {
		if t, ok = a.overrides[host]; !ok {
			t = a.spn
		}
	}
	return strings.ReplaceAll(t.name, "_HOST", host)
}

// Authenticate sets "Authorization: Negotiate <token>" for the service
// principal of req's host, logging in or getting a service ticket first
// when needed. Errors are *exchangeError.
func (a *Auth) Authenticate(req *http.Request) error {
	spn := a.spnFor(req.URL)
	st, err := a.serviceTicket(spn)
	if err != nil {
		return err
	}
	tok, err := spnego.NewNegTokenInitKRB5(a.cl, st.tkt, st.key)
	if err == nil {
		var b []byte
		if b, err = (&spnego.SPNEGOToken{Init: true, NegTokenInit: tok}).Marshal(); err == nil {
			req.Header.Set("Authorization", "Negotiate "+base64.StdEncoding.EncodeToString(b))
			return nil
		}
	}
	return &exchangeError{Op: "build the SPNEGO token for " + spn + "@" + a.realm, Principal: spn + "@" + a.realm, Kind: ErrExchange, Err: err}
}

// Refresh drops the service ticket for u's server, so that the next
// request gets a fresh one, and names it.
func (a *Auth) Refresh(u *url.URL) string {
	spn := a.spnFor(u)
	a.mu.Lock()
	delete(a.svc, spn)
	a.mu.Unlock()
	return "the Kerberos service ticket for " + spn + "@" + a.realm
}

// serviceTicket returns a fresh enough service ticket for spn, after a
// fresh enough TGT.
func (a *Auth) serviceTicket(spn string) (*ticket, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	tgt, err := a.keep(a.tgt, now, "TGT of "+a.principal, a.login)
	if err != nil {
		return nil, err
	}
	if tgt != a.tgt {
		a.tgt = tgt
		a.logins++
		a.log.Info("kerberos: logged in from the keytab", "principal", a.principal, "login", a.logins,
			"tgt_end", tgt.end, "renew_at", tgt.renewAt)
	}
	st, err := a.keep(a.svc[spn], now, "service ticket for "+spn, func(now time.Time) (*ticket, error) {
		return a.getServiceTicket(spn, now)
	})
	if err != nil {
		return nil, err
	}
	a.svc[spn] = st
	return st, nil
}

// keep returns cur while it is fresh, else a new ticket from get; when get
// fails and cur has not expired, cur is kept for renewRetry more.
func (a *Auth) keep(cur *ticket, now time.Time, what string, get func(time.Time) (*ticket, error)) (*ticket, error) {
	if cur != nil && now.Before(cur.expireAt) && (now.Before(cur.renewAt) || now.Before(cur.retryAt)) {
		return cur, nil
	}
	t, err := get(now)
	if err == nil {
		return t, nil
	}
	if cur != nil && now.Before(cur.expireAt) {
		cur.retryAt = now.Add(renewRetry)
		a.log.Warn("kerberos: renewal failed; using the current ticket until it expires",
			"ticket", what, "expires", cur.expireAt, "retry_at", cur.retryAt, "err", err)
		return cur, nil
	}
	return nil, err
}

// login gets a TGT from the keytab (AS exchange); from a credential cache
// there is none to get: the person must kinit again.
func (a *Auth) login(now time.Time) (*ticket, error) {
	if a.ccachePath != "" {
		end := "has none"
		if a.tgt != nil {
			end = "expired at " + a.tgt.end.UTC().Format(time.RFC3339)
		}
		return nil, &exchangeError{Op: "use the TGT of " + a.principal + " from " + a.ccachePath, Principal: a.principal, Kind: ErrNoTicket,
			Err: fmt.Errorf("the ticket cache %s: run kinit", end)}
	}
	op := "log in as " + a.principal + " from keytab " + a.keytabPath
	req, err := messages.NewASReqForTGT(a.realm, a.krb5, a.cname)
	if err != nil {
		return nil, &exchangeError{Op: op, Principal: a.principal, Kind: ErrExchange, Err: err}
	}
	var rep messages.ASRep
	err = a.viaRelays(func() (err error) {
		rep, err = a.cl.ASExchange(a.realm, req, 0)
		return err
	})
	if err != nil {
		return nil, a.exchangeError(op, a.principal, err)
	}
	return newTicket(rep.Ticket, rep.DecryptedEncPart, now), nil
}

// getServiceTicket gets a ticket for spn with the TGT (TGS exchange).
func (a *Auth) getServiceTicket(spn string, now time.Time) (*ticket, error) {
	full := spn + "@" + a.realm
	sname := types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, spn)
	var rep messages.TGSRep
	err := a.viaRelays(func() (err error) {
		_, rep, err = a.cl.TGSREQGenerateAndExchange(sname, a.realm, a.tgt.tkt, a.tgt.key, false)
		return err
	})
	if err != nil {
		return nil, a.exchangeError("get a service ticket for "+full+" as "+a.principal, full, err)
	}
	return newTicket(rep.Ticket, rep.DecryptedEncPart, now), nil
}

func newTicket(tkt messages.Ticket, enc messages.EncKDCRepPart, now time.Time) *ticket {
	start := enc.StartTime
	if start.IsZero() {
		start = enc.AuthTime
	}
	life := enc.EndTime.Sub(start)
	return &ticket{tkt: tkt, key: enc.Key, start: start, end: enc.EndTime,
		renewAt: now.Add(time.Duration(float64(life) * renewFraction)), expireAt: now.Add(life)}
}

// status is what an Auth holds, for `colocd yarn info`.
type status struct {
	Principal string
	Keytab    string
	Krb5Conf  string
	// LoggedIn: a TGT is held; its times are the KDC's.
	LoggedIn           bool
	TGTStart, TGTEnd   time.Time
	RenewAt, ExpiresAt time.Time // by the clock of Config.Now
	// Logins counts the TGTs obtained: the first login and each renewal.
	Logins int
	// ServiceTickets lists the held service tickets' principals, sorted.
	ServiceTickets []string
}

// Status reports the principal, the TGT and the service tickets held.
func (a *Auth) Status() status {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := status{Principal: a.principal, Keytab: a.keytabPath, Krb5Conf: a.krb5Path, Logins: a.logins}
	if a.tgt != nil {
		s.LoggedIn = true
		s.TGTStart, s.TGTEnd, s.RenewAt, s.ExpiresAt = a.tgt.start, a.tgt.end, a.tgt.renewAt, a.tgt.expireAt
	}
	for spn := range a.svc {
		s.ServiceTickets = append(s.ServiceTickets, spn+"@"+a.realm)
	}
	slices.Sort(s.ServiceTickets)
	return s
}
