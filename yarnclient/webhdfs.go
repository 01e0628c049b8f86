package yarnclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// PathWebHDFS is the WebHDFS REST API's root (WebHDFS.md); a delegation
// token is asked of it: GET /webhdfs/v1/?op=GETDELEGATIONTOKEN.
const PathWebHDFS = "/webhdfs/v1/"

// HDFSTokenRequest asks the NameNodes of one HDFS namespace for a
// delegation token.
type HDFSTokenRequest struct {
	// NameNodes are the NameNodes' web addresses, e.g.
	// "http://nn1.example.com:9870" (HA: every NameNode of the namespace,
	// tried in order: a standby answers StandbyException, and the next
	// one is asked).
	NameNodes []string
	// Renewer is who may renew the token (renewer=): the RM's principal's
	// short name, so that the RM renews it while the application runs.
	Renewer string
	// Kind is the kind asked for (kind=); "" is KindHDFSDelegation, the
	// kind an application's HDFS client selects over RPC (the NameNode's
	// own default over http is KindWebHDFSDelegation).
	Kind string
	// Service is the token's service (service=): what an HDFS client
	// matches it against, the NameNode's RPC address ip:port or, for an HA
	// namespace, its logical name ("ha-hdfs:<nameservice>"). "": the
	// NameNode's choice (its RPC address).
	Service string
}

// HDFSDelegationToken asks the NameNodes for a delegation token: GET
// <NameNode>/webhdfs/v1/?op=GETDELEGATIONTOKEN&renewer=..&kind=..[&service=..]
// (WebHDFS.md, "Get Delegation Token"); with As(user), doas=user (simple
// auth: user.name=user), so that the token is user's. Should a NameNode
// ignore kind or service (an older one), its token is relabelled here, as
// Hadoop's own clients relabel tokens (Token.setKind, setService): the
// password does not cover them. A NameNode with security off issues none ({"Token":null}):
// ErrNoToken. A standby or unreachable NameNode sends the request to the
// next one; when none answers, the error matches errUnavailable. It is a
// GET and retried like one.
func (c *Client) HDFSDelegationToken(ctx context.Context, req HDFSTokenRequest, opts ...CallOption) (Token, error) {
	o, err := applyCallOptions(opts)
	if err != nil {
		return Token{}, err
	}
	if len(req.NameNodes) == 0 {
		return Token{}, fmt.Errorf("%w: NameNodes: none", ErrInvalid)
	}
	if strings.TrimSpace(req.Renewer) == "" {
		return Token{}, fmt.Errorf("%w: Renewer: empty", ErrInvalid)
	}
	bases := make([]*url.URL, len(req.NameNodes))
	for i, s := range req.NameNodes {
		if bases[i], err = parseRMURL(s); err != nil {
			return Token{}, fmt.Errorf("%w: NameNodes[%d]: %v", ErrInvalid, i, err)
		}
	}
	kind := req.Kind
	if kind == "" {
		kind = KindHDFSDelegation
	}
	q := url.Values{"op": {"GETDELEGATIONTOKEN"}, "renewer": {req.Renewer}, "kind": {kind}}
	if req.Service != "" {
		q.Set("service", req.Service)
	}
	r := request{method: http.MethodGet, path: PathWebHDFS, query: q, idempotent: true, ok: status200,
		as: o.as, doAsParam: doAsWebHDFS}
	resp, err := c.withRetries(ctx, r, func(ctx context.Context) (*response, error) { return c.tryNameNodes(ctx, bases, r) })
	if err != nil {
		return Token{}, err
	}
	if !r.ok(resp.status) {
		return Token{}, remoteError(resp)
	}
	s, err := decodeWith(resp, decodeWebHDFSToken)
	if err != nil {
		return Token{}, redactToken(err)
	}
	if s == "" {
		return Token{}, fmt.Errorf("yarnclient: GET %s: %w", resp.url, ErrNoToken)
	}
	t, err := ParseToken(s)
	if err != nil {
		return Token{}, redactToken(&decodeError{StatusCode: resp.status, ContentType: resp.header.Get("Content-Type"),
			Method: resp.method, URL: resp.url, Err: err})
	}
	t.Kind = kind
	if req.Service != "" {
		t.Service = req.Service
	}
	return t, nil
}

// tryNameNodes sends r to each NameNode in turn until one answers other
// than as a standby; the unreachable and standby ones are the causes of
// the error when none does.
func (c *Client) tryNameNodes(ctx context.Context, bases []*url.URL, r request) (*response, error) {
	var causes []error
	for _, base := range bases {
		resp, err := c.send(ctx, base, r)
		var cause error
		if err != nil {
			var te *transportError
			if ctx.Err() != nil || !errors.As(err, &te) {
				return nil, err
			}
			cause = te.err
		} else if standby, why := standbyNameNode(resp); standby {
			cause = errors.New(why)
		} else {
			return resp, nil
		}
		if len(bases) > 1 {
			cause = fmt.Errorf("%s: %w", base, cause)
		}
		causes = append(causes, cause)
	}
	ue := &unavailableError{method: r.method, url: r.path, what: "namenode", causes: causes}
	if len(bases) == 1 {
		ue.url = bases[0].String() + r.path
	}
	return nil, ue
}

// standbyNameNode recognises a NameNode that cannot serve the request now:
// a standby (StandbyException, "Operation category WRITE is not supported
// in state standby"), or one that asks to be retried (RetriableException,
// e.g. in safe mode at start-up). WebHDFS answers both as 403 with a
// RemoteException, like any IOException.
func standbyNameNode(resp *response) (bool, string) {
	if resp.status != http.StatusForbidden {
		return false, ""
	}
	exc, cls, msg, ok := decodeRemoteException(resp.body)
	if !ok {
		return false, ""
	}
	switch {
	case exc == "StandbyException" || cls == "org.apache.hadoop.ipc.StandbyException",
		exc == "RetriableException" || cls == "org.apache.hadoop.ipc.RetriableException":
		return true, exc + ": " + truncate(msg, 200)
	}
	return false, ""
}

// decodeWebHDFSToken reads WebHDFS's Token JSON object,
// {"Token":{"urlString":"..."}}; {"Token":null} (a NameNode with security
// off) is "".
func decodeWebHDFSToken(b []byte) (string, error) {
	var env struct {
		Token *struct {
			URLString *string `json:"urlString"`
		} `json:"Token"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return "", err
	}
	if !hasKey(b, "Token") {
		return "", errors.New(`missing "Token"`)
	}
	if env.Token == nil {
		return "", nil
	}
	if env.Token.URLString == nil || *env.Token.URLString == "" {
		return "", errors.New(`missing "urlString"`)
	}
	return *env.Token.URLString, nil
}
