package api

import (
	"net/http"
	"sync"
)

// kindGate bounds the job kinds the learner knows (Deps.MaxKinds; the pair
// preferences are K×K): a job of a kind the learner does not know is
// stored only while fewer than max kinds are known or being stored, and its
// kind is added to the learner (through the Controller) once the job is
// stored. A job that fails validation or is not stored adds nothing.
type kindGate struct {
	learner preferences
	ctl     Controller
	max     int

	mu sync.Mutex
	// known caches the learner's kinds, so that a job of a known kind costs
	// a map lookup, not a copy of every kind. A miss refreshes it from the
	// learner; forget drops it when the learner loses kinds.
	known map[string]bool
	// adding counts the submissions in flight per new kind: they hold a
	// place under max until their job is stored or fails.
	adding map[string]int
}

func newKindGate(l preferences, ctl Controller, maxKinds int) *kindGate {
	return &kindGate{learner: l, ctl: ctl, max: maxKinds, known: map[string]bool{}, adding: map[string]int{}}
}

// reserve admits a job of kind, or says why not (422). The caller stores
// the job, then calls done with whether it was stored.
func (g *kindGate) reserve(kind string) (done func(stored bool), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.known[kind] {
		return func(bool) {}, nil
	}
	kinds := g.learner.Kinds()
	g.known = make(map[string]bool, len(kinds))
	for _, k := range kinds {
		g.known[k] = true
	}
	if g.known[kind] {
		return func(bool) {}, nil
	}
	if n := len(kinds) + len(g.adding); g.adding[kind] == 0 && n >= g.max {
		return nil, errorf(http.StatusUnprocessableEntity, "kind",
			"kind %q is new and colocd already knows %d job kinds, the limit set by api.max_kinds (%d): submit a known kind, or raise the limit",
			kind, n, g.max)
	}
	g.adding[kind]++
	return func(stored bool) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.adding[kind]--; g.adding[kind] == 0 {
			delete(g.adding, kind)
		}
		if stored {
			g.ctl.AddKind(kind)
			g.known[kind] = true
		}
	}, nil
}

// forget drops the cache of known kinds (the learner was reset or replaced).
func (g *kindGate) forget() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.known = map[string]bool{}
}
