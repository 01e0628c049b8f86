package yarnclient_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/yarnclient"
)

// documentedToken is the token of ResourceManagerRest.md's "Creating a
// token" JSON example.
const documentedToken = "MgASY2xpZW50QEVYQU1QTEUuQ09NDHRlc3QtcmVuZXdlcgCKAUckiEZpigFHSJTKaQECFN9EMM9BzfPoDxu572EVUpzqhnSGE1JNX0RFTEVHQVRJT05fVE9LRU4A"

// TestDocumentedToken: the RM's documented token decodes as Hadoop's
// Token writable around an AbstractDelegationTokenIdentifier, and encodes
// back to the same string (URL-safe base64, no padding).
func TestDocumentedToken(t *testing.T) {
	tok, err := yarnclient.ParseToken(documentedToken)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind != yarnclient.KindRMDelegation || tok.Service != "" || len(tok.Password) != 20 {
		t.Errorf("token: kind %q, service %q, %d-byte password; want RM_DELEGATION_TOKEN, none, 20 (HMAC-SHA1)", tok.Kind, tok.Service, len(tok.Password))
	}
	id, err := yarnclient.ParseTokenIdentifier(tok.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	want := yarnclient.TokenIdentifier{Owner: "client@EXAMPLE.COM", Renewer: "test-renewer",
		IssueDate: 1405067216489, MaxDate: 1405672016489, SequenceNumber: 1, MasterKeyID: 2}
	if diff := cmp.Diff(want, id); diff != "" {
		t.Errorf("identifier (-want +got):\n%s", diff)
	}
	if got := tok.Encode(); got != documentedToken {
		t.Errorf("Encode = %s, want the documented %s", got, documentedToken)
	}
	if got := id.Marshal(); string(got) != string(tok.Identifier) {
		t.Errorf("Marshal = %x, want %x", got, tok.Identifier)
	}
	// decodeFromUrlString also takes padding and the standard alphabet.
	std := strings.NewReplacer("-", "+", "_", "/").Replace(documentedToken) + "=="
	if again, err := yarnclient.ParseToken(std); err != nil || again.Encode() != documentedToken {
		t.Errorf("ParseToken(standard alphabet, padded) = %v, %v", again, err)
	}
}

// TestTokenIdentifierRoundTrip: every width of Hadoop's variable-length
// integers survives Marshal and ParseTokenIdentifier.
func TestTokenIdentifierRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 127, 128, -112, -113, 255, 256, 1 << 16, 1<<31 - 1, -1 << 31, 1 << 40,
		1405153616489, math.MaxInt64, math.MinInt64} {
		id := yarnclient.TokenIdentifier{Owner: "alice", Renewer: "yarn", RealUser: "colocd", IssueDate: v, MaxDate: -v,
			SequenceNumber: int32(v), MasterKeyID: int32(v >> 32)}
		got, err := yarnclient.ParseTokenIdentifier(id.Marshal())
		if err != nil || got != id {
			t.Errorf("%d: ParseTokenIdentifier(Marshal) = %+v, %v; want %+v", v, got, err, id)
		}
	}
	tok := yarnclient.Token{Identifier: make([]byte, 300), Password: []byte{0, 0xff}, Kind: "HDFS_DELEGATION_TOKEN", Service: "ha-hdfs:ns1"}
	got, err := yarnclient.ParseToken(tok.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tok, got); diff != "" {
		t.Errorf("token round trip (-want +got):\n%s", diff)
	}
}

func TestParseTokenRejects(t *testing.T) {
	full, _ := yarnclient.ParseToken(documentedToken)
	for name, s := range map[string]string{
		"empty":          "",
		"not base64":     "not a token!",
		"truncated":      documentedToken[:40],
		"trailing bytes": yarnclient.Token{Kind: "K"}.Encode() + "AA",
		"negative len":   "_w", // vint -1
		"too long":       strings.Repeat("A", 200000),
		"json":           `{"token":"x"}`,
	} {
		if tok, err := yarnclient.ParseToken(s); err == nil {
			t.Errorf("%s: ParseToken = %+v, want an error", name, tok)
		}
	}
	if _, err := yarnclient.ParseTokenIdentifier(full.Password); err == nil {
		t.Error("ParseTokenIdentifier of a password: no error")
	}
	if _, err := yarnclient.ParseTokenIdentifier(append([]byte{1}, full.Identifier[1:]...)); err == nil {
		t.Error("ParseTokenIdentifier of version 1: no error")
	}
}

// FuzzParseToken: a token that decodes encodes back to one that decodes
// to the same.
func FuzzParseToken(f *testing.F) {
	f.Add(documentedToken)
	f.Add("JQAIaG9y")
	f.Add("")
	f.Add("_____w")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := yarnclient.ParseToken(s)
		if err != nil {
			return
		}
		again, err := yarnclient.ParseToken(tok.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tok, again); diff != "" {
			t.Errorf("(-first +second):\n%s", diff)
		}
	})
}

// TestCredentials: tokens join the documented submission's
// am-container-spec under credentials.tokens as a JAXB map, replacing one
// of the same alias and keeping the rest as written.
func TestCredentials(t *testing.T) {
	b, err := os.ReadFile("testdata/submit/hadoop-3-request.json")
	if err != nil {
		t.Fatal(err)
	}
	var sub yarnclient.SubmissionContext
	if err := json.Unmarshal(b, &sub); err != nil {
		t.Fatal(err)
	}
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(sub.AMContainerSpec, &spec); err != nil {
		t.Fatal(err)
	}
	spec["credentials"] = json.RawMessage(`{"tokens":{"entry":{"key":"old","value":"stale"}},"secrets":{"entry":[{"key":"s1","value":"c2VjcmV0MQ"}]}}`)
	sub.AMContainerSpec = marshalNoEscape(t, spec)
	before := sub.Clone()

	if err := sub.AddTokens(map[string]string{"old": "fresh", "ha-hdfs:ns1": "hdfs-token"}); err != nil {
		t.Fatal(err)
	}
	got, err := sub.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	want := yarnclient.Credentials{Tokens: map[string]string{"old": "fresh", "ha-hdfs:ns1": "hdfs-token"},
		Secrets: map[string]string{"s1": "c2VjcmV0MQ"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	var after map[string]json.RawMessage
	if err := json.Unmarshal(sub.AMContainerSpec, &after); err != nil {
		t.Fatal(err)
	}
	for k, v := range spec {
		var was bytes.Buffer
		if err := json.Compact(&was, v); err != nil {
			t.Fatal(err)
		}
		if k != "credentials" && string(after[k]) != was.String() {
			t.Errorf("am-container-spec %s changed:\n%s\nto\n%s", k, was.String(), after[k])
		}
	}
	if !strings.Contains(string(sub.AMContainerSpec), "1><LOG_DIR>/AppMaster.stdout") {
		t.Error("<LOG_DIR> escaped in the am-container-spec")
	}
	if wantTokens := `"tokens":{"entry":[{"key":"ha-hdfs:ns1","value":"hdfs-token"},{"key":"old","value":"fresh"}]}`; !strings.Contains(string(after["credentials"]), wantTokens) {
		t.Errorf("credentials %s, want tokens %s", after["credentials"], wantTokens)
	}
	if c, _ := before.Credentials(); c.Tokens["old"] != "stale" {
		t.Errorf("the clone taken before changed: %v", c.Tokens)
	}

	for name, spec := range map[string]string{"array": `[]`, "credentials array": `{"credentials":[1]}`, "entry without key": `{"credentials":{"tokens":{"entry":{"value":"v"}}}}`} {
		s := yarnclient.SubmissionContext{AMContainerSpec: json.RawMessage(spec)}
		if err := s.AddTokens(map[string]string{"a": "b"}); err == nil {
			t.Errorf("%s: AddTokens to %s: no error", name, spec)
		}
	}
	var none yarnclient.SubmissionContext
	if err := none.AddTokens(map[string]string{"a": "b"}); err != nil || string(none.AMContainerSpec) != `{"credentials":{"tokens":{"entry":[{"key":"a","value":"b"}]}}}` {
		t.Errorf("AddTokens to no am-container-spec: %s, %v", none.AMContainerSpec, err)
	}
}

// marshalNoEscape encodes v as the client does, without HTML escapes.
func marshalNoEscape(t *testing.T, v any) json.RawMessage {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}
