package yarncluster

// Names the external tests use.

// DefaultNodesRefresh is defaultNodesRefresh.
const DefaultNodesRefresh = defaultNodesRefresh

// ErrNoTagKey is errNoTagKey.
var ErrNoTagKey = errNoTagKey

// Types.
type (
	FieldError       = fieldError
	ServicePrincipal = servicePrincipal
	TokensConfig     = tokensConfig
)
