package promtest

// Names the external tests use.

// Sample is sample.
type Sample = sample
