// Package hadoopconf reads what a Hadoop client already knows from
// HADOOP_CONF_DIR — core-site.xml, yarn-site.xml and hdfs-site.xml — and
// derives from it what colocd would otherwise be told again: the
// ResourceManagers' web addresses (HA ids, HTTP or HTTPS by
// yarn.http.policy), the security mode and the RM's principals, and the
// NameNodes of each nameservice for delegation tokens.
//
// It owns the parsing of Hadoop's configuration format (properties with
// ${var} substitution, the last definition of a name winning, as
// org.apache.hadoop.conf.Configuration does for files loaded in order) and
// the derivation; it does no network I/O and knows nothing of colocd's
// configuration keys beyond the names of what it derives.
package hadoopconf

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// files are read in this order; a property in a later one wins, as in a
// Hadoop client that loads core-site, then yarn-site, then hdfs-site.
var files = []string{"core-site.xml", "yarn-site.xml", "hdfs-site.xml"}

// ErrNoDir is returned when the directory does not exist.
var ErrNoDir = errors.New("hadoopconf: no such directory")

// property is one property's value and the file that set it.
type property struct {
	Value string
	File  string
}

// Conf is the merged properties of a directory.
type Conf struct {
	Dir   string
	props map[string]property
	read  []string // files read, in order
}

// Read parses the files of dir that exist (none is an empty Conf); a file
// that does not parse is an error naming it.
func Read(dir string) (*Conf, error) {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoDir, dir)
		}
		return nil, fmt.Errorf("hadoopconf: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("hadoopconf: %s is not a directory", dir)
	}
	c := &Conf{Dir: dir, props: map[string]property{}}
	for _, name := range files {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("hadoopconf: %w", err)
		}
		if err := c.parse(path, b); err != nil {
			return nil, err
		}
		c.read = append(c.read, path)
	}
	return c, nil
}

// FilesRead lists the files read, in order.
func (c *Conf) FilesRead() []string { return c.read }

// parse adds the properties of one *-site.xml.
func (c *Conf) parse(path string, b []byte) error {
	var doc struct {
		Properties []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("hadoopconf: parse %s: %w", path, err)
	}
	for _, p := range doc.Properties {
		name := strings.TrimSpace(p.Name)
		if name == "" {
			continue
		}
		c.props[name] = property{Value: strings.TrimSpace(p.Value), File: path}
	}
	return nil
}

var varRef = regexp.MustCompile(`\$\{([^}$\s]+)\}`)

// Get is a property with its ${name} references substituted (up to 20
// levels, as Hadoop does), and whether it is set.
func (c *Conf) Get(name string) (property, bool) {
	p, ok := c.props[name]
	if !ok {
		return p, false
	}
	for range 20 {
		next := varRef.ReplaceAllStringFunc(p.Value, func(m string) string {
			ref := m[2 : len(m)-1]
			if r, ok := c.props[ref]; ok {
				return r.Value
			}
			if v, ok := os.LookupEnv(strings.TrimPrefix(ref, "env.")); ok && strings.HasPrefix(ref, "env.") {
				return v
			}
			return m
		})
		if next == p.Value {
			break
		}
		p.Value = next
	}
	return p, true
}

// value is Get's value, "" when unset.
func (c *Conf) value(name string) string {
	p, _ := c.Get(name)
	return p.Value
}
