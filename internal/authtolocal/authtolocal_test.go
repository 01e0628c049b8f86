package authtolocal

import (
	"errors"
	"strings"
	"testing"
)

func TestAuthToLocal(t *testing.T) {
	a, err := Parse([]string{
		`RULE:[2:$1@$0](rm@.*EXAMPLE\.ORG)s/.*/yarn/`,
		`RULE:[1:$1@$0](.*@PARTNER\.ORG)s/@.*//L`,
		`RULE:[2:$1/$2@$0](airflow/.*@EXAMPLE\.ORG)s/^([a-z]+).*$/$1-svc/`,
		"DEFAULT",
	}, "EXAMPLE.ORG")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ principal, want, err string }{
		{"alice@EXAMPLE.ORG", "alice", ""},
		{"colocd/gw1.example.org@EXAMPLE.ORG", "colocd", ""},
		{"rm/rm1.example.org@EXAMPLE.ORG", "yarn", ""},
		{"Bob@PARTNER.ORG", "bob", ""},
		{"airflow/worker3@EXAMPLE.ORG", "airflow-svc", ""},
		{"eve@ELSEWHERE.ORG", "", "no rule"},
		{"not-a-principal", "", "not a principal"},
	} {
		got, err := a.Short(tc.principal)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Short(%s) = %q, %v; want an error with %q", tc.principal, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Short(%s) = %q, %v; want %q", tc.principal, got, err, tc.want)
		}
	}
	for _, bad := range []string{"RULE:[x:$1]", "RULE:[1:$1](a", "RULE:[1:$1]s/a/b", "MIT"} {
		if _, err := Parse([]string{bad}, "R"); err == nil {
			t.Errorf("rule %q accepted", bad)
		}
	}
}

func TestNoRuleIsErrNoRule(t *testing.T) {
	a, err := Parse(nil, "EXAMPLE.ORG")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Short("eve@ELSEWHERE.ORG"); !errors.Is(err, errNoRule) {
		t.Errorf("err = %v, want errNoRule (DEFAULT takes the default realm only)", err)
	}
	if _, err := Parse([]string{"RULE:[x:$1]"}, "R"); !errors.Is(err, errSyntax) {
		t.Errorf("err = %v, want errSyntax", err)
	}
}
