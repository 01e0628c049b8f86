package api

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/bandit"
)

// prefsView is the body of GET, PUT and DELETE /v1/preferences.
func (s *server) prefsView() apiclient.Preferences {
	snap := s.learner.Snapshot()
	v := apiclient.Preferences{
		Kinds: snap.Kinds, H: snap.H, Pi: snap.Pi(), Baseline: snap.Baseline,
		RowBaseline: snap.RowBaseline, Observations: snap.Observations,
		RowObservations: snap.RowObservations, PairObservations: snap.PairObservations,
		Rejected: snap.Rejected, Config: s.learner.Config(),
	}
	if v.Kinds == nil {
		v.Kinds, v.H, v.Pi, v.RowBaseline, v.RowObservations, v.PairObservations = []string{}, [][]float64{}, [][]float64{}, []float64{}, []int64{}, [][]int64{}
	}
	return v
}

// getPreferences: GET /v1/preferences[?format=json|csv|snapshot][&matrix=pi|h].
// json (default) is apiclient.Preferences; csv is one matrix (π unless
// matrix=h) with a header row "given,<kind>,..." and one row per running
// kind; snapshot is the learner's bandit.Snapshot, the format PUT accepts.
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
// (as GET ?format=snapshot returns it); the engine persists it, or leaves
// the preferences as they were.
func (s *server) putPreferences(w http.ResponseWriter, r *http.Request, p principal) error {
	var snap bandit.Snapshot
	if err := decodeJSON(w, r, s.maxBody, &snap); err != nil {
		return err
	}
	if len(snap.Kinds) > s.kinds.max {
		return errorf(http.StatusUnprocessableEntity, "kinds", "the snapshot has %d kinds, over the limit set by api.max_kinds (%d)", len(snap.Kinds), s.kinds.max)
	}
	defer s.kinds.forget()
	if err := s.ctl.ImportPreferences(snap); err != nil {
		var fe *bandit.FieldError
		switch {
		case errors.As(err, &fe):
			return errorf(http.StatusBadRequest, fe.Field, "invalid snapshot: %s: %s", fe.Field, fe.Reason)
		case errors.Is(err, bandit.ErrInvalidSnapshot):
			return errorf(http.StatusBadRequest, "", "invalid snapshot: %v", err)
		}
		return err
	}
	s.log.Info("preferences imported", "by", p.User, "kinds", len(snap.Kinds), "observations", snap.Observations)
	writeJSON(w, http.StatusOK, s.prefsView())
	return nil
}

// resetPreferences: DELETE /v1/preferences (admin) forgets everything
// learned (kinds stay unknown until a job of them is stored or learned
// from); the engine persists that, or leaves the preferences as they were.
func (s *server) resetPreferences(w http.ResponseWriter, _ *http.Request, p principal) error {
	defer s.kinds.forget()
	if err := s.ctl.ResetPreferences(); err != nil {
		return err
	}
	s.log.Info("preferences reset", "by", p.User)
	writeJSON(w, http.StatusOK, s.prefsView())
	return nil
}
