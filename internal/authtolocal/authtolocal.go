// Package authtolocal maps Kerberos principals to short user names by
// rules in the shape of Hadoop's hadoop.security.auth_to_local
// (org.apache.hadoop.security.authentication.util.KerberosName): the API's
// callers (api.kerberos.auth_to_local) and colocd's own principal, the
// name the RM gives its applications (the cluster's core-site.xml).
package authtolocal

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// errNoRule is wrapped by Rules.Short's error for a principal that no
// rule maps to a short name (Hadoop: "No rules applied to ...").
var errNoRule = errors.New("no auth_to_local rule applies")

// errSyntax is wrapped by Parse's error for a rule it cannot read.
var errSyntax = errors.New("auth_to_local: bad rule")

// Rules maps Kerberos principals to short user names with rules in
// the shape of Hadoop's hadoop.security.auth_to_local
// (org.apache.hadoop.security.authentication.util.KerberosName), tried in
// order, the first that applies wins:
//
//	DEFAULT                                  name@REALM or name/host@REALM of the
//	                                         default realm → name
//	RULE:[n:format](regex)s/from/to/[g][/L]  for principals of n components:
//	                                         format ($0 the realm, $1… the
//	                                         components) must match regex whole;
//	                                         then sed's substitution (Java's regex
//	                                         dialect: $1 in "to" is a group), /L
//	                                         lower-cases the result
//
// As with Hadoop's "hadoop" mechanism, a result holding "@" or "/" is an
// error rather than a user.
type Rules struct {
	rules []a2lRule
	realm string // DEFAULT's realm
}

type a2lRule struct {
	text   string
	isDef  bool
	n      int
	format string
	match  *regexp.Regexp // nil: every formatted name
	from   *regexp.Regexp // nil: no substitution
	to     string
	global bool
	lower  bool
}

// Parse parses rules (one per element; an element may also hold several,
// separated by white space, as Hadoop's property does) for a service
// whose default realm is realm. No rule at all means DEFAULT.
func Parse(rules []string, realm string) (*Rules, error) {
	a := &Rules{realm: realm}
	for i, r := range rules {
		for line := range strings.FieldsSeq(r) {
			rule, err := parseA2LRule(line)
			if err != nil {
				return nil, fmt.Errorf("%w: [%d] %q: %v", errSyntax, i, line, err)
			}
			a.rules = append(a.rules, rule)
		}
	}
	if len(a.rules) == 0 {
		a.rules = []a2lRule{{text: "DEFAULT", isDef: true}}
	}
	return a, nil
}

var a2lHead = regexp.MustCompile(`^RULE:\[(\d+):([^\]]*)\](?:\(([^)]*)\))?(.*)$`)

func parseA2LRule(s string) (a2lRule, error) {
	if s == "DEFAULT" {
		return a2lRule{text: s, isDef: true}, nil
	}
	m := a2lHead.FindStringSubmatch(s)
	if m == nil {
		return a2lRule{}, errors.New("want DEFAULT or RULE:[n:format](regex)s/from/to/[g][/L]")
	}
	r := a2lRule{text: s, format: m[2]}
	var err error
	if r.n, err = strconv.Atoi(m[1]); err != nil || r.n < 1 {
		return r, fmt.Errorf("component count %q is not a positive integer", m[1])
	}
	if m[3] != "" {
		if r.match, err = regexp.Compile("^(?:" + m[3] + ")$"); err != nil {
			return r, fmt.Errorf("regex: %v", err)
		}
	}
	// Hadoop's tail: (s/from/to/(g)?)?/?(L)?
	rest := m[4]
	if strings.HasSuffix(rest, "L") {
		r.lower, rest = true, strings.TrimSuffix(rest, "L")
	}
	if rest == "" || rest == "/" {
		return r, nil
	}
	if !strings.HasPrefix(rest, "s/") {
		return r, fmt.Errorf("%q is not s/from/to/[g]", rest)
	}
	parts := strings.Split(rest[2:], "/")
	if len(parts) == 4 && parts[3] == "" && r.lower {
		parts = parts[:3]
	}
	if len(parts) != 3 || (parts[2] != "" && parts[2] != "g") {
		return r, fmt.Errorf("%q is not s/from/to/[g]", rest)
	}
	if r.from, err = regexp.Compile(parts[0]); err != nil {
		return r, fmt.Errorf("substitution: %v", err)
	}
	r.to, r.global = javaReplacement(parts[1]), parts[2] == "g"
	return r, nil
}

// javaReplacement turns Java's "$1" group references into Go's "${1}".
var javaGroup = regexp.MustCompile(`\$(\d+)`)

func javaReplacement(s string) string { return javaGroup.ReplaceAllString(s, "$${$1}") }

// InRealm is the same rules with realm as DEFAULT's realm.
func (a *Rules) InRealm(realm string) *Rules {
	c := *a
	c.realm = realm
	return &c
}

// Short maps principal (name[/instance]@REALM) to a short user name.
func (a *Rules) Short(principal string) (string, error) {
	name, realm, ok := strings.Cut(principal, "@")
	if !ok || name == "" || realm == "" {
		return "", fmt.Errorf("%w: %q is not a principal (name[/instance]@REALM)", errNoRule, principal)
	}
	comps := strings.Split(name, "/")
	for _, r := range a.rules {
		user, ok := r.apply(comps, realm, a.realm)
		if !ok {
			continue
		}
		if user == "" || strings.ContainsAny(user, "@/") {
			return "", fmt.Errorf("%w: rule %s maps %s to %q, not a user name", errNoRule, r.text, principal, user)
		}
		return user, nil
	}
	return "", fmt.Errorf("%w: no rule maps %s to a user", errNoRule, principal)
}

func (r a2lRule) apply(comps []string, realm, defRealm string) (string, bool) {
	if r.isDef {
		if realm != defRealm {
			return "", false
		}
		return comps[0], true
	}
	if len(comps) != r.n {
		return "", false
	}
	s := expandFormat(r.format, comps, realm)
	if r.match != nil && !r.match.MatchString(s) {
		return "", false
	}
	if r.from != nil {
		if r.global {
			s = r.from.ReplaceAllString(s, r.to)
		} else if loc := r.from.FindStringSubmatchIndex(s); loc != nil {
			s = s[:loc[0]] + string(r.from.ExpandString(nil, r.to, s, loc)) + s[loc[1]:]
		}
	}
	if r.lower {
		s = strings.ToLower(s)
	}
	return s, true
}

// expandFormat fills $0 (the realm) and $1… (the components) into format.
func expandFormat(format string, comps []string, realm string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '$' || i+1 >= len(format) || format[i+1] < '0' || format[i+1] > '9' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(format[i+1 : j])
		switch {
		case n == 0:
			b.WriteString(realm)
		case n <= len(comps):
			b.WriteString(comps[n-1])
		}
		i = j - 1
	}
	return b.String()
}
