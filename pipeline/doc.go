// Package pipeline is colocd's ordering pipeline: which pending job goes
// to the cluster next.
//
// # What it owns
//
// Config (one field per stage, DefaultConfig, Validate), the Snapshot a
// decision reads, the Decision it returns, the stages and the fairness
// stage's memory (FairnessState, the service curves' accounting). The job
// type is package queue's; the store hands the pipeline its pending jobs
// and records what the Decision says.
//
// # A decision
//
// Decide takes a Snapshot (the FIFO head, free and total capacity, nodes and
// the jobs on them, running applications, kind histories, the time) and a
// random source, runs the stages — Window, Fit, Fairness, Altruism,
// Reservation, Tail, Preference, Lookahead, Starvation, Select, wired in
// Pipeline.stack — and returns a Decision: the chosen job, what each stage
// kept and dropped and why, the final probabilities, each candidate's
// co-location score, and the jobs passed over and blocked (the engine hands
// them to queue.Store.Admit so their skip and block counts grow). The
// Preference stage scores with a Scorer (mode model: the daemon's profile
// model, which may also hold every job back for one learning tick to
// observe a never-observed kind) or with the paper's pair preferences (mode
// bandit,
// learning-efficient-co-locations §4–5); the hooks follow Graphene §5.1
// (deficit counters, bound κ), Carbyne §3.4.2 (P(altruism)) and X-Flex
// (fairness over time).
//
// Guarantees, with the stages on: no job that fits is passed over more than
// Starvation.MaxSkips times; no job that does not fit is overtaken more
// than Reservation.AfterBlocked times (it then holds a reservation and goes
// once it fits, unless it would not fit even the idle cluster); with
// Altruism.P = 0 no deadline job that fits is ever passed over; Fairness
// keeps the largest deficit near κ — whatever the Scorer says (property
// tests in both modes; the starvation cap also with the tail stage, whose
// longest-first at a draining queue's end keeps every job at the cap).
// Where they collide, a reservation comes first,
// then the altruism cut (a deadline job that will not yield), then the
// starvation cap, then the out-of-slack rule and fairness.
//
// # What it must not do
//
// No I/O, no clock reads and no global randomness: a decision reads only
// its Snapshot, the fairness counters and the *rand.Rand it is given, so
// the same inputs give the same Decision. It imports no colocd package but
// queue (bandit.Learner satisfies Preferences, and the daemon's scorer
// Scorer, without the pipeline knowing them). It does not talk to YARN,
// submit anything, or log decisions: the engine does, from the Decision it
// gets back.
package pipeline
