package api

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os/user"
	"slices"
	"strings"
	"sync"
	"time"
)

// ACL is a Hadoop access control list (yarn.admin.acl's shape): "*" for
// everyone, else "user1,user2 group1,group2" — users, a space, groups,
// either list may be empty (" etl" is the group etl only); "" or " "
// is nobody.
type ACL struct {
	All    bool
	Users  []string
	Groups []string
}

// ParseACL parses Hadoop's ACL shape.
func ParseACL(s string) (ACL, error) {
	if strings.TrimSpace(s) == "*" {
		return ACL{All: true}, nil
	}
	users, groups, _ := strings.Cut(strings.TrimLeft(s, "\t"), " ")
	var a ACL
	for _, l := range []struct {
		to   *[]string
		text string
	}{{&a.Users, users}, {&a.Groups, groups}} {
		for item := range strings.SplitSeq(strings.TrimSpace(l.text), ",") {
			item = strings.TrimSpace(item)
			switch {
			case item == "":
			case item == "*":
				return ACL{}, fmt.Errorf(`"*" is the whole list or nothing (got %q)`, s)
			case strings.ContainsAny(item, " \t"):
				return ACL{}, fmt.Errorf("%q: want \"users groups\": one space between the lists, commas inside them", s)
			default:
				*l.to = append(*l.to, item)
			}
		}
	}
	return a, nil
}

// Allows reports whether user, a member of groups, is on the list.
func (a ACL) Allows(user string, groups []string) bool {
	if a.All {
		return true
	}
	if slices.Contains(a.Users, user) {
		return true
	}
	for _, g := range groups {
		if slices.Contains(a.Groups, g) {
			return true
		}
	}
	return false
}

// String is the ACL in Hadoop's shape.
func (a ACL) String() string {
	if a.All {
		return "*"
	}
	return strings.Join(a.Users, ",") + " " + strings.Join(a.Groups, ",")
}

// ACLs grant the roles to the users that Kerberos or a client certificate
// authenticated (a token carries its own role): each user gets the
// strongest role whose list names them or one of their groups.
type ACLs struct {
	Reader, Submitter, Admin ACL
}

// DefaultACLs let every authenticated user read the queue and submit
// jobs as themselves, and nobody administer it.
func DefaultACLs() ACLs { return ACLs{Reader: ACL{All: true}, Submitter: ACL{All: true}} }

// role is the strongest role the lists grant, and the rule that grants it
// ("api.acl.admin"); 0 and "" when none does.
func (a ACLs) role(user string, groups []string) (Role, string) {
	switch {
	case a.Admin.Allows(user, groups):
		return RoleAdmin, "api.acl.admin"
	case a.Submitter.Allows(user, groups):
		return RoleSubmitter, "api.acl.submitter"
	case a.Reader.Allows(user, groups):
		return RoleReader, "api.acl.reader"
	}
	return 0, ""
}

// ProxyRule lets User act for other users, in the shape of Hadoop's
// hadoop.proxyuser.<user>.users, .groups and .hosts: for any user Users
// names or any member of a group Groups names ("*" in either: anyone),
// from a client address Hosts names ("*", an address or a CIDR prefix).
// An empty Hosts is no host: the rule allows nothing.
type ProxyRule struct {
	User   string
	Users  []string
	Groups []string
	Hosts  []string
	// Name names the rule in refusals and the audit log
	// ("api.proxy_users[0]"); "" is filled by New.
	Name string

	prefixes []netip.Prefix
	anyHost  bool
}

// CheckProxyRule checks r's user and hosts as New does.
func CheckProxyRule(r *ProxyRule) error { return r.compile() }

func (p *ProxyRule) compile() error {
	if p.User == "" || strings.ContainsAny(p.User, " \t@/") {
		return fmt.Errorf("user %q is not a user name", p.User)
	}
	p.prefixes, p.anyHost = nil, false
	for _, h := range p.Hosts {
		h = strings.TrimSpace(h)
		if h == "*" {
			p.anyHost = true
			continue
		}
		if pf, err := netip.ParsePrefix(h); err == nil {
			p.prefixes = append(p.prefixes, pf.Masked())
			continue
		}
		a, err := netip.ParseAddr(h)
		if err != nil {
			return fmt.Errorf("hosts: %q is not *, an IP address or a CIDR prefix (host names are not resolved)", h)
		}
		p.prefixes = append(p.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return nil
}

// allows reports whether the rule lets its user act for user (a member
// of groups) from addr, and when it does not, why.
func (p *ProxyRule) allows(user string, groups []string, addr netip.Addr) (bool, string) {
	host := p.anyHost
	for _, pf := range p.prefixes {
		host = host || pf.Contains(addr.Unmap())
	}
	if !host {
		return false, fmt.Sprintf("%s does not allow the client address %s (hosts %s)", p.Name, addr, listOrNone(p.Hosts))
	}
	if slices.Contains(p.Users, "*") || slices.Contains(p.Users, user) || slices.Contains(p.Groups, "*") {
		return true, ""
	}
	for _, g := range groups {
		if slices.Contains(p.Groups, g) {
			return true, ""
		}
	}
	return false, fmt.Sprintf("%s does not name user %s or any of its groups (users %s; groups %s)", p.Name, user,
		listOrNone(p.Users), listOrNone(p.Groups))
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ",")
}

// groupSource names the groups of a user.
type groupSource interface {
	Groups(user string) []string
}

// fileGroups are groups read from a file of lines "group: user1,user2"
// ("#" starts a comment).
type fileGroups map[string][]string // user → groups, sorted

// ParseGroupsFile reads fileGroups.
func ParseGroupsFile(r io.Reader) (fileGroups, error) {
	out := fileGroups{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		g, members, ok := strings.Cut(line, ":")
		g = strings.TrimSpace(g)
		if !ok || g == "" || strings.ContainsAny(g, " \t,") {
			return nil, fmt.Errorf("line %d: want \"group: user1,user2\", got %q", n, line)
		}
		for u := range strings.SplitSeq(members, ",") {
			if u = strings.TrimSpace(u); u != "" && !slices.Contains(out[u], g) {
				out[u] = append(out[u], g)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, gs := range out {
		slices.Sort(gs)
	}
	return out, nil
}

// Groups are the user's groups in the file.
func (f fileGroups) Groups(user string) []string { return f[user] }

// HostGroups are the groups the host gives a user (os/user: /etc/group,
// or NSS with cgo), cached for TTL as Hadoop caches them
// (hadoop.security.groups.cache.secs, 300 s). A user the host does not
// know has none.
type HostGroups struct {
	TTL time.Duration    // 0: 5 minutes
	Now func() time.Time // nil: time.Now

	mu    sync.Mutex
	cache map[string]hostGroupsEntry
}

type hostGroupsEntry struct {
	groups []string
	at     time.Time
}

// maxHostGroupsCache bounds the cache: unknown users are cached too.
const maxHostGroupsCache = 10000

// Groups are user's groups on this host, by name.
func (h *HostGroups) Groups(name string) []string {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	ttl := h.TTL
	if ttl == 0 {
		ttl = 5 * time.Minute
	}
	t := now()
	h.mu.Lock()
	if e, ok := h.cache[name]; ok && t.Sub(e.at) < ttl {
		h.mu.Unlock()
		return e.groups
	}
	h.mu.Unlock()
	var groups []string
	if u, err := user.Lookup(name); err == nil {
		ids, _ := u.GroupIds()
		for _, id := range ids {
			if g, err := user.LookupGroupId(id); err == nil {
				groups = append(groups, g.Name)
			}
		}
	}
	slices.Sort(groups)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cache == nil || len(h.cache) >= maxHostGroupsCache {
		h.cache = map[string]hostGroupsEntry{}
	}
	h.cache[name] = hostGroupsEntry{groups: groups, at: t}
	return groups
}

// Groups joins group sources: a user's groups are those of every source.
type Groups []groupSource

// Groups are the user's groups in every source, sorted, once each.
func (gs Groups) Groups(user string) []string {
	var out []string
	for _, g := range gs {
		for _, name := range g.Groups(user) {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}
