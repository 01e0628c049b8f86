// Package yarncluster adapts a YARN ResourceManager (yarnclient) to the
// engine: REST or command submission, application reports and kills,
// the cluster's state (metrics and running applications on every reading,
// the nodes every yarn.nodes_refresh, colocd's placements cached per
// application), and the proofs asked for an application
// the RM no longer knows (Forgotten: Timeline Server, the RM's start and
// max-completed-applications). Config is the config file's yarn section.
package yarncluster
