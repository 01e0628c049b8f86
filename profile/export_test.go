package profile

// Add makes kind known, with the prior as its profile. Adding a known kind
// or "" does nothing.
func (m *Model) Add(kind string) {
	if kind == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addLocked(kind)
}

// Predict is the usage the current fit predicts for a node running
// containers: the baseline plus each kind's demand times its containers.
func (m *Model) Predict(containers []KindCount) Vector {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.predictLocked(containers)
}
