package daemon

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"gopkg.in/yaml.v3"
)

// isStructList reports whether t is a list of sections decoded item by
// item (pipeline.fairness.queues); tokens have their own decoder.
func isStructList(t reflect.Type) bool {
	return t != tokensType && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
}

// decodeStructList reads a YAML list of mappings into a slice of t's
// element, each item's keys decoded as the element's fields are anywhere
// else in the file (decodeValue), so an item's key has the same rules and
// errors, named like pipeline.fairness.queues[1].alpha.vcores. Unknown
// keys in an item are errors. Such a list is set in the config file only.
func decodeStructList(key string, t reflect.Type, raw any, src source) (any, error) {
	out := reflect.MakeSlice(t, 0, 0)
	switch {
	case src.null() || (!src.set && raw == nil):
		return out.Interface(), nil
	case !src.set:
		if v := reflect.ValueOf(raw); v.Type() == t {
			return raw, nil // the default
		}
		return out.Interface(), nil
	case src.node == nil:
		return nil, cfgErr(key, "a list of sections is set in the config file only, got %s", strings.TrimSpace(src.text))
	case src.node.Kind != yaml.SequenceNode:
		return nil, cfgErr(key, "must be a list, got %s", shownNode(src.node))
	}
	leaves := leafFields(t.Elem(), "")
	for i, item := range src.node.Content {
		ik := fmt.Sprintf("%s[%d]", key, i)
		if item.Kind == yaml.AliasNode {
			item = item.Alias
		}
		if item.Kind != yaml.MappingNode {
			return nil, cfgErr(ik, "must be a mapping, got %s", shownNode(item))
		}
		if err := checkItemKeys(ik, item, "", leaves); err != nil {
			return nil, err
		}
		values := map[string]any{}
		for _, lf := range leaves {
			n := nodeAt(item, strings.Split(lf.key, "."))
			var val any
			var err error
			if n == nil {
				val = reflect.Zero(lf.typ).Interface()
			} else {
				var x any
				if err := n.Decode(&x); err != nil {
					return nil, cfgErr(ik+"."+lf.key, "%v", err)
				}
				if val, err = decodeValue(ik+"."+lf.key, lf.typ, x, source{set: true, node: n}); err != nil {
					return nil, err
				}
			}
			setPath(values, strings.Split(lf.key, "."), val)
		}
		elem := reflect.New(t.Elem())
		if err := mapstructure.Decode(values, elem.Interface()); err != nil {
			return nil, cfgErr(ik, "%v", err)
		}
		out = reflect.Append(out, elem.Elem())
	}
	return out.Interface(), nil
}

// checkItemKeys refuses an item's keys that are no field of the element.
func checkItemKeys(ik string, n *yaml.Node, prefix string, leaves []leafField) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := prefix + strings.ToLower(n.Content[i].Value)
		isLeaf := slices.ContainsFunc(leaves, func(lf leafField) bool { return lf.key == k })
		isSect := slices.ContainsFunc(leaves, func(lf leafField) bool { return strings.HasPrefix(lf.key, k+".") })
		switch {
		case isLeaf:
		case isSect && n.Content[i+1].Kind == yaml.MappingNode:
			if err := checkItemKeys(ik, n.Content[i+1], k+".", leaves); err != nil {
				return err
			}
		case isSect:
			return cfgErr(ik+"."+k, "is a section, not a value: set its keys")
		default:
			var names []string
			for _, lf := range leaves {
				names = append(names, lf.key)
			}
			return cfgErr(ik+"."+k, "unknown key; an item has %s", strings.Join(names, ", "))
		}
	}
	return nil
}

// nodeAt is the value of the mapping path below n, or nil.
func nodeAt(n *yaml.Node, path []string) *yaml.Node {
	for _, p := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if strings.EqualFold(n.Content[i].Value, p) {
				next = n.Content[i+1]
			}
		}
		n = next
		if n != nil && n.Kind == yaml.AliasNode {
			n = n.Alias
		}
	}
	return n
}

// shownNode is how an error shows a value that is not the shape wanted.
func shownNode(n *yaml.Node) string {
	_, shown := source{set: true, node: n}.scalar(nil)
	return shown
}
