// Package yarncluster adapts a YARN ResourceManager (yarnclient) to the
// engine: REST or command submission, application reports and kills,
// the cluster's state (metrics and running applications on every reading,
// the nodes every yarn.nodes_refresh, colocd's placements cached per
// application), and the proofs asked for an application
// the RM no longer knows (Forgotten: Timeline Server, the RM's start and
// max-completed-applications). Config is the config file's yarn section.
//
// What a job may ask of the submission is checked here (Prepare, and
// again at Submit for a job queued before): a REST context without
// colocd's tags and in the job's queue; a command submission's declared
// parameters only, never an argument, variable or directory of its own.
// Which job an application runs is never read from its tags: the engine
// decides by the id it reserved, a command submission's authenticated
// token (cluster.App.Reservation) and the application's user (AppOwners).
package yarncluster
