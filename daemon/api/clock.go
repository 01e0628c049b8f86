package api

import "net/http"

// getClock is GET /v1/clock: the daemon's clock, on which every timestamp
// of the API lies, and how it maps onto the wall clock (v1.Clock).
func (s *server) getClock(w http.ResponseWriter, _ *http.Request, _ principal) error {
	writeJSON(w, http.StatusOK, s.clock())
	return nil
}
