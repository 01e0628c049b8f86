package daemon

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/colocd/colocd/daemon/api"
)

var (
	errNotInteger = errors.New("must be an integer")
	errIntRange   = errors.New("out of range for an integer")
)

// decodeInt reads an integer of the given bits (signed or not) from what
// was written, or from raw when that is an integral number. For an
// unsigned type the result is the uint64's bits.
func decodeInt(raw any, text string, bits int, signed bool) (int64, error) {
	if !isScalar(raw) {
		return 0, errNotInteger
	}
	s := strings.TrimSpace(text)
	parse := func(base int) (int64, error) {
		if signed {
			return strconv.ParseInt(s, base, bits)
		}
		if strings.HasPrefix(s, "-") {
			return 0, errors.New("must not be negative")
		}
		u, err := strconv.ParseUint(s, base, bits)
		return int64(u), err
	}
	n, err := parse(10)
	if err != nil && errors.Is(err, strconv.ErrSyntax) {
		n, err = parse(0) // 0x1f, 0o17, 0b101, 1_000 (a leading 0 alone was decimal above)
	}
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, strconv.ErrRange):
		return 0, errIntRange
	case !errors.Is(err, strconv.ErrSyntax):
		return 0, err
	}
	f, ferr := strconv.ParseFloat(s, 64) // 1e6
	if ferr != nil {
		return 0, errNotInteger
	}
	switch {
	case math.IsInf(f, 0):
		return 0, errIntRange
	case math.IsNaN(f) || f != math.Trunc(f):
		return 0, errNotInteger
	}
	lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
	if !signed {
		lo, hi = 0, math.Ldexp(1, bits)
	}
	switch {
	case f < 0 && !signed:
		return 0, errors.New("must not be negative")
	case f < lo || f >= hi:
		return 0, errIntRange
	case !signed:
		return int64(uint64(f)), nil
	}
	return int64(f), nil
}

// decodeFloat reads a finite number from what was written, or from raw
// when that is a YAML number written in a way Go does not parse (.inf).
func decodeFloat(raw any, text string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		switch x := raw.(type) {
		case float64:
			f, err = x, nil
		case int:
			f, err = float64(x), nil
		case int64:
			f, err = float64(x), nil
		case uint64:
			f, err = float64(x), nil
		}
	}
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, errors.New("must be a finite number")
	case err != nil || !isScalar(raw):
		return 0, errors.New("must be a number")
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, errors.New("must be a finite number")
	}
	return f, nil
}

// decodeDuration reads a non-negative duration with a unit; a bare 0 is
// zero.
func decodeDuration(text string) (time.Duration, error) {
	s := strings.TrimSpace(text)
	d, err := time.ParseDuration(s)
	if err != nil {
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil && f != 0 {
			return 0, errors.New("must be a duration with a unit, such as 30s, 5m or 1h30m (a bare number is no duration)")
		}
		return 0, errors.New("must be a duration such as 30s, 5m or 1h30m")
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	return d, nil
}

// decodeStrings reads a list: a YAML list of scalars, or comma-separated
// items (the environment, a flag, or a YAML string).
func decodeStrings(key string, raw any, src source) ([]string, error) {
	switch x := raw.(type) {
	case nil:
		return []string{}, nil
	case []string:
		return slices.Clone(x), nil
	case []any:
		out := make([]string, len(x))
		for i, item := range x {
			if !isScalar(item) || item == nil {
				return nil, cfgErr(fmt.Sprintf("%s[%d]", key, i), "must be a string, got %s", describe(item))
			}
			out[i] = fmt.Sprint(item)
			if src.node != nil && src.node.Kind == yaml.SequenceNode && i < len(src.node.Content) {
				out[i] = src.node.Content[i].Value // as written: 0123, not 83
			}
		}
		return out, nil
	}
	if !isScalar(raw) {
		return nil, cfgErr(key, "must be a list, got %s", describe(raw))
	}
	text, _ := src.scalar(raw)
	if src.null() || text == "" {
		return []string{}, nil
	}
	return strings.Split(text, ","), nil
}

// decodeTokens reads tokens: a YAML list of {token, user, role}, or
// "secret:user:role" items.
func decodeTokens(key string, raw any, src source) ([]tokenConfig, error) {
	switch x := raw.(type) {
	case nil:
		return nil, nil
	case string:
		return parseTokens(x, key)
	case []any:
		var out []tokenConfig
		for i, item := range x {
			ik := fmt.Sprintf("%s[%d]", key, i)
			m, ok := item.(map[string]any)
			if !ok {
				return nil, cfgErr(ik, "must be a mapping with token, user and role, got %s", describe(item))
			}
			var node *yaml.Node
			if src.node != nil && src.node.Kind == yaml.SequenceNode && i < len(src.node.Content) {
				node = src.node.Content[i]
			}
			var tc tokenConfig
			var role, expires string
			for f, val := range m {
				var dst *string
				switch f {
				case "token":
					dst = &tc.Token
				case "user":
					dst = &tc.User
				case "role":
					dst = &role
				case "expires":
					dst = &expires
				default:
					return nil, cfgErr(ik+"."+f, "unknown key; a token has token, user, role and expires")
				}
				if !isScalar(val) {
					return nil, cfgErr(ik+"."+f, "must be a string, got %s", describe(val))
				}
				*dst = fmt.Sprint(val)
				if n := mappingValue(node, f); n != nil {
					*dst = n.Value
				}
			}
			if _, ok := m["role"]; ok {
				r, err := api.ParseRole(role)
				if err != nil {
					return nil, cfgErr(ik+".role", "%v", err)
				}
				tc.Role = r
			}
			if expires != "" {
				t, err := parseExpiry(expires)
				if err != nil {
					return nil, cfgErr(ik+".expires", "%v", err)
				}
				tc.Expires = t
			}
			out = append(out, tc)
		}
		return out, nil
	}
	return nil, cfgErr(key, "must be a list of {token, user, role}, got %s", describe(raw))
}

// decodeWeights reads group weights: a YAML mapping, whose group names
// keep their case (viper lower-cases them), or "group=weight" items.
func decodeWeights(key string, raw any, src source) (map[string]float64, error) {
	return decodeMapping(key, raw, src, "group", "weight", func(val any, text, shown string) (float64, error) {
		f, err := decodeFloat(val, text)
		if err != nil {
			return 0, fmt.Errorf("%v, got %s", err, shown)
		}
		return f, nil
	})
}

// decodeNameMap reads a mapping of names to names (metrics.hosts.map): a
// YAML mapping, whose keys keep their case, or "name=name" items.
func decodeNameMap(key string, raw any, src source) (map[string]string, error) {
	return decodeMapping(key, raw, src, "name", "name", func(val any, _, _ string) (string, error) {
		if !isScalar(val) || val == nil {
			return "", fmt.Errorf("must be a name, got %s", describe(val))
		}
		return strings.TrimSpace(fmt.Sprint(val)), nil
	})
}

// decodeMapping reads a map-valued key: nil or null (empty), the default
// (a map[string]V, copied), "k=v" items from the environment, or a YAML
// mapping whose keys keep the file's case (viper lower-cases them). A key
// given twice, or a value parse refuses, is an error naming key[k]; kname
// and vname name the items in messages.
func decodeMapping[V any](key string, raw any, src source, kname, vname string,
	parse func(val any, text, shown string) (V, error)) (map[string]V, error) {
	out := map[string]V{}
	add := func(k string, val any, text, shown string) error {
		kk := fmt.Sprintf("%s[%s]", key, k)
		if _, dup := out[k]; dup {
			return cfgErr(kk, "%s %q is given twice", kname, k)
		}
		v, err := parse(val, text, shown)
		if err != nil {
			return cfgErr(kk, "%v", err)
		}
		out[k] = v
		return nil
	}
	switch x := raw.(type) {
	case nil:
		return out, nil
	case map[string]V: // the default
		maps.Copy(out, x)
		return out, nil
	case string:
		if src.null() {
			return out, nil
		}
		for _, item := range strings.Split(x, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			k, v, ok := strings.Cut(item, "=")
			if !ok {
				return nil, cfgErr(key, "want \"%s=%s\" items, got %q", kname, vname, item)
			}
			v = strings.TrimSpace(v)
			if err := add(strings.TrimSpace(k), v, v, strconv.Quote(v)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		if n := src.node; n != nil && n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, w := n.Content[i].Value, n.Content[i+1]
				var val any
				if err := w.Decode(&val); err != nil {
					return nil, cfgErr(fmt.Sprintf("%s[%s]", key, k), "%v", err)
				}
				_, shown := source{set: true, node: w}.scalar(nil)
				if err := add(k, val, w.Value, shown); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		for k, val := range x {
			if err := add(k, val, fmt.Sprint(val), fmt.Sprint(val)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, cfgErr(key, "must be a mapping of %s to %s, got %s", kname, vname, describe(raw))
}

// mappingValue is the value of key f in mapping n (case-insensitive, as
// viper reads keys), or nil.
func mappingValue(n *yaml.Node, f string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if strings.EqualFold(n.Content[i].Value, f) && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1]
		}
	}
	return nil
}
