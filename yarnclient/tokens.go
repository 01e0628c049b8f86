package yarnclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Delegation tokens. A token travels between Hadoop's web services as
// Token.encodeToUrlString writes it: the URL-safe base64, without padding,
// of the Token writable (vint-prefixed identifier and password, then the
// kind and the service as Text). The RM's Cluster Delegation Tokens API
// answers {"token": <that>} and WebHDFS's GETDELEGATIONTOKEN answers
// {"Token":{"urlString": <that>}}; a submission's
// am-container-spec.credentials.tokens takes it back in the same form (the
// RM reads each value with Token.decodeFromUrlString), so a token goes
// from one to the other unchanged.

// PathDelegationToken is the RM's Cluster Delegation Tokens API:
// POST creates a token, DELETE cancels one.
const PathDelegationToken = "/ws/v1/cluster/delegation-token"

// Token kinds (a Token's Text kind).
const (
	KindRMDelegation      = "RM_DELEGATION_TOKEN"   // RMDelegationTokenIdentifier.KIND_NAME
	KindHDFSDelegation    = "HDFS_DELEGATION_TOKEN" // what an HDFS client selects over RPC
	KindWebHDFSDelegation = "WEBHDFS delegation"    // WebHDFS's default kind over http
)

// Token is Hadoop's org.apache.hadoop.security.token.Token. Its password
// is a MAC of the identifier only: the kind and the service are labels a
// client may change (Token.setKind, setService) without invalidating it.
type Token struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// maxTokenBytes bounds a decoded token; real ones are a few hundred bytes.
const maxTokenBytes = 64 << 10

// ParseToken decodes a token as Token.decodeFromUrlString does: base64
// (URL-safe or standard alphabet, padding optional) of the Token writable.
// Unlike Hadoop it refuses bytes after the writable.
func ParseToken(s string) (Token, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	s = strings.NewReplacer("+", "-", "/", "_").Replace(s)
	if s == "" {
		return Token{}, errors.New("empty token")
	}
	if len(s) > maxTokenBytes*4/3+4 {
		return Token{}, fmt.Errorf("token of %d characters is too long", len(s))
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Token{}, fmt.Errorf("token is not base64: %w", err)
	}
	r := &wreader{b: raw}
	t := Token{Identifier: r.bytes(), Password: r.bytes(), Kind: r.text(), Service: r.text()}
	if err := r.end(); err != nil {
		return Token{}, fmt.Errorf("token: %w", err)
	}
	return t, nil
}

// Encode writes the token as Token.encodeToUrlString does.
func (t Token) Encode() string {
	var w wwriter
	w.bytes(t.Identifier)
	w.bytes(t.Password)
	w.text(t.Kind)
	w.text(t.Service)
	return base64.RawURLEncoding.EncodeToString(w.b.Bytes())
}

// TokenIdentifier is a delegation token's identifier as Hadoop's
// AbstractDelegationTokenIdentifier writes it (version 0): the HDFS
// delegation token's, and the RM's in the documented example. YARN may
// write its identifiers as protobuf instead; ParseTokenIdentifier refuses
// those, and colocd never needs to read one: it passes tokens on.
type TokenIdentifier struct {
	Owner, Renewer, RealUser string
	IssueDate, MaxDate       int64 // ms since the epoch
	SequenceNumber           int32
	MasterKeyID              int32
}

// ParseTokenIdentifier decodes a Token's Identifier.
func ParseTokenIdentifier(b []byte) (TokenIdentifier, error) {
	r := &wreader{b: b}
	if v := r.byte(); r.err == nil && v != 0 {
		return TokenIdentifier{}, fmt.Errorf("token identifier: unknown version %d", v)
	}
	id := TokenIdentifier{Owner: r.text(), Renewer: r.text(), RealUser: r.text(),
		IssueDate: r.vlong(), MaxDate: r.vlong(), SequenceNumber: r.vint(), MasterKeyID: r.vint()}
	if err := r.end(); err != nil {
		return TokenIdentifier{}, fmt.Errorf("token identifier: %w", err)
	}
	return id, nil
}

// Marshal writes the identifier as AbstractDelegationTokenIdentifier.write.
func (id TokenIdentifier) Marshal() []byte {
	var w wwriter
	w.b.WriteByte(0)
	w.text(id.Owner)
	w.text(id.Renewer)
	w.text(id.RealUser)
	w.vlong(id.IssueDate)
	w.vlong(id.MaxDate)
	w.vlong(int64(id.SequenceNumber))
	w.vlong(int64(id.MasterKeyID))
	return w.b.Bytes()
}

// wreader reads Hadoop writables; the first error sticks.
type wreader struct {
	b   []byte
	err error
}

func (r *wreader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *wreader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// vlong is WritableUtils.readVLong.
func (r *wreader) vlong() int64 {
	first := int8(r.byte())
	if r.err != nil || first >= -112 {
		return int64(first)
	}
	n := int(-111 - int(first)) // WritableUtils.decodeVIntSize, the first byte included
	if first < -120 {
		n = int(-119 - int(first))
	}
	var v int64
	for range n - 1 {
		v = v<<8 | int64(r.byte())
	}
	if first < -120 {
		v = ^v // WritableUtils.isNegativeVInt
	}
	return v
}

// vint is WritableUtils.readVInt.
func (r *wreader) vint() int32 {
	v := r.vlong()
	if v > 1<<31-1 || v < -1<<31 {
		r.fail("value %d too long to fit in an integer", v)
		return 0
	}
	return int32(v)
}

// bytes reads a vint length and that many bytes.
func (r *wreader) bytes() []byte {
	n := r.vint()
	if r.err != nil {
		return nil
	}
	if n < 0 || int(n) > len(r.b) {
		r.fail("length %d with %d bytes left", n, len(r.b))
		return nil
	}
	out := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return out
}

// text reads a Text: a vint length and UTF-8.
func (r *wreader) text() string { return string(r.bytes()) }

func (r *wreader) end() error {
	if r.err == nil && len(r.b) > 0 {
		r.fail("%d bytes after the end", len(r.b))
	}
	return r.err
}

// wwriter writes Hadoop writables.
type wwriter struct{ b bytes.Buffer }

// vlong is WritableUtils.writeVLong.
func (w *wwriter) vlong(i int64) {
	if i >= -112 && i <= 127 {
		w.b.WriteByte(byte(int8(i)))
		return
	}
	n := -112
	if i < 0 {
		i = ^i
		n = -120
	}
	for tmp := i; tmp != 0; tmp >>= 8 {
		n--
	}
	w.b.WriteByte(byte(int8(n)))
	size := -(n + 112)
	if n < -120 {
		size = -(n + 120)
	}
	for idx := size; idx != 0; idx-- {
		w.b.WriteByte(byte(i >> ((idx - 1) * 8)))
	}
}

func (w *wwriter) bytes(b []byte) {
	w.vlong(int64(len(b)))
	w.b.Write(b)
}

func (w *wwriter) text(s string) { w.bytes([]byte(s)) }

// DelegationToken is the answer of the RM's POST
// /ws/v1/cluster/delegation-token (ResourceManagerRest.md, "Cluster
// Delegation Tokens API"). Token is the token as Token.Encode writes it;
// ExpirationTime is when it expires unless renewed, MaxValidity when it
// expires whatever the renewals (ms since the epoch). Owner is the
// principal it was issued to (with As: the user).
type DelegationToken struct {
	Token          string `json:"token"`
	Renewer        string `json:"renewer"`
	Owner          string `json:"owner"`
	Kind           string `json:"kind"`
	ExpirationTime int64  `json:"expiration-time"`
	MaxValidity    int64  `json:"max-validity"`
}

// RMDelegationToken asks the RM for a delegation token that renewer may
// renew: POST /ws/v1/cluster/delegation-token {"renewer": renewer}. The RM
// issues tokens only over Kerberos (SPNEGO); over simple auth it answers
// 403 (ErrForbidden). With As(user) the token is user's (doAs). Never
// retried (a write, if a harmless one).
func (c *Client) RMDelegationToken(ctx context.Context, renewer string, opts ...CallOption) (DelegationToken, error) {
	if strings.TrimSpace(renewer) == "" {
		return DelegationToken{}, fmt.Errorf("%w: renewer: empty", ErrInvalid)
	}
	o, err := applyCallOptions(opts)
	if err != nil {
		return DelegationToken{}, err
	}
	body, err := json.Marshal(map[string]string{"renewer": renewer})
	if err != nil {
		return DelegationToken{}, err
	}
	resp, err := c.rmCall(ctx, request{method: http.MethodPost, path: PathDelegationToken, body: body, ok: status200, as: o.as})
	if err != nil {
		return DelegationToken{}, err
	}
	dt, err := decodeWith(resp, decodeDelegationToken)
	return dt, redactToken(err)
}

// redactToken drops the body from a *decodeError of an answer that may
// hold a token, so that no credential reaches a log.
func redactToken(err error) error {
	var de *decodeError
	if errors.As(err, &de) {
		de.Snippet = "(not shown: it may hold a token)"
	}
	return err
}

// decodeDelegationToken reads the delegation-token object; the token must
// be one ParseToken reads.
func decodeDelegationToken(b []byte) (DelegationToken, error) {
	var w struct {
		Token          string  `json:"token"`
		Renewer        string  `json:"renewer"`
		Owner          string  `json:"owner"`
		Kind           string  `json:"kind"`
		ExpirationTime flexInt `json:"expiration-time"`
		MaxValidity    flexInt `json:"max-validity"`
	}
	if err := unmarshalObject(b, &w); err != nil {
		return DelegationToken{}, err
	}
	if w.Token == "" {
		return DelegationToken{}, errors.New(`missing "token"`)
	}
	if _, err := ParseToken(w.Token); err != nil {
		return DelegationToken{}, err
	}
	return DelegationToken{Token: w.Token, Renewer: w.Renewer, Owner: w.Owner, Kind: w.Kind,
		ExpirationTime: int64(w.ExpirationTime), MaxValidity: int64(w.MaxValidity)}, nil
}
