package api

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/colocd/colocd/internal/authtolocal"
)

// Kerberos is the API's SPNEGO acceptor (api.auth kerberos or both): the
// service's own keytab, the service principals it accepts tickets for,
// and how a client principal becomes a user.
type Kerberos struct {
	// Keytab holds the keys of the service principals (HTTP/<host>@REALM).
	Keytab *keytab.Keytab
	// Principals are the service principals accepted, name/host@REALM
	// (Hadoop's hadoop.http.authentication.kerberos.principal, _HOST
	// resolved); empty: any principal the keytab holds ("*").
	Principals []string
	// AuthToLocal maps a client principal to its user; nil: DEFAULT for
	// the realm of the first principal (or of the keytab's first entry).
	AuthToLocal *authtolocal.Rules
}

// LoadKerberos reads keytabPath and checks that it holds every principal
// of pattern ("*": any; else a comma-separated list, "_HOST" replaced by
// host, lower-cased; a principal without "@REALM" takes the keytab's
// realm) and parses rules.
func LoadKerberos(keytabPath, pattern, host string, rules []string) (*Kerberos, error) {
	kt, err := keytab.Load(keytabPath)
	if err != nil {
		return nil, fmt.Errorf("%w: keytab: %v", errConfig, err)
	}
	if len(kt.Entries) == 0 {
		return nil, fmt.Errorf("%w: keytab %s holds no key", errConfig, keytabPath)
	}
	var held []string
	for _, e := range kt.Entries {
		if p := e.Principal.String(); !slices.Contains(held, p) {
			held = append(held, p)
		}
	}
	realm := kt.Entries[0].Principal.Realm
	k := &Kerberos{Keytab: kt}
	if strings.TrimSpace(pattern) != "*" {
		for p := range strings.SplitSeq(pattern, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			p = strings.ReplaceAll(p, "_HOST", strings.ToLower(host))
			if !strings.Contains(p, "@") {
				p += "@" + realm
			}
			if !slices.Contains(held, p) {
				return nil, fmt.Errorf("%w: principal: keytab %s holds no key of %s (it holds: %s)", errConfig, keytabPath, p, strings.Join(held, ", "))
			}
			k.Principals = append(k.Principals, p)
		}
		if len(k.Principals) == 0 {
			return nil, fmt.Errorf("%w: principal: empty (want HTTP/_HOST, a list, or *)", errConfig)
		}
		_, realm, _ = strings.Cut(k.Principals[0], "@")
	}
	if k.AuthToLocal, err = authtolocal.Parse(rules, realm); err != nil {
		return nil, fmt.Errorf("%w: auth_to_local: %w", errConfig, err)
	}
	return k, nil
}

// errNegotiate is wrapped by every refusal of a Negotiate token.
var errNegotiate = errors.New("Kerberos (SPNEGO) authentication failed")

// accept verifies a Negotiate token from remote: an SPNEGO NegTokenInit
// with a Kerberos AP-REQ, or a bare Kerberos GSS token (what MIT's GSS-API
// sends when asked for the Kerberos mechanism, as Python's
// requests-kerberos does). It returns the client principal and the
// response token for "WWW-Authenticate: Negotiate": the AP-REP that lets
// the client authenticate the server (mutual authentication), wrapped as
// the request was.
func (k *Kerberos) accept(token, remote string) (client string, reply string, err error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(token))
	if err != nil || len(b) == 0 {
		return "", "", fmt.Errorf("%w: the Negotiate token is not base64", errNegotiate)
	}
	var (
		k5      spnego.KRB5Token
		wrapped bool
		mech    asn1.ObjectIdentifier
	)
	var st spnego.SPNEGOToken
	if st.Unmarshal(b) == nil {
		if !st.Init || len(st.NegTokenInit.MechTokenBytes) == 0 {
			return "", "", fmt.Errorf("%w: the SPNEGO token carries no Kerberos AP-REQ", errNegotiate)
		}
		wrapped = true
		if len(st.NegTokenInit.MechTypes) > 0 {
			mech = st.NegTokenInit.MechTypes[0]
		}
		b = st.NegTokenInit.MechTokenBytes
	}
	if err := k5.Unmarshal(b); err != nil || !k5.IsAPReq() {
		return "", "", fmt.Errorf("%w: not a Kerberos AP-REQ (only the Kerberos mechanism is supported)", errNegotiate)
	}
	if mech == nil {
		mech = k5.OID
	}
	opts := []func(*service.Settings){service.DecodePAC(false)}
	if host, _, err := net.SplitHostPort(remote); err == nil {
		if ha, err := types.GetHostAddress(net.JoinHostPort(host, "0")); err == nil {
			opts = append(opts, service.ClientAddress(ha))
		}
	}
	req := k5.APReq
	ok, creds, err := service.VerifyAPREQ(&req, service.NewSettings(k.Keytab, opts...))
	if err != nil || !ok {
		return "", "", fmt.Errorf("%w: %v", errNegotiate, krbReason(err))
	}
	sname := req.Ticket.SName.PrincipalNameString() + "@" + req.Ticket.Realm
	if len(k.Principals) > 0 && !slices.Contains(k.Principals, sname) {
		return "", "", fmt.Errorf("%w: the ticket is for %s, not for %s (api.kerberos.principal)", errNegotiate, sname, strings.Join(k.Principals, ", "))
	}
	client = creds.CName().PrincipalNameString() + "@" + creds.Domain()
	rep, err := apRepToken(req, wrapped, mech)
	if err != nil {
		return "", "", fmt.Errorf("%w: building the reply: %v", errNegotiate, err)
	}
	return client, rep, nil
}

// krbReason is what a refused AP-REQ says, without gokrb5's wrapping.
func krbReason(err error) string {
	if err == nil {
		return "the ticket did not verify"
	}
	var ke messages.KRBError
	if errors.As(err, &ke) {
		return ke.Error()
	}
	return err.Error()
}

// apRepToken is the server's half of mutual authentication (RFC 4120
// §3.2.4, RFC 4121 §4.1): a KRB_AP_REP whose encrypted part repeats the
// authenticator's time, under the ticket's session key; as a Kerberos GSS
// token, inside an SPNEGO NegTokenResp (accept-completed) when the request
// came wrapped so. gokrb5 v8.4.4 does not marshal one.
func apRepToken(req messages.APReq, wrapped bool, mech asn1.ObjectIdentifier) (string, error) {
	part := messages.EncAPRepPart{CTime: req.Authenticator.CTime.UTC(), Cusec: req.Authenticator.Cusec,
		SequenceNumber: req.Authenticator.SeqNumber}
	pb, err := asn1.Marshal(part)
	if err != nil {
		return "", err
	}
	pb = asn1tools.AddASNAppTag(pb, asnAppTag.EncAPRepPart)
	enc, err := crypto.GetEncryptedData(pb, req.Ticket.DecryptedEncPart.Key, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return "", err
	}
	rb, err := asn1.Marshal(messages.APRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: enc})
	if err != nil {
		return "", err
	}
	rb = asn1tools.AddASNAppTag(rb, asnAppTag.APREP)
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return "", err
	}
	tok := asn1tools.AddASNAppTag(append(append(oid, 0x02, 0x00), rb...), 0)
	if !wrapped {
		return base64.StdEncoding.EncodeToString(tok), nil
	}
	resp := spnego.NegTokenResp{NegState: asn1.Enumerated(spnego.NegStateAcceptCompleted), SupportedMech: mech, ResponseToken: tok}
	out, err := resp.Marshal()
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(out), nil
}

// Hostname is the host name _HOST stands for: os.Hostname, lower-cased.
func Hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return strings.ToLower(h)
}
