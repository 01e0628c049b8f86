package profile

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Covariance is the posterior covariance of observed kinds a's and b's
// per-container demands, per unit of residual variance (multiply by a
// resource's Sigma² for that resource): [(A + λI)⁻¹]_ab. Two kinds that
// only ever ran side by side have a large negative covariance: their sum
// is known, their split is not. A kind never observed is independent of
// every other; its own uncertainty is its Profile's Std (the spread of
// kinds), not a multiple of the residual variance, and Covariance is 0.
func (m *Model) Covariance(a, b string) float64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.covLocked(a, b)
}

func (m *Model) covLocked(a, b string) float64 {
	i, iok := m.index[a]
	j, jok := m.index[b]
	if !iok || !jok || m.ticks[i] == 0 || m.ticks[j] == 0 {
		return 0
	}
	return m.column(i)[j]
}

// covarianceBound is 1/λ: C = (A + λI)⁻¹, A positive semi-definite, has
// no eigenvalue above it, so cᵀCc ≤ ‖c‖²/λ for any containers c.
func (m *Model) covarianceBound() float64 { return 1 / m.cfg.PriorStrength }

// dropCov forgets the cached columns and the matrix they were solved on:
// the equations (or the kinds) changed.
func (m *Model) dropCov() {
	m.cmu.Lock()
	defer m.cmu.Unlock()
	clear(m.cov)
	m.cg.stale = true
}

// column returns column i of C = (A + λI)⁻¹, from the cache or by
// preconditioned conjugate gradients on i's connected component of the
// co-location graph (entries outside it are 0). The caller holds mu (read).
//
// Cost: O(n + e) to find the component (n kinds, e co-located pairs),
// then O(n + e) per iteration, on arrays laid out once per state of the
// equations (cgScratch): at 1,000 kinds in one component with 11,000
// pairs, about 14 iterations and 0.3 ms.
func (m *Model) column(i int) []float64 {
	m.cmu.Lock()
	defer m.cmu.Unlock()
	if c, ok := m.cov[i]; ok {
		return c
	}
	w := m.freshMatrix()
	col := w.vec.column(w, i)
	m.cov[i] = col
	return col
}

// freshMatrix is m.cg with M laid out for the current equations. The
// caller holds cmu.
func (m *Model) freshMatrix() *cgScratch {
	w := &m.cg
	if w.stale || len(w.diag) != len(m.diag) {
		w.matrix(m)
	}
	return w
}

// solveColumns caches the columns of kinds (those observed and not cached
// yet), solving them on up to GOMAXPROCS goroutines that share the
// matrix: up to cgLanes columns of one component at a time (cgBlock), each
// goroutine with its own vectors. Every column is computed exactly as
// column computes it, so nothing depends on the number of goroutines or
// on which solved what, or with which others.
func (m *Model) solveColumns(kinds []string) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	m.cmu.Lock()
	defer m.cmu.Unlock()
	var todo []int
	listed := map[int]bool{}
	for _, kind := range kinds {
		i, ok := m.index[kind]
		if _, cached := m.cov[i]; !ok || m.ticks[i] == 0 || cached || listed[i] {
			continue
		}
		listed[i] = true
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return
	}
	w := m.freshMatrix()
	// Tasks: the columns of one component, cgLanes at a time.
	slices.SortStableFunc(todo, func(a, b int) int { return w.label[a] - w.label[b] })
	var tasks [][2]int // todo[from:to]
	for a := 0; a < len(todo); {
		b := a + 1
		for b < len(todo) && b-a < cgLanes && w.label[todo[b]] == w.label[todo[a]] {
			b++
		}
		tasks = append(tasks, [2]int{a, b})
		a = b
	}
	workers := min(runtime.GOMAXPROCS(0), len(tasks))
	for len(w.blocks) < workers {
		w.blocks = append(w.blocks, &cgBlock{})
	}
	cols := make([][]float64, len(todo)) // by position in todo
	var next atomic.Int64
	var wg sync.WaitGroup
	for n := range workers {
		blk := w.blocks[n]
		blk.fit(len(w.diag))
		wg.Go(func() {
			for t := int(next.Add(1) - 1); t < len(tasks); t = int(next.Add(1) - 1) {
				a, b := tasks[t][0], tasks[t][1]
				blk.columns(w, todo[a:b], cols[a:b])
			}
		})
	}
	wg.Wait()
	for t, i := range todo {
		m.cov[i] = cols[t]
	}
}

// cgScratch is column's working memory, kept between calls (under cmu):
// the matrix M = A·scale + λI as sparse rows by model index (laid out
// again when stale), read-only while columns are solved, and the vectors
// of the solves: vec for column, blocks for solveColumns' goroutines.
type cgScratch struct {
	stale bool
	start []int32   // row k's entries are nb[start[k]:start[k+1]], val likewise
	nb    []int32   // column (model index), in the adjacency's order
	val   []float64 // A_kj · scale
	diag  []float64 // M_kk
	// label[k] is k's component; rows[first[l]:first[l+1]] are component
	// l's rows, longest first, the order mul computes them in: four rows
	// of about one length at a time.
	label, first, rows []int
	vec                cgVectors
	blocks             []*cgBlock
}

// cgVectors is one solve's working memory: the component of the column
// being solved, in breadth-first order from its kind, and the vectors of
// the iteration, by model index (only the component's entries are used).
type cgVectors struct {
	seen          []bool // in comp (reset after each use)
	comp          []int
	x, r, z, p, q []float64
}

// fit sizes v for k kinds.
func (v *cgVectors) fit(k int) {
	grow := func(x []float64) []float64 { return slices.Grow(x[:0], k)[:k] }
	v.x, v.r, v.z, v.p, v.q = grow(v.x), grow(v.r), grow(v.z), grow(v.p), grow(v.q)
	if len(v.seen) < k {
		v.seen = make([]bool, k)
	}
}

// column solves column i of C on M (w) with v's vectors and returns it.
func (v *cgVectors) column(w *cgScratch, i int) []float64 {
	v.component(w, i)
	x := v.solve(w)
	col := make([]float64, len(w.diag))
	for _, k := range v.comp {
		col[k] = x[k]
	}
	col[i] = max(col[i], 1/w.diag[i]) // [M⁻¹]_ii ≥ 1/M_ii; guards the iteration's rounding
	return col
}

// matrix lays out M from the model's equations.
func (w *cgScratch) matrix(m *Model) {
	s, lambda := m.scale, m.cfg.PriorStrength
	k := len(m.diag)
	w.start, w.nb, w.val, w.diag = w.start[:0], w.nb[:0], w.val[:0], w.diag[:0]
	for i := range k {
		w.start = append(w.start, int32(len(w.nb)))
		w.diag = append(w.diag, m.diag[i]*s+lambda)
		rw := &m.adj[i]
		w.nb = append(w.nb, rw.nb...)
		for _, v := range rw.val {
			w.val = append(w.val, v*s)
		}
	}
	w.start = append(w.start, int32(len(w.nb)))
	w.vec.fit(k)
	w.components(k)
	w.stale = false
}

// components labels every row's component and lists each component's
// rows, longest first.
func (w *cgScratch) components(k int) {
	w.label = slices.Grow(w.label[:0], k)[:k]
	for i := range w.label {
		w.label[i] = -1
	}
	w.first, w.rows = w.first[:0], w.rows[:0]
	for i := range k {
		if w.label[i] >= 0 {
			continue
		}
		l, from := len(w.first), len(w.rows)
		w.first = append(w.first, from)
		w.label[i] = l
		w.rows = append(w.rows, i)
		for q := from; q < len(w.rows); q++ {
			r := w.rows[q]
			for _, j := range w.nb[w.start[r]:w.start[r+1]] {
				if w.label[j] < 0 {
					w.label[j] = l
					w.rows = append(w.rows, int(j))
				}
			}
		}
		slices.SortStableFunc(w.rows[from:], func(a, b int) int {
			return int(w.start[b+1]-w.start[b]) - int(w.start[a+1]-w.start[a])
		})
	}
	w.first = append(w.first, len(w.rows))
}

// component finds i's component: breadth-first over M's rows from i.
func (v *cgVectors) component(w *cgScratch, i int) {
	v.comp = append(v.comp[:0], i)
	v.seen[i] = true
	for q := 0; q < len(v.comp); q++ {
		k := v.comp[q]
		for _, j := range w.nb[w.start[k]:w.start[k+1]] {
			if !v.seen[j] {
				v.seen[j] = true
				v.comp = append(v.comp, int(j))
			}
		}
	}
	for _, k := range v.comp {
		v.seen[k] = false
	}
}

// mul sets out = M x over component l. Each row is summed in its own
// order, but four rows of about one length at a time, interleaved: a
// row's sum is one chain of dependent additions, and four chains keep the
// processor busy where one waits on each addition. The order rows are
// computed in changes no sum.
func (w *cgScratch) mul(l int, x, out []float64) {
	c := w.rows[w.first[l]:w.first[l+1]]
	a := 0
	for ; a+4 <= len(c); a += 4 {
		w.mul4(x, out, c[a], c[a+1], c[a+2], c[a+3])
	}
	for _, k := range c[a:] {
		out[k] = w.row(x, k, w.start[k], w.diag[k]*x[k])
	}
}

// row adds row k's entries from e on to v.
func (w *cgScratch) row(x []float64, k int, e int32, v float64) float64 {
	end := w.start[k+1]
	val, nb := w.val[e:end], w.nb[e:end]
	for n, f := range val {
		v += f * x[nb[n]]
	}
	return v
}

// mul4 computes rows k0 to k3: together while each has entries left,
// then each alone.
func (w *cgScratch) mul4(x, out []float64, k0, k1, k2, k3 int) {
	s := w.start
	e0, e1, e2, e3 := s[k0], s[k1], s[k2], s[k3]
	n := min(s[k0+1]-e0, s[k1+1]-e1, s[k2+1]-e2, s[k3+1]-e3)
	v0, v1, v2, v3 := w.diag[k0]*x[k0], w.diag[k1]*x[k1], w.diag[k2]*x[k2], w.diag[k3]*x[k3]
	val, nb := w.val, w.nb
	for k := range n {
		v0 += val[e0+k] * x[nb[e0+k]]
		v1 += val[e1+k] * x[nb[e1+k]]
		v2 += val[e2+k] * x[nb[e2+k]]
		v3 += val[e3+k] * x[nb[e3+k]]
	}
	out[k0] = w.row(x, k0, e0+n, v0)
	out[k1] = w.row(x, k1, e1+n, v1)
	out[k2] = w.row(x, k2, e2+n, v2)
	out[k3] = w.row(x, k3, e3+n, v3)
}

// solve runs Jacobi-preconditioned conjugate gradients for M x = e_i on
// the component (i = comp[0]) and returns x (by model index; only the
// component's entries are meaningful). Sums run in the component's order.
func (v *cgVectors) solve(w *cgScratch) []float64 {
	x, r, z, p, q, diag, c := v.x, v.r, v.z, v.p, v.q, w.diag, v.comp
	l := w.label[c[0]]
	for _, k := range c {
		x[k], r[k] = 0, 0
	}
	r[c[0]] = 1 // b = e_i; x = 0
	for _, k := range c {
		z[k] = r[k] / diag[k]
		p[k] = z[k]
	}
	rz := r[c[0]] * z[c[0]]
	for it := 0; it < 4*len(c)+20 && rz > 1e-24; it++ {
		w.mul(l, p, q)
		var pq float64
		for _, k := range c {
			pq += p[k] * q[k]
		}
		if pq <= 0 {
			break
		}
		alpha := rz / pq
		var rr float64
		for _, k := range c {
			x[k] += alpha * p[k]
			r[k] -= alpha * q[k]
			rr += r[k] * r[k]
		}
		if rr < 1e-20 {
			break
		}
		var rzNew float64
		for _, k := range c {
			z[k] = r[k] / diag[k]
			rzNew += r[k] * z[k]
		}
		beta := rzNew / rz
		rz = rzNew
		for _, k := range c {
			p[k] = z[k] + beta*p[k]
		}
	}
	return x
}
