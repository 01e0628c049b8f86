package profile

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

// column returns column i of C = (A + λI)⁻¹, from the cache or by
// preconditioned conjugate gradients on i's connected component of the
// co-location graph (entries outside it are 0). The caller holds mu (read).
func (m *Model) column(i int) []float64 {
	m.cmu.Lock()
	defer m.cmu.Unlock()
	if c, ok := m.cov[i]; ok {
		return c
	}
	// The component: breadth-first over the adjacency.
	comp := []int{i}
	pos := map[int]int{i: 0}
	for q := 0; q < len(comp); q++ {
		for _, j := range m.adj[comp[q]].nb {
			if _, ok := pos[int(j)]; !ok {
				pos[int(j)] = len(comp)
				comp = append(comp, int(j))
			}
		}
	}
	n := len(comp)
	s, lambda := m.scale, m.cfg.PriorStrength
	diag := make([]float64, n)
	for a, k := range comp {
		diag[a] = m.diag[k]*s + lambda
	}
	mul := func(x, out []float64) { // out = M x
		for a, k := range comp {
			v := diag[a] * x[a]
			rw := &m.adj[k]
			for e, j := range rw.nb {
				v += rw.val[e] * s * x[pos[int(j)]]
			}
			out[a] = v
		}
	}
	x := make([]float64, n)
	r := make([]float64, n)
	z := make([]float64, n)
	p := make([]float64, n)
	q := make([]float64, n)
	r[0] = 1 // b = e_i; x = 0
	for a := range n {
		z[a] = r[a] / diag[a]
		p[a] = z[a]
	}
	rz := r[0] * z[0]
	for it := 0; it < 4*n+20 && rz > 1e-24; it++ {
		mul(p, q)
		var pq float64
		for a := range n {
			pq += p[a] * q[a]
		}
		if pq <= 0 {
			break
		}
		alpha := rz / pq
		var rr float64
		for a := range n {
			x[a] += alpha * p[a]
			r[a] -= alpha * q[a]
			rr += r[a] * r[a]
		}
		if rr < 1e-20 {
			break
		}
		var rzNew float64
		for a := range n {
			z[a] = r[a] / diag[a]
			rzNew += r[a] * z[a]
		}
		beta := rzNew / rz
		rz = rzNew
		for a := range n {
			p[a] = z[a] + beta*p[a]
		}
	}
	col := make([]float64, len(m.diag))
	for a, k := range comp {
		col[k] = x[a]
	}
	col[i] = max(col[i], 1/diag[0]) // [M⁻¹]_ii ≥ 1/M_ii; guards the iteration's rounding
	m.cov[i] = col
	return col
}
