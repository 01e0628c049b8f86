package yarnclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// credentials is the credentials object of a submission's
// am-container-spec (ResourceManagerRest.md, "Elements of the credentials
// object"): what the ApplicationMaster is given to authenticate with, by
// alias. Tokens holds tokens as Token.Encode writes them (the RM reads each
// with Token.decodeFromUrlString, and its own Cluster Delegation Tokens API
// and WebHDFS's GETDELEGATIONTOKEN return them in that form); Secrets
// holds base64 secrets. On the wire each is a JAXB map,
// {"entry":[{"key":..,"value":..}]}, a single entry possibly as a bare
// object.
type credentials struct {
	Tokens  map[string]string
	Secrets map[string]string
}

// entry is one key/value pair of a JAXB map.
type entry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// jaxbMap is a JAXB map on the wire: {"entry": [...]} or {"entry": {...}};
// null, "" and {} are empty.
type jaxbMap struct {
	Entry oneOrMany[entry] `json:"entry"`
}

func (m *jaxbMap) UnmarshalJSON(b []byte) error {
	b = trimSpace(b)
	if len(b) == 0 || string(b) == "null" || string(b) == `""` {
		*m = jaxbMap{}
		return nil
	}
	type plain jaxbMap
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = jaxbMap(p)
	return nil
}

func (m jaxbMap) values(what string) (map[string]string, error) {
	out := make(map[string]string, len(m.Entry))
	for _, e := range m.Entry {
		if e.Key == "" {
			return nil, fmt.Errorf("%s: an entry without a key", what)
		}
		if _, dup := out[e.Key]; dup {
			return nil, fmt.Errorf("%s: key %q twice", what, e.Key)
		}
		out[e.Key] = e.Value
	}
	return out, nil
}

func entriesOf(m map[string]string) jaxbMap {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := jaxbMap{Entry: make(oneOrMany[entry], 0, len(keys))}
	for _, k := range keys {
		out.Entry = append(out.Entry, entry{Key: k, Value: m[k]})
	}
	return out
}

// Credentials decodes the am-container-spec's credentials; none is an
// empty credentials.
func (s SubmissionContext) Credentials() (credentials, error) {
	var spec struct {
		Credentials *struct {
			Tokens  jaxbMap `json:"tokens"`
			Secrets jaxbMap `json:"secrets"`
		} `json:"credentials"`
	}
	if len(trimSpace(s.AMContainerSpec)) > 0 {
		if err := json.Unmarshal(s.AMContainerSpec, &spec); err != nil {
			return credentials{}, fmt.Errorf("am-container-spec: %w", err)
		}
	}
	out := credentials{Tokens: map[string]string{}, Secrets: map[string]string{}}
	if spec.Credentials == nil {
		return out, nil
	}
	var err error
	if out.Tokens, err = spec.Credentials.Tokens.values("am-container-spec.credentials.tokens"); err != nil {
		return credentials{}, err
	}
	if out.Secrets, err = spec.Credentials.Secrets.values("am-container-spec.credentials.secrets"); err != nil {
		return credentials{}, err
	}
	return out, nil
}

// AddTokens puts tokens (alias → Token.Encode) into the am-container-spec's
// credentials.tokens, replacing a token of the same alias. Every other key
// of the am-container-spec and of its credentials is kept as written (the
// objects' keys come out sorted).
func (s *SubmissionContext) AddTokens(tokens map[string]string) error {
	if len(tokens) == 0 {
		return nil
	}
	cur, err := s.Credentials()
	if err != nil {
		return err
	}
	for k, v := range tokens {
		if k == "" {
			return fmt.Errorf("%w: AddTokens: a token without an alias", ErrInvalid)
		}
		cur.Tokens[k] = v
	}
	spec, err := rawObject("am-container-spec", s.AMContainerSpec)
	if err != nil {
		return err
	}
	creds, err := rawObject("am-container-spec.credentials", spec["credentials"])
	if err != nil {
		return err
	}
	if creds["tokens"], err = marshalNoEscape(entriesOf(cur.Tokens)); err != nil {
		return err
	}
	if spec["credentials"], err = marshalNoEscape(creds); err != nil {
		return err
	}
	if s.AMContainerSpec, err = marshalNoEscape(spec); err != nil {
		return err
	}
	return nil
}

// rawObject decodes a JSON object, keeping its values as written; nothing
// or null is an empty one.
func rawObject(what string, b json.RawMessage) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if b = trimSpace(b); len(b) == 0 || string(b) == "null" {
		return out, nil
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("%s: not a JSON object", what)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// marshalNoEscape is json.Marshal without the HTML escaping, so that
// "<LOG_DIR>" and friends stay as the submitter wrote them.
func marshalNoEscape(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
