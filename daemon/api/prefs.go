package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/colocd/colocd/bandit"
)

// prefsView is the body of GET /v1/preferences. Rows are the running
// (given) kind, columns the queued kind, both indexed like Kinds:
// H[i][j] = H(Kinds[j] | Kinds[i]) and Pi[i][j] = π(Kinds[j] | Kinds[i]),
// the softmax of row i.
type prefsView struct {
	Kinds            []string      `json:"kinds"`
	H                [][]float64   `json:"h"`
	Pi               [][]float64   `json:"pi"`
	Baseline         float64       `json:"baseline"`
	RowBaseline      []float64     `json:"row_baseline"`
	Observations     int64         `json:"observations"`
	RowObservations  []int64       `json:"row_observations"`
	PairObservations [][]int64     `json:"pair_observations"`
	Rejected         int64         `json:"rejected"`
	Config           bandit.Config `json:"config"` // the learner's (step size, baseline mode, ...)
}

func (s *server) prefsView() prefsView {
	snap := s.learner.Snapshot()
	v := prefsView{
		Kinds: snap.Kinds, H: snap.H, Pi: piOf(snap.H), Baseline: snap.Baseline,
		RowBaseline: snap.RowBaseline, Observations: snap.Observations,
		RowObservations: snap.RowObservations, PairObservations: snap.PairObservations,
		Rejected: snap.Rejected, Config: s.learner.Config(),
	}
	if v.Kinds == nil {
		v.Kinds, v.H, v.Pi, v.RowBaseline, v.RowObservations, v.PairObservations = []string{}, [][]float64{}, [][]float64{}, []float64{}, []int64{}, [][]int64{}
	}
	return v
}

// piOf returns the row-wise softmax of h (max subtracted, so it is finite).
func piOf(h [][]float64) [][]float64 {
	out := make([][]float64, len(h))
	for i, row := range h {
		out[i] = make([]float64, len(row))
		if len(row) == 0 {
			continue
		}
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, v)
		}
		var sum float64
		for j, v := range row {
			out[i][j] = math.Exp(v - m)
			sum += out[i][j]
		}
		for j := range out[i] {
			out[i][j] /= sum
		}
	}
	return out
}

// getPreferences: GET /v1/preferences[?format=json|csv|snapshot][&matrix=pi|h].
// json (default) is prefsView; csv is one matrix (π unless matrix=h) with a
// header row "given,<kind>,..." and one row per running kind; snapshot is
// the learner's bandit.Snapshot, the format PUT accepts.
func (s *server) getPreferences(w http.ResponseWriter, r *http.Request, _ principal) error {
	q := r.URL.Query()
	switch f := q.Get("format"); f {
	case "", "json":
		writeJSON(w, http.StatusOK, s.prefsView())
	case "snapshot":
		writeJSON(w, http.StatusOK, s.learner.Snapshot())
	case "csv":
		m, err := matrixParam(q.Get("matrix"))
		if err != nil {
			return err
		}
		v := s.prefsView()
		rows := v.Pi
		if m == "h" {
			rows = v.H
		}
		b, err := matrixCSV(v.Kinds, rows)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="colocd-%s.csv"`, m))
		_, _ = w.Write(b)
	default:
		return errorf(http.StatusBadRequest, "format", "format %q is not json, csv or snapshot", f)
	}
	return nil
}

func matrixParam(m string) (string, error) {
	switch m {
	case "", "pi":
		return "pi", nil
	case "h":
		return "h", nil
	}
	return "", errorf(http.StatusBadRequest, "matrix", "matrix %q is not pi or h", m)
}

// matrixCSV writes a kinds×kinds matrix with a header row. Values use the
// shortest representation that parses back to the same float64.
func matrixCSV(kinds []string, rows [][]float64) ([]byte, error) {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.Write(append([]string{"given"}, kinds...))
	for i, row := range rows {
		rec := make([]string, 0, len(row)+1)
		rec = append(rec, kinds[i])
		for _, v := range row {
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}

// heatmapSVG: GET /v1/preferences/heatmap.svg[?matrix=pi|h].
func (s *server) heatmapSVG(w http.ResponseWriter, r *http.Request, _ principal) error {
	m, err := matrixParam(r.URL.Query().Get("matrix"))
	if err != nil {
		return err
	}
	v := s.prefsView()
	hm := heatmap{
		Title: "π(queued | running): learned co-location preferences", RowAxis: "running kind", ColAxis: "queued kind",
		Rows: v.Kinds, Cols: v.Kinds, Values: v.Pi,
	}
	if m == "h" {
		hm.Title, hm.Values, hm.Diverging = "H(queued | running): learned preference scores", v.H, true
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(hm.render())
	return nil
}

// putPreferences: PUT /v1/preferences (admin) imports a bandit.Snapshot
// (as GET ?format=snapshot returns it), then persists it. If persisting
// fails the learner is put back as it was.
func (s *server) putPreferences(w http.ResponseWriter, r *http.Request, p principal) error {
	var snap bandit.Snapshot
	if err := decodeJSON(w, r, s.maxBody, &snap); err != nil {
		return err
	}
	if len(snap.Kinds) > s.kinds.max {
		return errorf(http.StatusUnprocessableEntity, "kinds", "the snapshot has %d kinds, over the limit set by api.max_kinds (%d)", len(snap.Kinds), s.kinds.max)
	}
	defer s.kinds.forget()
	before := s.learner.Snapshot()
	if err := s.learner.Restore(snap); err != nil {
		var fe *bandit.FieldError
		if errors.As(err, &fe) {
			return errorf(http.StatusBadRequest, fe.Field, "invalid snapshot: %s: %s", fe.Field, fe.Reason)
		}
		return errorf(http.StatusBadRequest, "", "invalid snapshot: %v", err)
	}
	if err := s.persistPreferences(); err != nil {
		if rerr := s.learner.Restore(before); rerr != nil {
			s.log.Error("restoring preferences after a failed save", "err", rerr)
		}
		return err
	}
	s.log.Info("preferences imported", "by", p.User, "kinds", len(snap.Kinds), "observations", snap.Observations)
	writeJSON(w, http.StatusOK, s.prefsView())
	return nil
}

// resetPreferences: DELETE /v1/preferences (admin) forgets everything
// learned (kinds stay unknown until seen again) and persists that.
func (s *server) resetPreferences(w http.ResponseWriter, _ *http.Request, p principal) error {
	defer s.kinds.forget()
	before := s.learner.Snapshot()
	s.learner.Reset()
	if err := s.persistPreferences(); err != nil {
		if rerr := s.learner.Restore(before); rerr != nil {
			s.log.Error("restoring preferences after a failed save", "err", rerr)
		}
		return err
	}
	s.log.Info("preferences reset", "by", p.User)
	writeJSON(w, http.StatusOK, s.prefsView())
	return nil
}

// persistPreferences saves the learner's snapshot as JSON in the store,
// the format the daemon loads at start.
func (s *server) persistPreferences() error {
	b, err := json.Marshal(s.learner.Snapshot())
	if err != nil {
		return fmt.Errorf("encoding preferences: %w", err)
	}
	err = s.store.SavePreferences(b)
	s.storeWrite("preferences", err)
	if err != nil {
		return fmt.Errorf("saving preferences: %w", err)
	}
	return nil
}
