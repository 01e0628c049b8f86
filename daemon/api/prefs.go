package api

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/bandit"
)

// Size limits of the matrix endpoints. One reply of GET /v1/preferences
// (JSON or CSV) holds at most maxMatrixCells cells, rows × columns: the
// whole matrix up to 316 kinds, about 4.5 MB of JSON (three matrices of
// about 45 bytes a cell in all). Beyond, a request must select kinds
// (?kinds=) or page the rows (?limit=, ?offset=).
const (
	maxMatrixCells = 100_000
	maxMatrixLimit = 10_000 // ?limit=
)

// matrixReader is what the matrix views read of the preferences when they
// have it (bandit.Learner does): a part of the matrices, without copying
// the rest.
type matrixReader interface {
	Sub(rows, cols []string) bandit.SubMatrix
	KindObservations() ([]string, []int64)
}

var _ matrixReader = (*bandit.Learner)(nil)

func (s *server) sub(rows, cols []string) bandit.SubMatrix {
	if m, ok := s.learner.(matrixReader); ok {
		return m.Sub(rows, cols)
	}
	return s.learner.Snapshot().Sub(rows, cols)
}

func (s *server) kindObservations() ([]string, []int64) {
	if m, ok := s.learner.(matrixReader); ok {
		return m.KindObservations()
	}
	return s.learner.Snapshot().KindObservations()
}

// matrixQuery is the part of the matrices a request asks for: the kinds
// of ?kinds= as rows and columns (nil: every kind, in the learner's
// order), and the page of rows ?limit= and ?offset= (limit −1: every row).
type matrixQuery struct {
	kinds         []string
	limit, offset int
}

var everyRow = matrixQuery{limit: -1}

func parseMatrixQuery(q url.Values) (matrixQuery, error) {
	mq := everyRow
	var err error
	if mq.kinds, err = parseKindFilter(q.Get("kinds"), "kinds"); err != nil {
		return mq, err
	}
	mq.limit, mq.offset, err = parsePage(q)
	return mq, err
}

// parsePage parses ?limit= (−1 when absent) and ?offset=.
func parsePage(q url.Values) (limit, offset int, err error) {
	limit = -1
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 || limit > maxMatrixLimit {
			return 0, 0, errorf(http.StatusBadRequest, "limit", "limit %q is not an integer in [0, %d]", v, maxMatrixLimit)
		}
	}
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return 0, 0, errorf(http.StatusBadRequest, "offset", "offset %q is not an integer >= 0", v)
		}
	}
	return limit, offset, nil
}

// selectMatrix resolves mq against the kinds the learner knows: the
// columns, the rows of the page and how many rows there are in all. A kind
// of ?kinds= the learner does not know is a 400 naming it; a reply over
// maxMatrixCells a 400 saying how to narrow it.
func (s *server) selectMatrix(mq matrixQuery) (cols, rows []string, total int, err error) {
	cols = s.learner.Kinds()
	if mq.kinds != nil {
		if err := unknownKinds(cols, mq.kinds); err != nil {
			return nil, nil, 0, err
		}
		cols = mq.kinds
	}
	total = len(cols)
	from := min(mq.offset, total)
	to := total
	if mq.limit >= 0 {
		to = min(from+mq.limit, total)
	}
	rows = cols[from:to]
	if cells := len(rows) * len(cols); cells > maxMatrixCells {
		most := maxMatrixCells / len(cols)
		if mq.limit < 0 {
			return nil, nil, 0, errorf(http.StatusBadRequest, "limit", "the matrix of %d kinds has %d cells, over the %d one reply holds: select kinds (?kinds=) or page the rows (?limit=, at most %d rows of %d columns)",
				len(cols), cells, maxMatrixCells, most, len(cols))
		}
		return nil, nil, 0, errorf(http.StatusBadRequest, "limit", "%d rows of %d columns are %d cells, over the %d one reply holds: ask for at most %d rows, or fewer kinds",
			len(rows), len(cols), cells, maxMatrixCells, most)
	}
	return cols, rows, total, nil
}

// unknownKinds is a 400 naming the kinds of want not in known.
func unknownKinds(known, want []string) error {
	set := make(map[string]bool, len(known))
	for _, k := range known {
		set[k] = true
	}
	var missing []string
	for _, k := range want {
		if !set[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return errorf(http.StatusBadRequest, "kinds", "unknown kinds: %s", strings.Join(missing, ", "))
	}
	return nil
}

// prefsView is the body of GET, PUT and DELETE /v1/preferences: the part
// of the matrices mq asks for.
func (s *server) prefsView(mq matrixQuery) (v1.Preferences, error) {
	cols, rows, total, err := s.selectMatrix(mq)
	if err != nil {
		return v1.Preferences{}, err
	}
	m := s.sub(rows, cols)
	v := v1.Preferences{
		Kinds: m.Cols, Rows: m.Rows, H: m.H, Pi: m.Pi, Baseline: m.Baseline,
		RowBaseline: m.RowBaseline, Observations: m.Observations,
		RowObservations: m.RowObservations, PairObservations: m.PairObservations,
		Rejected: m.Rejected, Config: wireLearnerConfig(s.learner.Config()),
		Total: total, Offset: mq.offset, KindsKnown: m.Kinds,
	}
	return v, nil
}

// prefsReply is the body of PUT and DELETE: the whole view when it stays
// within maxMatrixCells, else its page of no rows (the kinds and the
// counters).
func (s *server) prefsReply() v1.Preferences {
	v, err := s.prefsView(everyRow)
	if err != nil {
		v, _ = s.prefsView(matrixQuery{limit: 0})
	}
	return v
}

// getPreferences: GET /v1/preferences[?format=json|csv|snapshot][&matrix=pi|h|n]
// [&kinds=a,b][&limit=n][&offset=m]. json (default) is
// v1.Preferences; csv is one matrix (π, or H with matrix=h, or the
// pair observation counts with matrix=n) with a header row
// "running kind \ queued kind,<kind>,..." and one row per running kind; snapshot is
// the learner's state as a v1.PreferencesSnapshot, the format PUT accepts (always whole).
// kinds restricts rows and columns to those kinds (in that order), limit
// and offset page the rows; X-Total-Count says how many rows there are.
func (s *server) getPreferences(w http.ResponseWriter, r *http.Request, _ principal) error {
	q := r.URL.Query()
	f := q.Get("format")
	if f == "snapshot" {
		writeJSON(w, http.StatusOK, wireSnapshot(s.learner.Snapshot()))
		return nil
	}
	if f != "" && f != "json" && f != "csv" {
		return errorf(http.StatusBadRequest, "format", "format %q is not json, csv or snapshot", f)
	}
	mq, err := parseMatrixQuery(q)
	if err != nil {
		return err
	}
	m, err := matrixParam(q.Get("matrix"))
	if err != nil {
		return err
	}
	v, err := s.prefsView(mq)
	if err != nil {
		return err
	}
	values := v.Pi
	switch m {
	case "h":
		values = v.H
	case "n":
		values = make([][]float64, len(v.PairObservations))
		for i, row := range v.PairObservations {
			values[i] = make([]float64, len(row))
			for j, n := range row {
				values[i][j] = float64(n)
			}
		}
	}
	return writePage(w, v.Total, f == "csv", v, func() ([]byte, error) { return matrixCSV(v.Kinds, v.Rows, values) }, "colocd-"+m+".csv")
}

// writePage answers a paged GET: X-Total-Count, then v as JSON, or with
// csv the bytes csvOf makes, as the attachment file.
func writePage(w http.ResponseWriter, total int, csv bool, v any, csvOf func() ([]byte, error), file string) error {
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	if !csv {
		writeJSON(w, http.StatusOK, v)
		return nil
	}
	b, err := csvOf()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, file))
	_, _ = w.Write(b)
	return nil
}

func matrixParam(m string) (string, error) {
	switch m {
	case "", "pi":
		return "pi", nil
	case "h", "n":
		return m, nil
	}
	return "", errorf(http.StatusBadRequest, "matrix", "matrix %q is not pi, h or n", m)
}

// matrixCorner is the first cell of a matrix CSV: rows are the running
// kind, columns the queued kind, as on the status page, the CLI and the
// plots.
const matrixCorner = `running kind \ queued kind`

// matrixCSV writes a rows×cols matrix with a header row. Values use the
// shortest representation that parses back to the same float64; kinds are
// csvText.
func matrixCSV(cols, rowKinds []string, rows [][]float64) ([]byte, error) {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	header := make([]string, 0, len(cols)+1)
	header = append(header, matrixCorner)
	for _, k := range cols {
		header = append(header, csvText(k))
	}
	_ = cw.Write(header)
	for i, row := range rows {
		rec := make([]string, 0, len(row)+1)
		rec = append(rec, csvText(rowKinds[i]))
		for _, v := range row {
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}

// csvText makes a text cell of a CSV safe to open in a spreadsheet: a cell
// that starts with =, +, -, @, a tab or a carriage return would be read as
// a formula (CSV injection, OWASP), so it gets a leading single quote,
// which spreadsheets show as text. Numbers colocd formats itself are
// written as they are (a negative number starts with -); every cell that
// comes from a name — a kind, which the kind rule keeps from starting so,
// but a store written before that rule, or by hand, might not — goes
// through here.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// putPreferences: PUT /v1/preferences (admin) imports a v1.PreferencesSnapshot
// (as GET ?format=snapshot returns it); the engine persists it, or leaves
// the preferences as they were. The reply is prefsReply.
func (s *server) putPreferences(w http.ResponseWriter, r *http.Request, p principal) error {
	var body v1.PreferencesSnapshot
	if err := decodeJSON(w, r, s.maxBody, &body); err != nil {
		return err
	}
	snap, err := snapshotOf(body)
	if err != nil {
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
	writeJSON(w, http.StatusOK, s.prefsReply())
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
	writeJSON(w, http.StatusOK, s.prefsReply())
	return nil
}
