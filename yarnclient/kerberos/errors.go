package kerberos

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jcmturner/gokrb5/v8/krberror"

	"github.com/colocd/colocd/yarnclient"
)

// Sentinel errors. Test with errors.Is; *exchangeError and *ConfigError match the
// ones that describe them.
var (
	// ErrExchange: an exchange with the KDC failed (*exchangeError); the four
	// errors below say why, when it is known.
	ErrExchange = errors.New("kerberos: exchange with the KDC failed")
	// ErrKeytab: the keytab does not hold the principal, or not its
	// current key (key version or encryption type): the KDC refused the
	// pre-authentication (KDC_ERR_PREAUTH_FAILED), or its reply could not
	// be decrypted.
	ErrKeytab = errors.New("kerberos: wrong keytab")
	// ErrClockSkew: the local clock and the KDC's disagree by more than
	// the allowed skew (KRB_AP_ERR_SKEW from the KDC, or its reply checked
	// here).
	ErrClockSkew = errors.New("kerberos: clock skew")
	// ErrNoSuchPrincipal: the KDC does not know the client principal
	// (KDC_ERR_C_PRINCIPAL_UNKNOWN) or a server's service principal
	// (KDC_ERR_S_PRINCIPAL_UNKNOWN); exchangeError.Principal names it.
	ErrNoSuchPrincipal = errors.New("kerberos: no such principal")
	// ErrKDCUnreachable: no KDC of the realm answered; exchangeError.KDCs names
	// those krb5.conf lists.
	ErrKDCUnreachable = errors.New("kerberos: KDC unreachable")
	// ErrReplyTooLarge: a KDC's reply declared more bytes than the cap on
	// a reply (relay.go); nothing of it was read.
	ErrReplyTooLarge = errors.New("kerberos: KDC reply over its size cap")
	// ErrNoTicket: a credential cache (Config.CCache) that cannot be read,
	// holds no TGT, or whose TGT expired: the person must run kinit.
	ErrNoTicket = errors.New("kerberos: no valid ticket in the credential cache")
)

// ConfigError is a Config that cannot work, found without the network:
// Field names the field (Principal, Keytab, Krb5Conf, ServicePrincipal,
// ServicePrincipals[host]). It matches yarnclient.ErrInvalid, and
// ErrKeytab when the keytab holds no key of the principal.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("kerberos: %s: %v", e.Field, e.Err) }

func (e *ConfigError) Unwrap() []error { return []error{yarnclient.ErrInvalid, e.Err} }

func configErr(field string, format string, args ...any) error {
	return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
}

// noTicketError is an unusable credential cache; it matches ErrNoTicket.
type noTicketError string

func (e noTicketError) Error() string { return string(e) }

func (e noTicketError) Is(target error) bool { return target == ErrNoTicket }

// noKeyError is a keytab without a key of the principal; it matches
// ErrKeytab.
type noKeyError string

func (e noKeyError) Error() string { return string(e) }

func (e noKeyError) Is(target error) bool { return target == ErrKeytab }

// exchangeError is a failed exchange with the KDC: a login from the keytab or a
// service ticket. It matches ErrExchange and its Kind: ErrKeytab,
// ErrClockSkew, ErrNoSuchPrincipal, ErrKDCUnreachable or ErrReplyTooLarge
// (Kind is ErrExchange itself for anything else).
type exchangeError struct {
	Op string // e.g. "log in as colocd@EXAMPLE.COM from keytab /etc/colocd.keytab"
	// Principal is the principal concerned: the client's for a login, the
	// server's for a service ticket.
	Principal string
	// KDCs are the KDCs krb5.conf names for the realm (set when none
	// answered).
	KDCs     []string
	Krb5Conf string // set with KDCs
	// Code is the KDC's KRB-ERROR code (e.g. 6, KDC_ERR_C_PRINCIPAL_UNKNOWN);
	// 0 when the KDC sent none.
	Code int32
	Kind error
	Err  error // gokrb5's error
}

func (e *exchangeError) Error() string {
	var what string
	switch e.Kind {
	case ErrKeytab:
		what = "wrong keytab: it does not hold the principal's current key (key version or encryption type); export it again (kadmin ktadd -norandkey)"
	case ErrClockSkew:
		what = "clock skew: this host's clock and the KDC's differ by more than the allowed skew (5 minutes by default); synchronise them (NTP)"
	case ErrNoSuchPrincipal:
		whose := "the server's service principal "
		if e.Code == krbErrCPrincipalUnknown {
			whose = "the client principal "
		}
		what = "no such principal: the KDC does not know " + whose + e.Principal
	case ErrKDCUnreachable:
		what = fmt.Sprintf("KDC unreachable: no KDC answered (%s, from %s)", strings.Join(e.KDCs, ", "), e.Krb5Conf)
	case ErrReplyTooLarge:
		what = "KDC reply too large"
	case ErrNoTicket:
		what = "no valid ticket"
	default:
		what = "kerberos error"
	}
	return fmt.Sprintf("kerberos: %s: %s: %v", e.Op, what, e.Err)
}

// Is matches ErrExchange and e.Kind.
func (e *exchangeError) Is(target error) bool { return target == ErrExchange || target == e.Kind }

func (e *exchangeError) Unwrap() error { return e.Err }

// KRB-ERROR codes (RFC 4120 section 7.5.9) that name what is wrong.
const (
	krbErrCPrincipalUnknown int32 = 6  // KDC_ERR_C_PRINCIPAL_UNKNOWN
	krbErrSPrincipalUnknown int32 = 7  // KDC_ERR_S_PRINCIPAL_UNKNOWN
	krbErrNeverValid        int32 = 11 // KDC_ERR_NEVER_VALID: start time after end time
	krbErrETypeNoSupp       int32 = 14 // KDC_ERR_ETYPE_NOSUPP: no key of an enctype the KDC accepts
	krbErrPreauthFailed     int32 = 24 // KDC_ERR_PREAUTH_FAILED: the timestamp was not encrypted with the current key
	krbErrTktNYV            int32 = 33 // KRB_AP_ERR_TKT_NYV: ticket not yet valid
	krbErrSkew              int32 = 37 // KRB_AP_ERR_SKEW
	krbErrBadKeyVer         int32 = 44 // KRB_AP_ERR_BADKEYVER
)

// exchangeError classifies an error of gokrb5's AS or TGS exchange. gokrb5
// flattens the KDC's KRB-ERROR into its message ("KRB Error: (24)
// KDC_ERR_PREAUTH_FAILED ..."), so the code is read from there.
func (a *Auth) exchangeError(op, principal string, err error) error {
	e := &exchangeError{Op: op, Principal: principal, Kind: ErrExchange, Err: err}
	if errors.Is(err, ErrReplyTooLarge) {
		e.Kind = ErrReplyTooLarge
		return e
	}
	msg := err.Error()
	if code, ok := krbErrorCode(msg); ok {
		e.Code = code
		switch code {
		case krbErrCPrincipalUnknown:
			e.Kind, e.Principal = ErrNoSuchPrincipal, a.principal
		case krbErrSPrincipalUnknown:
			e.Kind = ErrNoSuchPrincipal
		case krbErrPreauthFailed, krbErrETypeNoSupp, krbErrBadKeyVer:
			e.Kind = ErrKeytab
		case krbErrSkew, krbErrTktNYV, krbErrNeverValid:
			e.Kind = ErrClockSkew
		}
		return e
	}
	var kerr krberror.Krberror
	switch {
	case errors.As(err, &kerr) && kerr.RootCause == krberror.NetworkingError:
		e.Kind, e.KDCs, e.Krb5Conf = ErrKDCUnreachable, kdcsOf(a.krb5, a.realm), a.krb5Path
		if len(e.KDCs) == 0 {
			e.KDCs = []string{"DNS SRV records of " + a.realm}
		}
	case strings.Contains(msg, "clock skew with KDC too large"):
		e.Kind = ErrClockSkew // the KDC answered, with a time too far from ours
	case strings.Contains(msg, "matching key not found in keytab"),
		errors.As(err, &kerr) && kerr.RootCause == krberror.DecryptingError:
		e.Kind = ErrKeytab // no key, or the wrong one, to decrypt the KDC's reply
	}
	return e
}

// krbErrorCode finds "KRB Error: (N)" in a gokrb5 error message.
func krbErrorCode(msg string) (int32, bool) {
	const marker = "KRB Error: ("
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return 0, false
	}
	digits, _, ok := strings.Cut(msg[i+len(marker):], ")")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}
