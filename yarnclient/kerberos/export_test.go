package kerberos

// Names the external tests use.
type (
	// Error is exchangeError.
	Error = exchangeError
	// Status is status.
	Status = status
)
