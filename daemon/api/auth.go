package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"
)

// Role is what a token may do. Roles are ordered: each one may do everything
// the ones below it may.
type Role int

// The roles, weakest first.
const (
	// RoleReader may read everything: GET only.
	RoleReader Role = iota + 1
	// RoleSubmitter may also submit jobs (as its own user) and cancel or
	// kill its own jobs.
	RoleSubmitter
	// RoleAdmin may do everything: submit for any user, cancel or kill
	// anyone's jobs, import and reset preferences.
	RoleAdmin
)

// String returns the role's config name.
func (r Role) String() string {
	switch r {
	case RoleReader:
		return "reader"
	case RoleSubmitter:
		return "submitter"
	case RoleAdmin:
		return "admin"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// ParseRole parses a config name ("reader", "submitter", "admin").
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "reader":
		return RoleReader, nil
	case "submitter":
		return RoleSubmitter, nil
	case "admin":
		return RoleAdmin, nil
	}
	return 0, fmt.Errorf("%w: role %q (want reader, submitter or admin)", errConfig, s)
}

// MarshalText encodes the role by name (config files, JSON).
func (r Role) MarshalText() ([]byte, error) {
	if r < RoleReader || r > RoleAdmin {
		return nil, fmt.Errorf("%w: role %d", errConfig, int(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText decodes a role name.
func (r *Role) UnmarshalText(b []byte) error {
	v, err := ParseRole(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Token maps a bearer secret to a user and a role, for service accounts.
type Token struct {
	Secret string
	User   string
	Role   Role
	// Expires is when the token stops being accepted (401, code
	// token_expired); zero: never.
	Expires time.Time
}

// authenticator checks bearer tokens in constant time.
type authenticator struct {
	// sums holds SHA-256 of every secret: comparing fixed-length digests
	// hides the secrets' lengths as well as their contents.
	sums   [][sha256.Size]byte
	tokens []Token
}

func newAuthenticator(tokens []Token) (*authenticator, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%w: tokens: none configured (api.auth tokens or both needs one)", errConfig)
	}
	a := &authenticator{tokens: append([]Token(nil), tokens...)}
	seen := make(map[[sha256.Size]byte]bool, len(tokens))
	for i, t := range tokens {
		switch {
		case t.Secret == "":
			return nil, fmt.Errorf("%w: tokens[%d].secret is empty", errConfig, i)
		case t.Secret != strings.TrimSpace(t.Secret) || strings.ContainsAny(t.Secret, " \t\r\n"):
			return nil, fmt.Errorf("%w: tokens[%d].secret contains white space", errConfig, i)
		case t.User == "":
			return nil, fmt.Errorf("%w: tokens[%d].user is empty", errConfig, i)
		case t.Role < RoleReader || t.Role > RoleAdmin:
			return nil, fmt.Errorf("%w: tokens[%d].role is %d (want reader, submitter or admin)", errConfig, i, int(t.Role))
		}
		sum := sha256.Sum256([]byte(t.Secret))
		if seen[sum] {
			return nil, fmt.Errorf("%w: tokens[%d].secret duplicates an earlier token", errConfig, i)
		}
		seen[sum] = true
		a.sums = append(a.sums, sum)
	}
	return a, nil
}

// check returns the token whose secret was presented: ok when it is
// valid at now, expired when it was but is no more. It compares the
// presented secret with every configured one, without an early exit, so
// the time taken reveals neither which token matched nor how much of it.
func (a *authenticator) check(secret string, now time.Time) (t Token, ok, expired bool) {
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return Token{}, false, false
	}
	sum := sha256.Sum256([]byte(secret))
	match := -1
	for i := range a.sums {
		eq := subtle.ConstantTimeCompare(sum[:], a.sums[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return Token{}, false, false
	}
	t = a.tokens[match]
	if !t.Expires.IsZero() && !now.Before(t.Expires) {
		return t, false, true
	}
	return t, true, false
}
