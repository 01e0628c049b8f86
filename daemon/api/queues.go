package api

import (
	"net/http"

	"github.com/colocd/colocd/pipeline"
)

// QueueSource reports the fairness stage's queues (engine.Engine does):
// each queue's class, guarantee, owed and received service and deficit as
// of the last decision. It must be safe for concurrent use.
type QueueSource interface {
	Queues() pipeline.QueuesReport
}

// getQueues is GET /v1/queues: the queues as the fairness stage saw them
// at the last decision ({"enabled": false, "queues": []} with fairness
// off).
func (s *server) getQueues(w http.ResponseWriter, _ *http.Request, _ principal) error {
	rep := pipeline.QueuesReport{Queues: []pipeline.QueueStatus{}}
	if s.queues != nil {
		rep = s.queues.Queues()
	}
	writeJSON(w, http.StatusOK, wireQueues(rep))
	return nil
}
