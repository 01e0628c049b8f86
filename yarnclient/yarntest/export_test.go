package yarntest

// Names the external tests use.

// TokenMaxLifetime is tokenMaxLifetime.
const TokenMaxLifetime = tokenMaxLifetime

// ClusterTimestamp is clusterTimestamp.
var ClusterTimestamp = clusterTimestamp
