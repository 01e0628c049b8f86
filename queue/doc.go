// Package queue is colocd's durable job queue: the job model and the store.
//
// # What it owns
//
// The job model (Job, Resources, State and the state machine, validation
// with errors that name the field), the Store — one bbolt file holding every
// job, the FIFO of pending jobs, the per-kind run history and the learned
// state (the pair preferences' and the profile model's snapshots). Package
// pipeline, which decides which pending job goes to the cluster next,
// imports it for the job type.
//
// # The store
//
// Every write is a Command (command.go): a value of a closed set —
// CmdSubmit (a group of new jobs with the ids their proposer minted and
// their idempotency keys), cmdAdmit (with the application id), cmdStart,
// cmdFinish, cmdRequeue, cmdCancel, cmdPark, cmdResolve, cmdCompact, the
// learned state's and the fairness state's saves — that carries its time
// and every id it creates. Store.Apply applies a log Entry of commands in
// one transaction and records the entry's index in it; the same entries
// applied to an empty store give the same content byte for byte
// (Store.Digest). The store's methods are the proposers: they read the
// clock and the entropy, build the command and commit it through the
// store's Log — the embedded one applies it at once; a replicated one
// (package ha) appends it to ZooKeeper first. EncodeEntry and DecodeEntry
// are the log's wire form. Quarantining a damaged record and the upgrade
// of an old layout are the file's own repairs, not commands.
//
// States move pending → admitted → running → succeeded | failed | killed, or
// pending → cancelled; admitted → pending is the rollback when a submit to the
// cluster fails. Each move is one transaction with fsync on (Options.NoSync
// is for tests). Submissions are group-committed by a single writer, so
// concurrent submitters share an fsync; an idempotency key (scoped per user)
// makes a retried submission return the first job. Open tells a foreign file
// (errForeign), a damaged one (ErrCorrupt; *MetaError for a damaged bbolt
// meta page, *truncatedError for an empty or short file), a newer schema
// (errSchema) and a held lock (errLocked) apart, and never panics on a bad
// file. A damaged job record or kind history does not stop the store: it
// is quarantined (Store.Quarantined lists it; the job answers
// errQuarantined) and the indexes are rebuilt from the records when they
// disagree. Check is the read-only version for ops (`colocd store check`).
// README.md says what the store promises on corruption and how it is tested.
//
// File layout (schema 1), one bucket each:
//
//	meta     "magic" = "colocd-queue", "schema" = uint64 BE,
//	         "applied" = the index of the last log entry applied (uint64 BE)
//	jobs     id (ULID) → Job as JSON
//	pending  seq (uint64 BE) → id           the FIFO: a cursor gives the head in O(log n + k)
//	states   state 0x00 seq → id            listing by state, in submission order
//	idem     user 0x00 key → id             idempotency keys
//	kinds    kind → KindHistory as JSON
//	prefs    "learned_preferences", "learned_profiles": one nested bucket
//	         per learned model (learned.go): "header" (JSON: row names,
//	         the model's scalars), "dense" (a vector written whole), and
//	         one key per row, index uint32 BE → a binary row of float64s
//	         and int64s (runs of one value compressed), only the rows
//	         that left their prior; "fairness" → the fairness state as
//	         JSON. "snapshot" and "profiles" (the whole-model JSON of
//	         earlier builds) migrate into the rows when first read.
//	counts   state → uint64 BE              O(1) Counts
//	blocks   seq>>12 (uint64 BE) → count    pending jobs per 4096 seqs, for Position
//	quarantine "jobs/"id or "kinds/"kind → quarantined as JSON
//	         (damaged records; created by the first quarantine, so a
//	         file without it is schema 1 too)
//
// A later schema adds a step to the migration table (store.go); Open runs all
// needed steps in one transaction.
//
// # What it must not do
//
// No network I/O, no clock reads and no global randomness in logic: the
// store takes Options.Now and Options.Entropy, and commands carry their time
// and ids. It imports no other colocd package. It does not talk to YARN,
// submit anything, or decide what goes next.
package queue
