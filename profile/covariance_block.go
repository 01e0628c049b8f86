package profile

import "slices"

// cgLanes is how many columns cgBlock solves together.
const cgLanes = 4

// cgBlock solves up to cgLanes columns of one component together: one
// conjugate-gradient iteration per lane, as cgVectors.solve runs it, but
// the product with M computed for every lane in one pass over the matrix
// (mulLanes), which reads each entry once for four sums. Each lane keeps
// its own component order, step sizes and stopping, and each row's sum
// runs in the same order as mul's, so a lane's column is bit for bit the
// one column computes alone.
type cgBlock struct {
	lane [cgLanes]cgVectors // per lane: the component order and x, r, z
	p, q []float64          // the lanes' p and q interleaved: p[k*cgLanes+j]
}

// fit sizes b for k kinds.
func (b *cgBlock) fit(k int) {
	for j := range b.lane {
		b.lane[j].fit(k)
	}
	b.p = slices.Grow(b.p[:0], k*cgLanes)[:k*cgLanes]
	b.q = slices.Grow(b.q[:0], k*cgLanes)[:k*cgLanes]
}

// columns solves the columns of idx (at most cgLanes, all in one
// component) into out. One column is left to cgVectors.column.
func (b *cgBlock) columns(w *cgScratch, idx []int, out [][]float64) {
	if len(idx) == 1 {
		out[0] = b.lane[0].column(w, idx[0])
		return
	}
	for j, i := range idx {
		b.lane[j].component(w, i)
	}
	b.solve(w, len(idx))
	for j, i := range idx {
		v := &b.lane[j]
		col := make([]float64, len(w.diag))
		for _, k := range v.comp {
			col[k] = v.x[k]
		}
		col[i] = max(col[i], 1/w.diag[i]) // as column
		out[j] = col
	}
}

// solve runs cgVectors.solve for lanes 0..n-1 at once: the same
// operations in the same order per lane.
func (b *cgBlock) solve(w *cgScratch, n int) {
	const L = cgLanes
	diag, p, q := w.diag, b.p, b.q
	l := w.label[b.lane[0].comp[0]]
	rows := w.rows[w.first[l]:w.first[l+1]]
	for _, k := range rows {
		clear(p[k*L : k*L+L])
	}
	var rz [L]float64
	var active [L]bool
	var it [L]int
	maxIt := 4*len(rows) + 20
	for j := range n {
		v := &b.lane[j]
		x, r, z, c := v.x, v.r, v.z, v.comp
		for _, k := range c {
			x[k], r[k] = 0, 0
		}
		r[c[0]] = 1
		for _, k := range c {
			z[k] = r[k] / diag[k]
			p[k*L+j] = z[k]
		}
		rz[j] = r[c[0]] * z[c[0]]
		active[j] = 0 < maxIt && rz[j] > 1e-24
	}
	for slices.Contains(active[:n], true) {
		w.mulLanes(rows, p, q)
		for j := range n {
			if !active[j] {
				continue
			}
			active[j] = b.step(w, j, &rz[j])
			it[j]++
			active[j] = active[j] && it[j] < maxIt && rz[j] > 1e-24
		}
	}
}

// step is one iteration of lane j after the product q = M p: false when
// the lane stops inside it (as solve's breaks).
func (b *cgBlock) step(w *cgScratch, j int, rz *float64) bool {
	const L = cgLanes
	v := &b.lane[j]
	x, r, z, c, p, q, diag := v.x, v.r, v.z, v.comp, b.p, b.q, w.diag
	var pq float64
	for _, k := range c {
		pq += p[k*L+j] * q[k*L+j]
	}
	if pq <= 0 {
		return false
	}
	alpha := *rz / pq
	var rr float64
	for _, k := range c {
		x[k] += alpha * p[k*L+j]
		r[k] -= alpha * q[k*L+j]
		rr += r[k] * r[k]
	}
	if rr < 1e-20 {
		return false
	}
	var rzNew float64
	for _, k := range c {
		z[k] = r[k] / diag[k]
		rzNew += r[k] * z[k]
	}
	beta := rzNew / *rz
	*rz = rzNew
	for _, k := range c {
		p[k*L+j] = z[k] + beta*p[k*L+j]
	}
	return true
}

// mulLanes sets q = M p for every lane over rows: each row's sums as mul
// computes them (the diagonal term, then the entries in order), four
// lanes side by side.
func (w *cgScratch) mulLanes(rows []int, p, q []float64) {
	const L = cgLanes
	val, nb := w.val, w.nb
	for _, k := range rows {
		d := w.diag[k]
		pk := p[k*L : k*L+L : k*L+L]
		v0, v1, v2, v3 := d*pk[0], d*pk[1], d*pk[2], d*pk[3]
		e0, e1 := w.start[k], w.start[k+1]
		for e, f := range val[e0:e1] {
			o := int(nb[int(e0)+e]) * L
			po := p[o : o+L : o+L]
			v0 += f * po[0]
			v1 += f * po[1]
			v2 += f * po[2]
			v3 += f * po[3]
		}
		qk := q[k*L : k*L+L : k*L+L]
		qk[0], qk[1], qk[2], qk[3] = v0, v1, v2, v3
	}
}
