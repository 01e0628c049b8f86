package api

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// decodeJSON reads r's body into v strictly: Content-Type must be
// application/json (415), the body at most maxBody bytes (413), arrive
// within the server's read timeout (408) and be valid UTF-8 (400 naming the
// offset of the first bad byte); it must hold one JSON value with no
// trailing data, whose object keys are v's JSON field names exactly (case
// included: encoding/json would take "KIND" for "kind"), with no key twice
// in any object (encoding/json would keep the last) and no unknown fields,
// at every level. Errors are 400 naming the field where they can.
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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return bodyError(err, maxBody)
	}
	return unmarshalStrict(body, v)
}

// bodyError maps an error reading the request body.
func bodyError(err error, maxBody int64) *httpError {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return errorf(http.StatusRequestEntityTooLarge, "", "request body over the limit of %d bytes", maxBody)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errorf(http.StatusRequestTimeout, "", "request body not received within the server's read timeout")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, "", "malformed JSON: body ends early")
	}
	return errorf(http.StatusBadRequest, "", "reading the request body: %v", err)
}

// unmarshalStrict decodes body into v with decodeJSON's rules.
func unmarshalStrict(body []byte, v any) error {
	if i := invalidUTF8(body); i >= 0 {
		return errorf(http.StatusBadRequest, "", "request body is not valid UTF-8: byte 0x%02x at offset %d", body[i], i)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if !json.Valid(body) {
		return syntaxError(dec)
	}
	// One well-formed value: its keys first (encoding/json would match them
	// loosely), then the types.
	k := keyChecker{b: body}
	if err := k.value(reflect.TypeOf(v)); err != nil {
		return err
	}
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	return nil
}

// syntaxError explains why a body that is not one well-formed JSON value is
// not, with encoding/json's own words.
func syntaxError(dec *json.Decoder) *httpError {
	var v, extra json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return jsonError(err)
	}
	if err := dec.Decode(&extra); err != nil && !errors.Is(err, io.EOF) {
		return jsonError(err)
	}
	return errorf(http.StatusBadRequest, "", "malformed JSON: more than one value in the body")
}

// invalidUTF8 is the offset of the first byte of body that is not valid
// UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// keyChecker walks one well-formed JSON value (json.Valid: so its nesting is
// at most encoding/json's 10,000 levels) beside t, the Go type it is decoded
// into: in an object decoded into a struct, every key must be one of the
// struct's JSON names exactly; in every object, no key may repeat. Objects
// decoded into maps, json.RawMessage or any other type that decodes itself
// are checked for repeated keys only. It reads each byte once.
type keyChecker struct {
	b []byte
	i int // the next byte to read
	// path is where the value being checked sits, one step per level; it
	// is spelt out only for an error (building it at every level would
	// cost O(depth²)).
	path []step
}

// step is one level of a path: an object key (in a map when inMap), or an
// array index.
type step struct {
	key   string
	index int
	array bool
	inMap bool
}

// at spells out the path, as the queue names fields: "resources.vcores",
// "labels[team]", "submit.am[2].x".
func (k *keyChecker) at() string {
	var b strings.Builder
	for i, s := range k.path {
		switch {
		case s.array:
			fmt.Fprintf(&b, "[%d]", s.index)
		case s.inMap:
			fmt.Fprintf(&b, "[%s]", s.key)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		}
	}
	return b.String()
}

// value checks the value at k.i, to be decoded into t (nil: unknown, so
// keys are free), and moves past it.
func (k *keyChecker) value(t reflect.Type) error {
	k.space()
	switch k.b[k.i] {
	case '[':
		k.i++
		var elem reflect.Type
		if t = plainType(t); t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for n := 0; ; n++ {
			if k.space(); k.b[k.i] == ']' {
				k.i++
				return nil
			}
			k.path = append(k.path, step{index: n, array: true})
			if err := k.value(elem); err != nil {
				return err
			}
			k.path = k.path[:len(k.path)-1]
			k.comma()
		}
	case '{':
		k.i++
		var (
			fields map[string]reflect.Type // t is a struct
			elem   reflect.Type            // t is a map
		)
		t = plainType(t)
		inMap := t != nil && t.Kind() == reflect.Map
		switch {
		case t != nil && t.Kind() == reflect.Struct:
			fields = jsonFields(t)
		case inMap:
			elem = t.Elem()
		}
		var seen map[string]bool
		for {
			if k.space(); k.b[k.i] == '}' {
				k.i++
				return nil
			}
			key := k.key()
			k.path = append(k.path, step{key: key, inMap: inMap})
			if seen[key] {
				at := k.at()
				return errorf(http.StatusBadRequest, at, "duplicate key %q", at)
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[key] = true
			vt := elem
			if fields != nil {
				ft, ok := fields[key]
				if !ok {
					return errorf(http.StatusBadRequest, key, "unknown field %q", key)
				}
				vt = ft
			}
			k.space()
			k.i++ // ':'
			if err := k.value(vt); err != nil {
				return err
			}
			k.path = k.path[:len(k.path)-1]
			k.comma()
		}
	case '"':
		k.str()
	default: // a number, true, false or null
		for k.i < len(k.b) && !strings.ContainsRune(",]} \t\n\r", rune(k.b[k.i])) {
			k.i++
		}
	}
	return nil
}

// space skips white space.
func (k *keyChecker) space() {
	for k.i < len(k.b) && (k.b[k.i] == ' ' || k.b[k.i] == '\t' || k.b[k.i] == '\n' || k.b[k.i] == '\r') {
		k.i++
	}
}

// comma skips a comma between elements, if there is one.
func (k *keyChecker) comma() {
	if k.space(); k.b[k.i] == ',' {
		k.i++
	}
}

// str moves past the string at k.i and returns it as written, quotes
// included.
func (k *keyChecker) str() []byte {
	start := k.i
	for k.i++; k.b[k.i] != '"'; k.i++ {
		if k.b[k.i] == '\\' {
			k.i++ // the escaped byte cannot end the string
		}
	}
	k.i++
	return k.b[start:k.i]
}

// key reads an object key, escapes resolved as encoding/json resolves them
// ("k\u0069nd" is "kind").
func (k *keyChecker) key() string {
	raw := k.str()
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // well-formed: it cannot fail
	return s
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// plainType is t without pointers, or nil when t is nil or decodes itself
// (its keys are its own business).
func plainType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	if p := reflect.PointerTo(t); p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler) {
		return nil
	}
	return t
}

// fieldCache maps a struct type to jsonFields' answer.
var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON names encoding/json decodes struct t's fields
// from to their types: exported fields, named by their json tag, fields of
// untagged embedded structs promoted, "-" left out.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	addFields(m, t, 0)
	fieldCache.Store(t, m)
	return m
}

func addFields(m map[string]reflect.Type, t reflect.Type, depth int) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && f.Tag.Get("json") == "-" {
			continue
		}
		ft := f.Type
		if f.Anonymous && name == "" {
			if et := derefType(ft); et.Kind() == reflect.Struct && depth < 8 {
				addFields(m, et, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := m[name]; !dup || depth == 0 {
			m[name] = ft
		}
	}
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonError maps a decoding error to the response that explains it.
func jsonError(err error) *httpError {
	var (
		syntax  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
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
