package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// decodeJSON reads r's body into v strictly: Content-Type must be
// application/json (415), the body at most maxBody bytes (413), one JSON
// value with no unknown fields and no trailing data (400 naming the field
// where the decoder can tell).
func decodeJSON(w http.ResponseWriter, r *http.Request, maxBody int64, v any) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		if ct == "" {
			ct = "none"
		}
		return errorf(http.StatusUnsupportedMediaType, "", "Content-Type must be application/json, got %s", ct)
	}
	if r.ContentLength > maxBody {
		return errorf(http.StatusRequestEntityTooLarge, "", "request body is %d bytes, over the limit of %d", r.ContentLength, maxBody)
	}
	body := http.MaxBytesReader(w, r.Body, maxBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, maxBody)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return jsonError(err, maxBody)
		}
		return errorf(http.StatusBadRequest, "", "malformed JSON: more than one value in the body")
	}
	return nil
}

// jsonError maps a decoding error to the response that explains it.
func jsonError(err error, maxBody int64) *httpError {
	var (
		tooBig  *http.MaxBytesError
		syntax  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooBig):
		return errorf(http.StatusRequestEntityTooLarge, "", "request body over the limit of %d bytes", maxBody)
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "", "malformed JSON: empty body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, "", "malformed JSON: body ends early")
	case errors.As(err, &syntax):
		return errorf(http.StatusBadRequest, "", "malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return errorf(http.StatusBadRequest, "", "body must be a JSON %s, got %s", typeErr.Type, typeErr.Value)
		}
		return errorf(http.StatusBadRequest, field, "field %s: want %s, got JSON %s", field, jsonKind(typeErr.Type.String()), typeErr.Value)
	}
	// encoding/json reports unknown fields only as text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if f, err := strconv.Unquote(name); err == nil {
			name = f
		}
		return errorf(http.StatusBadRequest, name, "unknown field %q", name)
	}
	var he *httpError
	if errors.As(err, &he) {
		return he
	}
	return errorf(http.StatusBadRequest, "", "malformed JSON: %v", err)
}

// jsonKind names a Go type the way a JSON client thinks of it.
func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "struct"), strings.Contains(goType, "."):
		return "an object"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return fmt.Sprintf("a %s", goType)
}

// queryInt parses an optional positive integer query parameter.
func queryInt(r *http.Request, name string, def, maxV int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxV {
		return 0, errorf(http.StatusBadRequest, name, "%s must be an integer in [1, %d], got %q", name, maxV, s)
	}
	return n, nil
}
