package api

import (
	"fmt"
	"net/http"
)

// WithIdentity returns a handler that serves as h (a handler New returned)
// with d's authentication and authorisation settings — Auth, Tokens,
// Kerberos, ClientCerts, Groups, ACLs, ProxyUsers, JobGroups, ForwardKey,
// WallNow — and nothing else of d: a reload of tokens or ACLs. What h holds
// between requests, its gate on new kinds, is shared with the new handler,
// so a submission in flight across the swap is counted once. h keeps
// serving as it was.
func WithIdentity(h http.Handler, d Deps) (http.Handler, error) {
	o, ok := h.(*observed)
	if !ok {
		return nil, fmt.Errorf("%w: WithIdentity: %T is not a handler of New", errConfig, h)
	}
	auth, err := newAuthn(d)
	if err != nil {
		return nil, err
	}
	s := *o.s // the same store, engine, kinds gate…; a new identity
	s.auth = auth
	return &observed{s: &s, mux: s.mux(o.s.metrics, o.s.publicMetrics)}, nil
}
