// Package kerberos is colocd's Kerberos (SPNEGO) authentication to YARN's
// web services: an Auth that plugs into yarnclient.Config.Auth, built on
// github.com/jcmturner/gokrb5/v8. It lives apart from yarnclient so that
// yarnclient, and the Telegraf plugin built on it, stay standard library
// only.
//
// # What it owns
//
//   - Logging in from a keytab (an AS exchange: the TGT), or taking the TGT
//     of a person's credential cache (Config.CCache: what kinit wrote; the
//     colocd CLI's Kerberos, against colocd's own API), and getting a
//     service ticket per server principal (a TGS exchange), cached, then
//     "Authorization: Negotiate <SPNEGO NegTokenInit>" on each request to
//     an RM, a NodeManager or the Timeline Server.
//   - The server principals: Hadoop's HTTP/_HOST pattern, _HOST replaced by
//     each URL's host name (lower-cased), so each RM of an HA pair and each
//     NodeManager has its own; overrides per host:port or host for servers
//     reached by another name (an IP address, two RMs on one host).
//   - Renewal: a ticket is replaced once 80 % of its lifetime has passed by
//     an injected clock — the TGT by logging in from the keytab again, as
//     Hadoop's UserGroupInformation does; when that fails while the old
//     ticket is still valid, the old one is used (and logged). Refresh drops
//     a server's service ticket after a 401, so that yarnclient retries once
//     with a fresh one.
//   - Errors: a config that cannot work is a *ConfigError naming the field
//     (matching yarnclient.ErrInvalid), found without the network; a failed
//     exchange with the KDC is an *exchangeError matching ErrExchange and one of
//     ErrKeytab, ErrClockSkew, ErrNoSuchPrincipal (naming the client or the
//     service principal), ErrKDCUnreachable (naming the KDCs of
//     krb5.conf) and ErrReplyTooLarge;
//   - the cap on a KDC's reply: every exchange goes through loopback
//     relays that refuse a reply over 1 MiB, because gokrb5 allocates
//     whatever length a reply declares (relay.go).
//
// # What it must not do
//
// It starts no goroutine that outlives an exchange: every exchange with
// the KDC happens inside Authenticate, one at a time, its relays' goroutines
// ending with it (gokrb5's client.Login, which starts an auto-renewal
// goroutine, is not used). It does no network I/O in New. It
// holds no global state. Cross-realm service principals are not
// supported, nor authenticating with a delegation token (acting for
// another user, doAs, is yarnclient.As: this Auth authenticates colocd
// itself), and Hadoop's hadoop.auth cookie is not kept
// (every request carries a fresh token; the service ticket is cached, so
// that costs no KDC exchange).
package kerberos
