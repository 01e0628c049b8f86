// Package ha runs colocd as a set of replicas on the cluster's ZooKeeper:
// one leader admits jobs, the others keep warm copies of its store and
// take over when it fails, as YARN's ResourceManager does with
// ActiveStandbyElector and ZKRMStateStore.
//
// # What it owns
//
// A Replica holds a ZooKeeper session and, through it:
//
//   - Election and a fencing epoch. The leader is the holder of the
//     ephemeral znode <root>/leader; the winner creates it and bumps
//     <root>/epoch in one multi, so the epoch (that znode's version) is
//     new exactly when the leader is. Session expiry, not connection
//     loss, is the loss of leadership: on expiry the replica ends its term
//     at once, closes that connection (go-zk would carry on in a new
//     session) and competes again from a new one.
//   - The store's log. Every command the store's methods propose
//     (queue.Command) is committed through Replica.Commit: one znode
//     <root>/log/<index>, created in a multi that checks the epoch and
//     the leader's znode, so an old leader cannot append. Only then is it
//     applied to the leader's bbolt (queue.Store.Apply, the index in the
//     same transaction) and acknowledged. Every replica applies the log to
//     its own store in order: the existing store is the state machine, and
//     the standbys are warm. Group commit stays: the store's writer turns a
//     group of submissions into one command, one append.
//   - Snapshots. Every Config.SnapshotEvery entries the leader writes a
//     consistent copy of its store (compressed, in chunks) under
//     <root>/snapshots and points <root>/snapshot at it (fenced), then
//     deletes the log behind it but Config.KeepEntries entries. A new or
//     lagging replica installs the snapshot and follows the log from there,
//     so ZooKeeper holds a bounded amount: one or two snapshots and the log
//     since.
//   - The fence for YARN (Replica.Act): the leader submits to the RM only
//     within a bound of its last ZooKeeper reply, so a paused leader whose
//     session has expired cannot submit once another has taken over.
//
// # What it must not do
//
// It never stores a job per znode and never streams between replicas:
// ZooKeeper is the only channel. It does not decide, admit or learn: the
// daemon runs the engine on the leader only (Replica.Terms), and the
// engine asks the fence before it acts on the cluster.
package ha
