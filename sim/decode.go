package sim

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// checkShape walks a decoded YAML tree against the Go type the document
// will be decoded into and reports the first problem with its key path:
// an unknown or repeated key, a mapping where a list belongs (or the other
// way round), a scalar that does not convert to the field's type. It runs
// before the strict (KnownFields) decode, whose messages carry only line
// numbers, so that every shape error names the key.
//
// budget bounds the number of nodes visited, so that aliases expanding
// into huge trees ("billion laughs") are refused rather than walked.
func checkShape(n *yaml.Node, t reflect.Type, path string, budget *int) error {
	if *budget--; *budget < 0 {
		return fieldErr(path, n, "document too large or too deeply aliased")
	}
	if n.Kind == yaml.AliasNode {
		// Aliases are resolved by yaml.v3 during Decode; an alias to a
		// well-formed node is well-formed, and cycles are refused there.
		if n.Alias == nil {
			return fieldErr(path, n, "dangling alias")
		}
		return checkShape(n.Alias, t, path, budget)
	}
	if t.Kind() == reflect.Pointer {
		if isNull(n) {
			return nil
		}
		return checkShape(n, t.Elem(), path, budget)
	}
	switch t.Kind() {
	case reflect.Struct:
		if isNull(n) {
			return nil
		}
		if n.Kind != yaml.MappingNode {
			return fieldErr(path, n, "must be a mapping of keys")
		}
		fields := yamlFields(t)
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return fieldErr(path, k, "keys must be plain strings")
			}
			p := joinKey(path, k.Value)
			if k.Value == "<<" {
				return fieldErr(p, k, "merge keys are not supported")
			}
			f, ok := fields[k.Value]
			if !ok {
				return fieldErr(p, k, "unknown key (known: "+strings.Join(sortedKeys(fields), ", ")+")")
			}
			if seen[k.Value] {
				return fieldErr(p, k, "key repeated")
			}
			seen[k.Value] = true
			if err := checkShape(v, f.Type, p, budget); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if isNull(n) {
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			return fieldErr(path, n, "must be a list")
		}
		for i, c := range n.Content {
			if err := checkShape(c, t.Elem(), path+"["+strconv.Itoa(i)+"]", budget); err != nil {
				return err
			}
		}
		return nil
	default:
		if n.Kind != yaml.ScalarNode {
			return fieldErr(path, n, "must be a single value, not a "+kindName(n.Kind))
		}
		v := reflect.New(t)
		if err := n.Decode(v.Interface()); err != nil {
			return fieldErr(path, n, fmt.Sprintf("cannot read %q as %s", n.Value, typeName(t)))
		}
		return nil
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f
	}
	return out
}

func sortedKeys(m map[string]reflect.StructField) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Small maps: insertion sort keeps this free of another import.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "document"
	}
}

func typeName(t reflect.Type) string {
	if t == reflect.TypeFor[rawDuration]() {
		return "a duration (like 10m or 1h30m) or a number of seconds"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	default:
		return t.String()
	}
}

func fieldErr(path string, n *yaml.Node, msg string) *FieldError {
	if path == "" {
		path = "(document)"
	}
	return &FieldError{Path: path, Reason: msg, Line: n.Line}
}
