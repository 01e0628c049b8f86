package daemon

import (
	"encoding"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// leafField is one config key and its field's type.
type leafField struct {
	key string
	typ reflect.Type
}

// leafFields lists the config keys below t (structs recurse; everything
// else, including lists of structs and durations, is a leaf).
func leafFields(t reflect.Type, prefix string) []leafField {
	var out []leafField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, squash := fieldTag(f)
		if squash {
			out = append(out, leafFields(f.Type, prefix)...)
			continue
		}
		if tag == "" {
			continue
		}
		key := prefix + tag
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			out = append(out, leafFields(f.Type, key+".")...)
			continue
		}
		out = append(out, leafField{key, f.Type})
	}
	return out
}

// fieldTag is f's key ("" for none) and whether its fields belong to the
// enclosing section (an embedded struct tagged ",squash").
func fieldTag(f reflect.StructField) (key string, squash bool) {
	tag := f.Tag.Get("mapstructure")
	if tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	return name, name == "" && f.Anonymous && opts == "squash"
}

// flatten maps every leaf key to its value (durations as strings, lists of
// structs as lists of maps) for viper.SetDefault.
func flatten(v reflect.Value, prefix string) map[string]any {
	out := map[string]any{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, squash := fieldTag(f)
		if squash {
			maps.Copy(out, flatten(v.Field(i), prefix))
			continue
		}
		if tag == "" {
			continue
		}
		key := prefix + tag
		fv := v.Field(i)
		switch {
		case f.Type == durationType:
			out[key] = fv.Interface().(time.Duration).String()
		case f.Type.Kind() == reflect.Struct:
			for k, x := range flatten(fv, key+".") {
				out[k] = x
			}
		case f.Type == reflect.TypeOf([]tokenConfig{}):
			var list []any
			for _, tc := range fv.Interface().([]tokenConfig) {
				item := map[string]any{"token": tc.Token, "user": tc.User, "role": tc.Role.String()}
				if !tc.Expires.IsZero() {
					item["expires"] = tc.Expires.Format(time.RFC3339)
				}
				list = append(list, item)
			}
			out[key] = list
		case f.Type.Kind() == reflect.String:
			out[key] = fv.String()
		case f.Type.Implements(textMarshalerType):
			if b, err := fv.Interface().(encoding.TextMarshaler).MarshalText(); err == nil {
				out[key] = string(b)
			} else { // not a valid value: Validate names it
				out[key] = fmt.Sprint(fv.Interface())
			}
		default:
			out[key] = fv.Interface()
		}
	}
	return out
}

func setPath(m map[string]any, path []string, val any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = val
}

// The types decodeValue converts to besides scalars.
var (
	durationType = reflect.TypeOf(time.Duration(0))
	tokensType   = reflect.TypeOf([]tokenConfig{})
	stringsType  = reflect.TypeOf([]string{})
	weightsType  = reflect.TypeOf(map[string]float64{})
	nameMapType  = reflect.TypeOf(map[string]string{})

	textMarshalerType = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

// fileValues parses the YAML config and returns its values by key path,
// lower-cased as viper reads them. Two keys of one mapping that are equal
// or differ only in case are an error naming both: viper would keep one
// of them silently. Below a map-valued key (pipeline.fairness.weights)
// the keys are group names, which keep their case.
func fileValues(file string, b []byte) (map[string]*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: parse %s: %v", ErrConfig, file, err)
	}
	mapValued := map[string]bool{}
	for _, k := range mapKeys() {
		mapValued[k] = true
	}
	out := map[string]*yaml.Node{}
	var walk func(n *yaml.Node, path string, exact bool) error
	walk = func(n *yaml.Node, path string, exact bool) error {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if err := walk(c, path, false); err != nil {
					return err
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if err := walk(c, fmt.Sprintf("%s[%d]", path, i), false); err != nil {
					return err
				}
			}
		case yaml.MappingNode:
			seen := map[string]*yaml.Node{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, val := n.Content[i], n.Content[i+1]
				name := k.Value
				if !exact {
					name = strings.ToLower(name)
				}
				key := name
				if path != "" {
					key = path + "." + name
				}
				if prev, ok := seen[name]; ok {
					how := "given twice"
					if prev.Value != k.Value {
						how += " (keys are case-insensitive)"
					}
					return &configError{Key: key, Reason: fmt.Sprintf("%s in %s: %q on line %d and %q on line %d",
						how, file, prev.Value, prev.Line, k.Value, k.Line)}
				}
				seen[name] = k
				out[key] = val
				if err := walk(val, key, mapValued[key]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(&doc, "", false); err != nil {
		return nil, err
	}
	return out, nil
}

// source is where a key's value came from; the zero source is the default.
type source struct {
	set  bool       // the file, the environment or a flag set the key
	env  string     // the variable, when the environment did
	text string     // what the environment or the flag said
	node *yaml.Node // the file's value, when the file did
}

// scalar returns what the user wrote for a scalar value and how to show
// it in a message: YAML numbers and booleans bare, strings quoted.
func (s source) scalar(raw any) (text, shown string) {
	switch {
	case s.node != nil && s.node.Kind == yaml.ScalarNode:
		if s.node.ShortTag() == "!!str" {
			return s.node.Value, strconv.Quote(s.node.Value)
		}
		return s.node.Value, s.node.Value
	case s.node != nil && s.node.Kind == yaml.SequenceNode:
		return "", "a list"
	case s.node != nil:
		return "", "a mapping"
	case s.set:
		return s.text, strconv.Quote(s.text)
	}
	text = fmt.Sprint(raw)
	return text, text
}

// null reports whether the file gave the key no value ("key:" or "key: ~").
func (s source) null() bool {
	return s.node != nil && s.node.Kind == yaml.ScalarNode && s.node.ShortTag() == "!!null"
}

// decodeValue converts raw, the value viper holds for key, to t, or
// returns a *configError naming the key and what is wrong. Nothing is
// rounded, truncated, wrapped or guessed:
//
//   - integers: decimal digits (0x, 0o, 0b and _ accepted; a leading 0 is
//     decimal), or an integral number such as 1e6; a fraction, or a value
//     outside the type, is an error quoting what was written;
//   - durations: Go durations with a unit (30s, 1h30m) and never negative;
//     a bare number other than 0 is an error, not nanoseconds;
//   - numbers: finite;
//   - booleans: true or false (strconv.ParseBool: also 1/0, t/f);
//   - strings: exactly what was written, also for a YAML number (0123);
//   - lists: YAML lists, or comma-separated items;
//   - tokens: a list of {token, user, role}, or "secret:user:role" items;
//   - weights: a map of group → number, or "group=weight" items, each group
//     once, its case kept.
//
// A key the file gives no value, or a variable set to "", is an error for
// numbers, durations and booleans; strings and lists become empty.
func decodeValue(key string, t reflect.Type, raw any, src source) (any, error) {
	text, shown := src.scalar(raw)
	empty := src.null() || (src.set && src.node == nil && strings.TrimSpace(text) == "")
	switch t {
	case durationType:
		if empty {
			return nil, noValue(key, src)
		}
		if !isScalar(raw) {
			return nil, cfgErr(key, "must be a duration such as 30s, 5m or 1h30m, got %s", describe(raw))
		}
		d, err := decodeDuration(text)
		if err != nil {
			return nil, cfgErr(key, "%v, got %s", err, shown)
		}
		return d, nil
	case tokensType:
		return decodeTokens(key, raw, src)
	case stringsType:
		return decodeStrings(key, raw, src)
	case weightsType:
		return decodeWeights(key, raw, src)
	case nameMapType:
		return decodeNameMap(key, raw, src)
	}
	if isStructList(t) {
		return decodeStructList(key, t, raw, src)
	}
	out := reflect.New(t).Elem()
	if u, ok := out.Addr().Interface().(encoding.TextUnmarshaler); ok && t.Kind() != reflect.String {
		// A named value of its owner's (bandit.BaselineMode): its own
		// names, its own error.
		if !isScalar(raw) || empty {
			return nil, cfgErr(key, "must be a name, got %s", describe(raw))
		}
		if err := u.UnmarshalText([]byte(strings.TrimSpace(text))); err != nil {
			return nil, cfgErr(key, "%v", err)
		}
		return out.Interface(), nil
	}
	if err := setScalar(key, out, raw, text, shown, empty, src); err != nil {
		return nil, err
	}
	return out.Interface(), nil
}

// setScalar sets out, a string, a bool or a number, from what was written
// (text; shown is how an error quotes it; empty: no value given).
func setScalar(key string, out reflect.Value, raw any, text, shown string, empty bool, src source) error {
	switch out.Kind() {
	case reflect.String:
		if !isScalar(raw) {
			return cfgErr(key, "must be a string, got %s", describe(raw))
		}
		if src.null() {
			text = ""
		}
		out.SetString(text)
	case reflect.Bool:
		if empty {
			return noValue(key, src)
		}
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil || !isScalar(raw) {
			return cfgErr(key, "must be true or false, got %s", shown)
		}
		out.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if empty {
			return noValue(key, src)
		}
		n, err := decodeInt(raw, text, out.Type().Bits(), true)
		if err != nil {
			return cfgErr(key, "%v, got %s", err, shown)
		}
		out.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if empty {
			return noValue(key, src)
		}
		n, err := decodeInt(raw, text, out.Type().Bits(), false)
		if err != nil {
			return cfgErr(key, "%v, got %s", err, shown)
		}
		out.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		if empty {
			return noValue(key, src)
		}
		f, err := decodeFloat(raw, text)
		if err != nil {
			return cfgErr(key, "%v, got %s", err, shown)
		}
		out.SetFloat(f)
	default:
		return cfgErr(key, "has type %s, which the config loader does not decode", out.Type())
	}
	return nil
}

func noValue(key string, src source) error {
	if src.env != "" {
		return cfgErr(key, "is empty; unset the variable to keep the default")
	}
	return cfgErr(key, "has no value; give one or remove the key to keep the default")
}

func isScalar(v any) bool {
	switch v.(type) {
	case []any, map[string]any, []string, map[string]float64, map[string]string:
		return false
	}
	return true
}

// describe names the shape of a value that is not the scalar wanted.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "no value"
	case []any, []string:
		return "a list"
	case map[string]any, map[string]float64, map[string]string:
		return "a mapping"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

// nearest is the known key closest to key by edit distance, if close.
func nearest(key string, known []string) string {
	best, bestD := "", 4
	for _, k := range known {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
