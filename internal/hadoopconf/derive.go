package hadoopconf

import (
	"fmt"
	"net"
	"strings"
)

// derived is a value derived from the Hadoop configuration and the
// properties it came from ("yarn-site.xml: yarn.resourcemanager.ha.rm-ids,
// yarn.resourcemanager.webapp.address.rm1, …").
type derived[T any] struct {
	Value  T
	From   []string // "file: property" each
	Exists bool
}

// Source is From as one line.
func (d derived[T]) Source() string { return "hadoop " + strings.Join(d.From, ", ") }

// nameService is one HDFS namespace's NameNode web addresses and its
// delegation token's service.
type nameService struct {
	Name    string
	URLs    []string
	Service string // "ha-hdfs:<name>" for an HA nameservice; "" for one NameNode
}

// Derivation is what a Hadoop client's configuration tells colocd.
type Derivation struct {
	// RMURLs are the ResourceManagers' web addresses (HA: in rm-ids order).
	RMURLs derived[[]string]
	// Kerberos: hadoop.security.authentication is kerberos.
	Kerberos derived[bool]
	// SPNEGOPrincipal is the RM web's SPNEGO principal
	// (yarn.resourcemanager.webapp.spnego-principal), e.g. HTTP/_HOST@REALM.
	SPNEGOPrincipal derived[string]
	// Renewer is the RM principal (yarn.resourcemanager.principal), whose
	// short name is the delegation tokens' renewer.
	Renewer derived[string]
	// AuthToLocal is hadoop.security.auth_to_local: the rules by which
	// the cluster's services map principals to users (package
	// authtolocal), one per line.
	AuthToLocal derived[string]
	// RMService is the RM token's service: each RM's RPC address,
	// comma-separated (yarn.resourcemanager.address[.id]).
	RMService derived[string]
	// NameServices are the HDFS namespaces (dfs.nameservices, or
	// fs.defaultFS's NameNode).
	NameServices derived[[]nameService]
}

// Hadoop's default ports.
const (
	rmWebHTTP  = "8088"
	rmWebHTTPS = "8090"
	rmRPC      = "8032"
	nnHTTP     = "9870"
	nnHTTPS    = "9871"
)

// from names a property as a source: "yarn-site.xml: name".
func (c *Conf) from(name string) string {
	p, ok := c.Get(name)
	if !ok {
		return ""
	}
	return shortFile(p.File) + ": " + name
}

func shortFile(path string) string {
	if i := strings.LastIndex(path, "/"); i >= 0 {
		return path[i+1:]
	}
	return path
}

// collect appends the sources of the set properties among names.
func (c *Conf) collect(out []string, names ...string) []string {
	for _, n := range names {
		if s := c.from(n); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Derive works out what c says. A property that is set but malformed is an
// error naming it.
func (c *Conf) Derive() (Derivation, error) {
	var d Derivation
	var err error
	if d.RMURLs, err = c.rmURLs(); err != nil {
		return d, err
	}
	if v := strings.ToLower(c.value("hadoop.security.authentication")); v != "" {
		d.Kerberos = derived[bool]{Value: v == "kerberos", From: c.collect(nil, "hadoop.security.authentication"), Exists: true}
	}
	if v := c.value("yarn.resourcemanager.webapp.spnego-principal"); v != "" {
		d.SPNEGOPrincipal = derived[string]{Value: v, From: c.collect(nil, "yarn.resourcemanager.webapp.spnego-principal"), Exists: true}
	}
	if v := c.value("yarn.resourcemanager.principal"); v != "" {
		d.Renewer = derived[string]{Value: v, From: c.collect(nil, "yarn.resourcemanager.principal"), Exists: true}
	}
	if v := c.value("hadoop.security.auth_to_local"); strings.TrimSpace(v) != "" {
		d.AuthToLocal = derived[string]{Value: v, From: c.collect(nil, "hadoop.security.auth_to_local"), Exists: true}
	}
	d.RMService = c.rmService()
	if d.NameServices, err = c.nameServices(); err != nil {
		return d, err
	}
	return d, nil
}

// haIDs are the RM ids with HA on, nil without.
func (c *Conf) haIDs() []string {
	if !strings.EqualFold(c.value("yarn.resourcemanager.ha.enabled"), "true") {
		return nil
	}
	var ids []string
	for _, id := range strings.Split(c.value("yarn.resourcemanager.ha.rm-ids"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// rmURLs: each RM's webapp.address (HTTP_ONLY) or webapp.https.address
// (HTTPS_ONLY), else its hostname with the default port.
func (c *Conf) rmURLs() (derived[[]string], error) {
	var out derived[[]string]
	https := strings.EqualFold(c.value("yarn.http.policy"), "HTTPS_ONLY")
	scheme, addrKey, port := "http", "yarn.resourcemanager.webapp.address", rmWebHTTP
	if https {
		scheme, addrKey, port = "https", "yarn.resourcemanager.webapp.https.address", rmWebHTTPS
	}
	out.From = c.collect(out.From, "yarn.http.policy")
	suffixes := []string{""}
	if ids := c.haIDs(); len(ids) > 0 {
		out.From = c.collect(out.From, "yarn.resourcemanager.ha.enabled", "yarn.resourcemanager.ha.rm-ids")
		suffixes = nil
		for _, id := range ids {
			suffixes = append(suffixes, "."+id)
		}
	}
	for _, sfx := range suffixes {
		addr, src := c.value(addrKey+sfx), addrKey+sfx
		if addr == "" {
			host := c.value("yarn.resourcemanager.hostname" + sfx)
			if host == "" {
				if sfx != "" {
					continue // an id with no address: Hadoop fails on it too
				}
				return derived[[]string]{}, nil // nothing set: nothing derived
			}
			addr, src = net.JoinHostPort(host, port), "yarn.resourcemanager.hostname"+sfx
		}
		host, p, err := net.SplitHostPort(addr)
		if err != nil || host == "" || host == "0.0.0.0" {
			return out, fmt.Errorf("hadoopconf: %s = %q is not host:port of a ResourceManager", src, addr)
		}
		out.Value = append(out.Value, scheme+"://"+net.JoinHostPort(host, p))
		out.From = c.collect(out.From, src)
	}
	out.Exists = len(out.Value) > 0
	return out, nil
}

// rmService is each RM's RPC address, comma-separated.
func (c *Conf) rmService() derived[string] {
	var out derived[string]
	suffixes := []string{""}
	if ids := c.haIDs(); len(ids) > 0 {
		suffixes = nil
		for _, id := range ids {
			suffixes = append(suffixes, "."+id)
		}
	}
	var addrs []string
	for _, sfx := range suffixes {
		if a := c.value("yarn.resourcemanager.address" + sfx); a != "" {
			addrs = append(addrs, a)
			out.From = c.collect(out.From, "yarn.resourcemanager.address"+sfx)
		} else if h := c.value("yarn.resourcemanager.hostname" + sfx); h != "" {
			addrs = append(addrs, net.JoinHostPort(h, rmRPC))
			out.From = c.collect(out.From, "yarn.resourcemanager.hostname"+sfx)
		}
	}
	if len(addrs) > 0 {
		out.Value, out.Exists = strings.Join(addrs, ","), true
	}
	return out
}

// nameServices: dfs.nameservices with each one's NameNodes
// (dfs.ha.namenodes.<ns>, dfs.namenode.http[s]-address.<ns>[.<nn>]), or
// fs.defaultFS's NameNode alone.
func (c *Conf) nameServices() (derived[[]nameService], error) {
	var out derived[[]nameService]
	https := strings.EqualFold(c.value("dfs.http.policy"), "HTTPS_ONLY")
	scheme, key, port := "http", "dfs.namenode.http-address", nnHTTP
	if https {
		scheme, key, port = "https", "dfs.namenode.https-address", nnHTTPS
	}
	out.From = c.collect(out.From, "dfs.http.policy")
	for _, ns := range strings.Split(c.value("dfs.nameservices"), ",") {
		if ns = strings.TrimSpace(ns); ns == "" {
			continue
		}
		out.From = c.collect(out.From, "dfs.nameservices")
		s := nameService{Name: ns}
		if nns := c.value("dfs.ha.namenodes." + ns); nns != "" {
			out.From = c.collect(out.From, "dfs.ha.namenodes."+ns)
			s.Service = "ha-hdfs:" + ns
			for _, nn := range strings.Split(nns, ",") {
				nn = strings.TrimSpace(nn)
				a := c.value(key + "." + ns + "." + nn)
				if a == "" {
					return out, fmt.Errorf("hadoopconf: %s.%s.%s is not set (NameNode %s of nameservice %s)", key, ns, nn, nn, ns)
				}
				out.From = c.collect(out.From, key+"."+ns+"."+nn)
				s.URLs = append(s.URLs, scheme+"://"+a)
			}
		} else if a := c.value(key + "." + ns); a != "" {
			out.From = c.collect(out.From, key+"."+ns)
			s.URLs = append(s.URLs, scheme+"://"+a)
		} else {
			return out, fmt.Errorf("hadoopconf: nameservice %s has neither dfs.ha.namenodes.%s nor %s.%s", ns, ns, key, ns)
		}
		out.Value = append(out.Value, s)
	}
	if len(out.Value) == 0 {
		fsURI := c.value("fs.defaultFS")
		if h, ok := strings.CutPrefix(fsURI, "hdfs://"); ok {
			h = strings.TrimRight(h, "/")
			host, _, err := net.SplitHostPort(h)
			if err != nil {
				host = h
			}
			a := c.value(key)
			src := key
			if a == "" || strings.HasPrefix(a, "0.0.0.0:") {
				a, src = net.JoinHostPort(host, port), "fs.defaultFS"
			}
			out.From = c.collect(out.From, "fs.defaultFS")
			if src != "fs.defaultFS" {
				out.From = c.collect(out.From, src)
			}
			out.Value = append(out.Value, nameService{Name: host, URLs: []string{scheme + "://" + a}})
		}
	}
	out.Exists = len(out.Value) > 0
	return out, nil
}
