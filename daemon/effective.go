package daemon

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// EffectiveValue is one key of a loaded configuration, as `colocd config
// check` prints it: its value and where it came from.
type EffectiveValue struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// secretKey reports whether key holds a secret, which Effective never
// shows (a set secret reads "(set, hidden)").
func secretKey(key string) bool {
	last := key[strings.LastIndex(key, ".")+1:]
	return last == "tokens" || strings.HasSuffix(last, "token") || strings.Contains(last, "password") && !strings.HasSuffix(last, "_file") ||
		strings.HasSuffix(last, "_secret") || last == "http_headers"
}

// Effective lists every key of cfg, sorted, with the source Load recorded
// for it (LoadOptions.Sources; "default" where it has none). Lists and maps
// are shown as JSON, secrets hidden.
func Effective(cfg Config, sources map[string]string) []EffectiveValue {
	vals := flatten(reflect.ValueOf(cfg), "")
	out := make([]EffectiveValue, 0, len(vals))
	for k, v := range vals {
		shown := valueString(v)
		if secretKey(k) && shown != "" && shown != "[]" && shown != "null" {
			shown = "(set, hidden)"
		}
		src := sources[k]
		if src == "" {
			src = "default"
		}
		out = append(out, EffectiveValue{Key: k, Value: shown, Source: src})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func valueString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any, []string, map[string]any, map[string]string, map[string]float64:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
	if v == nil {
		return ""
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map {
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}
